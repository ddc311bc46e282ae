"""The test of the design: a fourth kind (``tests/support/token_window.py``, one module) registered with one line
gets its turn and fold lines, a chart, saved states, ``forget()`` and an attack-table row, and adding it changes
no stored output of the notebooks that show every kind's results (06, 07)."""
from __future__ import annotations

import configparser
import re

import nbclient
import nbformat
import pytest

from helpers.base.paths import REPO_ROOT
from helpers.display.lines import turn_text
from helpers.display.plots import request_chart
from helpers.measure.attacks import DEFENCE_SETTINGS, attack_rates, payload, run_attacks
from helpers.memory.defences import Defences
from helpers.memory.erasure import forget
from helpers.memory.registry import KINDS, registered
from helpers.memory.state import load, save, to_dict
from helpers.model.chat import chat
from helpers.model.summarisers import summariser_for
from helpers.setup.notebook_runner import joined_streams
from tests.support.token_window import TokenWindowMemory

SYSTEM = "You are FinCoach, a personal finance assistant."
TURNS = ["Hi! I'm Chiru. My monthly take-home salary is ₹1,20,000.", "My rent is ₹25,000.", "I am risk-averse.",
         "What is my monthly take-home salary?"]
LONG = "Here is my whole statement: " + "salary credited, rent paid, SIP debited; " * 60


@pytest.fixture
def window():
    with registered(TokenWindowMemory) as cls:
        yield cls
    assert "token window" not in KINDS


def test_its_turn_and_fold_lines_and_its_over_budget_state(window, offline_access):
    memory = window(SYSTEM, max_window_tokens=120)
    records = [chat(memory, text, offline_access) for text in [*TURNS, LONG, "And now?"]]
    text = "\n".join(turn_text(record) for record in records)
    assert re.search(r"\[Turn 1\] prompt_tokens: \d+ \| window: \d+/120 tokens in 1 messages \| trims: 0", text)
    assert re.search(r"  \[TRIM\] 2 messages \(\d+ tokens\) left the window", text)
    long_turn = records[len(TURNS)]
    assert long_turn.snapshot.over_budget and "OVER BUDGET: one turn alone is larger than the window" in text
    assert all(r.snapshot.verbatim_tokens <= 120 for r in records if not r.snapshot.over_budget)
    assert memory.summary is None and memory.verbatim_tokens <= 120 or memory.verbatim_messages <= 3


def test_a_chart_of_its_requests_uses_its_labels(window, offline_access):
    memory = window(SYSTEM, max_window_tokens=120)
    records = [chat(memory, text, offline_access) for text in TURNS]
    legend = [t.get_text() for t in request_chart(records, "token window").legends[0].get_texts()]
    assert any(label.startswith("window") for label in legend) and any("budget 120" in label for label in legend)


def test_it_saves_loads_and_forgets(window, tmp_path):
    memory = window(SYSTEM, max_window_tokens=60, defences=Defences(placement="data"))
    for turn, text in enumerate(TURNS, start=1):
        memory.add_message("user", text)
        memory.add_message("assistant", f"Noted, turn {turn}.")
    assert memory.summary_count > 0
    loaded = load(save(memory, tmp_path / "window.json"), None, defences=memory.defences)
    assert type(loaded) is window and to_dict(loaded) == to_dict(memory)
    assert loaded.get_messages_for_api() == memory.get_messages_for_api()
    report = forget(loaded, "risk-averse", progress=None)
    assert report.messages_removed == 2 and not report.summary_remade
    assert not any("risk-averse" in m["content"] for m in loaded.archive + loaded.get_messages_for_api())


def test_it_gets_an_attack_table_row_when_named(window, offline_access):
    runs = run_attacks(lambda kind, hardened: summariser_for(offline_access, kind, hardened), SYSTEM,
                       kinds=["summary memory", "token window"], corpus_payloads=[payload("auth-01")],
                       settings=DEFENCE_SETTINGS[:2])
    rows = {(r.setting, r.memory): (r.reached_system, r.in_summary) for r in attack_rates(runs)}
    assert rows[("lessons' design", "token window")] == (0, 0)  # a window keeps no summary to launder
    assert rows[("lessons' design", "summary memory")] == (1, 1)


# ----- adding the kind changes no stored lesson output ---------------------------------------------------------
def _sanitizers() -> list[tuple[re.Pattern[str], str]]:
    config = configparser.ConfigParser()
    config.read(REPO_ROOT / "notebooks" / "sanitize.cfg")
    return [(re.compile(config[s]["regex"]), config[s]["replace"]) for s in config.sections()]


def _texts(cell: nbformat.NotebookNode) -> list[str]:
    """A code cell's outputs as nbval compares them (text only; images and widget views are not compared)."""
    texts = []
    for output in cell.get("outputs", []):
        if output["output_type"] == "stream":
            texts.append(f"{output['name']}: {output['text']}")
        elif output["output_type"] == "error":
            texts.append(f"error: {output['ename']}")
        else:
            texts.append(output.get("data", {}).get("text/plain", ""))
    text = "\n".join(texts)
    for pattern, replacement in _sanitizers():
        text = pattern.sub(replacement, text)
    return [text]


REGISTER = ("import sys\nsys.path.insert(0, {root!r})\nfrom helpers.memory.registry import register\n"
            "from tests.support.token_window import TokenWindowMemory\n_ = register(TokenWindowMemory)")


@pytest.mark.parametrize("name", ["06_summary_memory_attack_surface", "07_strategies_side_by_side"])
def test_registering_a_fourth_kind_changes_no_stored_output_of_the_notebooks(name):
    path = REPO_ROOT / "notebooks" / f"{name}.ipynb"
    stored = nbformat.read(path, as_version=4)
    book = nbformat.read(path, as_version=4)
    book.cells.insert(0, nbformat.v4.new_code_cell(REGISTER.format(root=str(REPO_ROOT))))
    nbclient.NotebookClient(book, timeout=900, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    ran = joined_streams(book).cells[1:]
    assert not book.cells[0].get("outputs")
    for index, (before, after) in enumerate(zip(stored.cells, ran)):
        if before.cell_type != "code" or {"nbval-ignore-output", "nbval-skip"} & set(before.metadata.get("tags", [])):
            continue
        assert _texts(after) == _texts(before), f"{name}, code cell {index}: {before.source[:80]!r}"
