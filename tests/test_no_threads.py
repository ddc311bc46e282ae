"""The browser's Python (JupyterLite's Pyodide) cannot start a thread. With ``threading.Thread.start`` raising as it
does there, every exercise check says correct for the worked solution and "not yet" for a wrong answer and for a
loop that never ends, each within 10 CPU seconds (wall time is the machine's load); and notebooks 01 and 02 run
every code cell in-process (nbval executes each notebook in a kernel already), their exercise stubs replaced by the
worked solutions."""
from __future__ import annotations

import contextlib
import io
import re
import threading
import time
from unittest import mock

import nbformat
import pytest

from helpers.grading import EXERCISES, runner
from helpers.grading.calls import grade_calls_formula
from helpers.grading.capstone import judge_cheapest
from helpers.grading.overflows import grade_overflows_at
from helpers.grading.rule_check import grade_rule_check
from helpers.grading.summary_cap import grade_summary_cap
from helpers.grading.window import grade_window_memory
from tests.notebook_core_support import NOTEBOOKS


@pytest.fixture(autouse=True)
def no_threads(monkeypatch):
    def refuse(self):
        raise RuntimeError("can't start new thread")
    monkeypatch.setattr(threading.Thread, "start", refuse)


def run(sources: list[str], namespace: dict) -> dict:
    """Exec each cell's source in ``namespace``, as a kernel would (what the cells print is swallowed)."""
    for source in sources:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(source, "<cell>", "exec"), namespace)
    return namespace


def defines(source: str, name: str) -> bool:
    return bool(re.search(rf"^(def|class) {name}\b|^{name} =", source, re.M))


def solutions() -> dict[str, tuple[list[str], str]]:
    """Each answer's name -> (the solutions notebook's cells before its answer cell, the answer cell)."""
    found = {}
    for path in sorted((NOTEBOOKS / "solutions").glob("*.ipynb")):
        cells = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
        for _, _, name, _ in EXERCISES:
            if (i := next((i for i, c in enumerate(cells) if defines(c, name)), None)) is not None:
                before = [c for c in cells[:i] if "verdict" not in c]
                found[name] = (before, re.sub(r"^verdict.*$", "", cells[i], flags=re.M))
    return found


LOOPS = {"predicted_calls": "def predicted_calls(t, n, k):\n    while True: pass",
         "rule_kept": "def rule_kept(summary):\n    while summary: pass",
         "overflows_at": "def overflows_at(sizes, budget, m=4):\n    while sizes: pass",
         "cap_summary": "def cap_summary(summary, summarise, cap):\n    while True:\n        pass",
         "WindowMemory": "class WindowMemory(SummaryMemory):\n    def add_message(self, role, content):\n"
                         "        while True: pass"}
WRONG = {"predicted_calls": "def predicted_calls(t, n, k):\n    return t // n",
         "rule_kept": "def rule_kept(summary):\n    return 'equit' in summary.lower()",
         "overflows_at": "def overflows_at(sizes, budget, m=4):\n    return [6, 8, 10]",
         "cap_summary": "def cap_summary(summary, summarise, cap):\n    return summary.strip()",
         "WindowMemory": "class WindowMemory(SummaryMemory):\n    add_message = SummaryMemory.add_message",
         "CHOICE": "CHOICE = ['sliding window', {'window_turns': 8}]"}
GRADES = {"predicted_calls": grade_calls_formula, "WindowMemory": grade_window_memory, "rule_kept": grade_rule_check,
          "overflows_at": grade_overflows_at, "cap_summary": grade_summary_cap}


@pytest.mark.parametrize("name", [name for _, _, name, _ in EXERCISES])
def test_every_check_works_without_threads(name):
    before, answer = solutions()[name]
    namespace = run(before, {})
    grade = GRADES.get(name) or (lambda choice: judge_cheapest(choice, *(namespace[n] for n in ("make", "transcript",
                                                                                               "ledger"))))
    for source, status in ((answer, "correct"), (WRONG[name], "not yet"), (LOOPS.get(name), "not yet")):
        if source:  # 7.1's answer is a setting: no code of the student's runs
            started, answer = time.process_time(), run([source], namespace)[name]  # CPU: wall time is the load's
            with mock.patch.object(runner, "SECONDS", 2.0 if status == "correct" else 0.2):  # a cheaper loop
                verdict = grade(answer)
            assert verdict.status == status and time.process_time() - started < 10, (source, verdict)


@pytest.mark.parametrize("notebook", ["01_summary_schedule", "02_summary_memory_run"])
def test_notebooks_01_and_02_run_without_threads(notebook):
    cells = [c.source for c in nbformat.read(NOTEBOOKS / f"{notebook}.ipynb", as_version=4).cells
             if c.cell_type == "code"]
    answers = {name: source for name, (_, source) in solutions().items()}
    stubs = [i for i, cell in enumerate(cells) for name in answers if defines(cell, name)]
    assert len(stubs) == 1, "one exercise stub per notebook"
    cells[stubs[0]] = next(answers[name] for name in answers if defines(cells[stubs[0]], name))
    namespace = run(cells, {"__name__": "__main__"})
    assert namespace["verdict"].status == "correct", namespace["verdict"]
