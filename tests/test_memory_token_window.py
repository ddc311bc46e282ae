"""The test of the design: a fourth kind (``tests/support/token_window.py``, one module) registered with one line gets
its turn and fold lines, a chart, saved states, ``forget()`` and an attack-table row, and registering it changes
nothing that notebooks 06 and 07 ask of the registry (so no stored output of theirs; nbval runs the notebooks)."""
from __future__ import annotations

import re

import pytest

from helpers.display.lines import turn_text
from helpers.display.plots import request_chart
from helpers.measure import LESSON_KINDS
from helpers.measure.attacks import DEFENCE_SETTINGS, attack_rates, ordinary_run, payload, run_attacks
from helpers.measure.transcript import load_transcript, strategies
from helpers.memory.defences import Defences
from helpers.memory.erasure import forget
from helpers.memory.registry import KINDS, headings, registered
from helpers.memory.state import load, save, to_dict
from helpers.model.chat import chat
from helpers.model.summarisers import summariser_for
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


def test_its_lines_chart_and_over_budget_state(window, offline_access):
    memory = window(SYSTEM, max_window_tokens=120)
    records = [chat(memory, text, offline_access) for text in [*TURNS, LONG, "And now?"]]
    text = "\n".join(turn_text(record) for record in records)
    assert re.search(r"\[Turn 1\] prompt_tokens: \d+ \| window: \d+/120 tokens in 1 messages \| trims: 0", text)
    assert re.search(r"  \[TRIM\] 2 messages \(\d+ tokens\) left the window", text)
    assert records[len(TURNS)].snapshot.over_budget and "OVER BUDGET: one turn alone is larger than the window" in text
    assert all(r.snapshot.verbatim_tokens <= 120 for r in records if not r.snapshot.over_budget)
    legend = [t.get_text() for t in request_chart(records[:4], "token window").legends[0].get_texts()]
    assert any(label.startswith("window") for label in legend) and any("budget 120" in label for label in legend)


def test_it_saves_loads_forgets_and_gets_an_attack_table_row_when_named(window, offline_access, tmp_path):
    memory = window(SYSTEM, max_window_tokens=60, defences=Defences(placement="data"))
    for turn, text in enumerate(TURNS, start=1):
        memory.add_message("user", text)
        memory.add_message("assistant", f"Noted, turn {turn}.")
    loaded = load(save(memory, tmp_path / "window.json"), None, defences=memory.defences)
    assert memory.summary_count > 0 and type(loaded) is window and to_dict(loaded) == to_dict(memory)
    assert loaded.get_messages_for_api() == memory.get_messages_for_api()
    report = forget(loaded, "risk-averse", progress=None)
    assert report.messages_removed == 2 and not report.summary_remade
    assert not any("risk-averse" in m["content"] for m in loaded.archive + loaded.get_messages_for_api())
    runs = run_attacks(lambda kind, hardened: summariser_for(offline_access, kind, hardened), SYSTEM,
                       kinds=["summary memory", "token window"], corpus_payloads=[payload("auth-01")],
                       settings=DEFENCE_SETTINGS[:1])
    rows = {r.memory: (r.reached_system, r.in_summary) for r in attack_rates(runs)}
    assert rows == {"summary memory": (1, 1), "token window": (0, 0)}  # a window keeps no summary to launder


def test_registering_it_changes_nothing_notebooks_06_and_07_ask_of_the_registry(offline_access):
    summariser_of = lambda kind, hardened: summariser_for(offline_access, kind, hardened)  # noqa: E731

    def asked() -> tuple:  # 06's attack table, check measure (by the headings) and ordinary run; 07's strategies
        # (07's exercise search tries the lesson kinds by name)
        transcript = load_transcript()
        runs = run_attacks(summariser_of, SYSTEM, kinds=LESSON_KINDS[:2], corpus_payloads=[payload("deli-04")],
                           settings=DEFENCE_SETTINGS[:2])
        return (strategies(transcript), headings(), attack_rates(runs),
                ordinary_run(summariser_for(offline_access, "summary memory"), turns=6))

    before = asked()
    with registered(TokenWindowMemory):
        assert asked() == before
