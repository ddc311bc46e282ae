"""Every "try it" of lesson 3's page and of notebooks 01 to 03, done as a student does it: the cell is edited as
the suggestion says, the whole notebook runs (offline) from the top, the described result appears, and every
cell after the edit still runs."""
from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import nbformat

from helpers.base.paths import NOTEBOOKS_DIR
from helpers.setup.notebook_runner import execute_notebook
from tests.support.notebook_text import cell_text
from tests.test_drift import notebook_drift


def edited_run(tmp_path: Path, notebook: str, locate: str, old: str | None, new: str) -> list[str]:
    """Run ``notebook`` with one edit in the code cell whose source holds ``locate``: ``old`` (which must occur
    there once) replaced by ``new``, or, with ``old`` None, ``new`` added at the end of the cell. Returns every
    code cell's text output; fails if a cell raised."""
    book = nbformat.read(NOTEBOOKS_DIR / notebook, as_version=4)
    cells = [cell for cell in book.cells if cell.cell_type == "code" and locate in cell.source]
    assert len(cells) == 1, f"{notebook}: {len(cells)} code cells hold {locate!r}"
    cell = cells[0]
    if old is None:
        cell.source = cell.source.rstrip("\n") + "\n" + new
    else:
        assert cell.source.count(old) == 1, f"{notebook}: the suggestion's text {old!r} is not in the cell once"
        cell.source = cell.source.replace(old, new)
    path = tmp_path / notebook
    nbformat.write(book, path)
    ran = execute_notebook(path, timeout=120)  # raises CellExecutionError if any cell fails
    return [cell_text(cell) for cell in ran.cells if cell.cell_type == "code"]


def output_of(outputs: list[str], text: str) -> str:
    found = [out for out in outputs if text in out]
    assert found, f"no cell printed {text!r}"
    return found[0]


def test_01_the_lessons_try_it_six_and_two(tmp_path):
    """Lesson page: "change the second call to max_turns_before_summary=6, turns_to_keep_verbatim=2: the summariser
    is called 2 times in 10 turns, and the request of turn 10 holds six verbatim turns"."""
    outputs = edited_run(tmp_path, "01_summary_schedule.ipynb", "turns_to_keep_verbatim=3)",
                         "max_turns_before_summary=4, turns_to_keep_verbatim=3",
                         "max_turns_before_summary=6, turns_to_keep_verbatim=2")
    printed = output_of(outputs, "Summarise after 6 turns, keep 2 verbatim:").splitlines()
    assert printed[-1] == " summariser calls in 10 turns: 2"
    turn_10 = re.search(r"verbatim turns \[(.*)\]", printed[-2]).group(1)
    assert printed[-2].startswith(" turn 10 request") and len(turn_10.split(",")) == 6


def test_02_the_lessons_try_it_archive_length(tmp_path):
    """Lesson page: "add print(len(summary_memory.archive)) at the end: it prints 12"."""
    outputs = edited_run(tmp_path, "02_summary_memory_run.ipynb", "summary_memory = SummaryMemory(", None,
                         "print(len(summary_memory.archive))")
    assert output_of(outputs, "Summary after turn 6:").splitlines()[-1] == "12"


def turn_lines(outputs: list[str]) -> list[str]:
    run = output_of(outputs, "Summary after turn 6:")
    return [line for line in run.splitlines() if line.startswith(("[Turn", "  [SUMMARISE]", "FinCoach, turn 6"))]


def test_02_folding_with_greater_than(tmp_path):
    """Notebook 02: with `>` the first fold comes after turn 5 and turn 6 is answered from a summary of turns 1-3."""
    outputs = edited_run(tmp_path, "02_summary_memory_run.ipynb", "class SummaryMemory:",
                         "len(self.recent_turns) // 2 >= self.max_turns_before_summary",
                         "len(self.recent_turns) // 2 > self.max_turns_before_summary")
    lines = turn_lines(outputs)
    assert [line[:10] for line in lines[:7]] == ["[Turn 1] m", "[Turn 2] m", "[Turn 3] m", "[Turn 4] m",
                                                 "[Turn 5] m", "  [SUMMARI", "[Turn 6] m"]
    assert lines[5].startswith("  [SUMMARISE] 6 messages")  # turns 1 to 3
    assert "summary sent: True | salary in a verbatim turn: False" in lines[6]
    assert "From the summary" in lines[-1] and "1,20,000" in lines[-1]
    assert "EXISTING SUMMARY" not in output_of(outputs, "the summariser prompt, shown above")  # the only fold


def test_02_six_and_two(tmp_path):
    """Notebook 02: with 6/2 nothing is folded before the reply to turn 6, which finds the salary verbatim."""
    outputs = edited_run(tmp_path, "02_summary_memory_run.ipynb", "summary_memory = SummaryMemory(",
                         "max_turns_before_summary=4, turns_to_keep_verbatim=2",
                         "max_turns_before_summary=6, turns_to_keep_verbatim=2")
    lines = turn_lines(outputs)
    assert sum(line.startswith("  [SUMMARISE]") for line in lines) == 1
    assert lines[5].startswith("[Turn 6]") and lines[5].endswith("summary sent: False | salary in a verbatim turn: True")
    assert lines[6].startswith("  [SUMMARISE] 8 messages")  # turns 1 to 4
    assert "From the recent turns" in lines[-1] and "1,20,000" in lines[-1]


def test_03_the_lessons_try_it_hard_rules(tmp_path):
    """Lesson page: "add 'hard rules the user stated' to the list of facts in FINCOACH_SUMMARY_PROMPT, run it again
    and compare how each cycle words the equity rule". Offline, each cycle keeps the rule's sentence word for word."""
    outputs = edited_run(tmp_path, "03_drift_measurement.ipynb", 'FINCOACH_SUMMARY_PROMPT = """',
                         "risk profile, goals, decisions made,", "risk profile, goals, hard rules the user stated, decisions made,")
    rule = "One hard rule: I am allergic to equity instruments, never suggest them."
    runs = [out for out in outputs if out.startswith("Cycle 1:")]
    assert len(runs) == 3  # the drift run, the 30-word run, the 30-word run naming hard rules
    for run in runs:  # the edited prompt names hard rules, so every run now keeps the rule, as the notebook says
        summaries = run.splitlines()[1::2]
        assert len(summaries) == 3 and all(rule in summary for summary in summaries)


def test_03_changing_the_tight_limit(tmp_path):
    """Notebook 03: "Offline the rule comes back from 37 words on" (36 words, the limit below, in a quick run of
    the notebook's own drift loop; 37 in the notebook)."""
    outputs = edited_run(tmp_path, "03_drift_measurement.ipynb", "TIGHT_PROMPT = FINCOACH", '"at most 30 words"',
                         '"at most 37 words"')
    tight = [out for out in outputs if out.startswith("Cycle 1:")][1]
    assert all(line.endswith("mentions equity: True") for line in tight.splitlines()[0::2])
    scope, _ = notebook_drift()
    with contextlib.redirect_stdout(io.StringIO()):
        summaries = scope["run_cycles"](scope["FINCOACH_SUMMARY_PROMPT"].replace("80 words", "36 words"),
                                        scope["batches"])
    assert not any("equit" in summary.lower() for summary in summaries)
