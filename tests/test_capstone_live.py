"""Notebook 07 as Run All runs it, live against the loopback OpenAI-compatible server (which serves the stand-in)
with a small server's 4,096-token context: its code cells run in this process, not in a kernel (nbval executes
the notebook once per run, offline), and the server counts the model calls it receives."""
from __future__ import annotations

import json
import re

import pytest

from helpers.base.paths import NOTEBOOKS_DIR
from helpers.base.tokens import count_tokens
from tests.support.loopback import KEY

NOTEBOOK = NOTEBOOKS_DIR / "07_strategies_side_by_side.ipynb"
pytestmark = pytest.mark.usefixtures("model_env")


def code_cells() -> list[str]:
    return ["".join(cell["source"]) for cell in json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
            if cell["cell_type"] == "code"]


def test_run_all_live_says_its_calls_first_makes_at_most_80_and_none_over_a_small_context(server, monkeypatch, capsys):
    server.context_tokens = 4096  # a larger request is refused, as llama-cpp-python's server at --n_ctx 4096 does
    for name, value in {"LLM_MODE": "live", "LLM_BASE_URL": server.base_url, "LLM_API_KEY": KEY,
                        "LLM_MODEL": "stand-in"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr("helpers.display.widgets.png_bytes", lambda fig, dpi=72: b"")  # no frontend shows the slider panel here
    namespace: dict = {"display": lambda *args, **kwargs: None}
    for index, source in enumerate(code_cells()):
        calls_before = len(server.model_calls)
        exec(compile(source, f"{NOTEBOOK.name}, code cell {index}", "exec"), namespace)  # an error fails the test
        if "call_plan(" in source:
            assert calls_before == 0 and len(server.model_calls) == 0, "the plan is printed before any model call"
    printed = capsys.readouterr().out
    planned = int(re.search(r"Run All makes (\d+) calls", printed).group(1))
    assert len(server.model_calls) == planned <= 80
    sizes = [sum(count_tokens(m["content"]) for m in r["body"]["messages"]) + r["body"].get("max_tokens", 0)
             for r in server.chat_requests]
    assert max(sizes) <= 4096
    graded = re.findall(r"^(.+) at turn \d+: \{'name'", printed, re.MULTILINE)
    assert len(graded) == 9 and "full buffer" not in graded  # its probes do not fit: its bill is counted, not sent
    runs = namespace["runs"]
    assert sum(run.bill.summariser_calls for run in runs.values()) == planned - len(graded)
    assert not [turn.notes for run in runs.values() for turn in run.turns if turn.notes]  # no fold was refused


def test_offline_the_stored_run_compares_four_strategies_on_tokens_calls_and_facts_kept():
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]  # nbval checks a fresh run prints the same
    table = next("".join(output["text"]) for cell in cells if "comparison_table(runs)" in "".join(cell["source"])
                 for output in cell["outputs"])
    header, *rows = table.strip().splitlines()
    assert re.search(r"requests +calls .* total .* facts kept", header)
    assert [re.split(r" \(|  ", row)[0] for row in rows] == ["full buffer", "summary memory", "summary buffer memory",
                                                             "sliding window"]
    assert all(re.search(r"[1-9]\d{0,2},\d{3} .* \d+/14 ", row) for row in rows)
