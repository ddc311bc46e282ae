"""Every "Try it yourself" of the lesson pages, and the notebooks' own, done as a student does it: the one line the
suggestion names is changed, the notebook's cells run in order up to the result (in this process, offline), and the
result the text promises appears. The sliders' versions of the page's try-its are in test_display_helpers."""
from __future__ import annotations

import re

import pytest

from helpers.lessons.data import lesson4
from tests.notebook_core_support import output_of, run_cells

RULE = "One hard rule: I am allergic to equity instruments, never suggest them."


def turn_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(("[Turn", "  [SUMMARISE]", "  [COMPRESS]"))]


def test_01_the_lessons_try_it_summarises_after_6_keeping_2():
    """The page: 'the summariser is called 2 times in 10 turns, and the request of turn 10 holds six verbatim turns'."""
    _, printed = run_cells("01_summary_schedule.ipynb", until="turns_to_keep_verbatim=3)",
                           edit=("max_turns_before_summary=4, turns_to_keep_verbatim=3",
                                 "max_turns_before_summary=6, turns_to_keep_verbatim=2"))
    lines = output_of(printed, "max_turns_before_summary=6").splitlines()
    assert lines[0] == "Summarise after 6 turns, keep 2 verbatim:" and lines[-1] == " summariser calls in 10 turns: 2"
    assert lines[-2].startswith(" turn 10 request") and len(re.search(r"\[(.*)\]", lines[-2]).group(1).split(",")) == 6


@pytest.fixture(scope="module")
def run_02():
    return run_cells("02_summary_memory_run.ipynb", until="summary_memory = SummaryMemory(",
                     append="print(len(summary_memory.archive))")


def test_02_the_lessons_try_it_prints_12_archived_messages(run_02):
    assert output_of(run_02[1], "summary_memory = SummaryMemory(").splitlines()[-1] == "12"


def test_02_the_stored_run_folds_after_turns_4_and_6_and_answers_the_salary_from_the_summary(run_02):
    lines = turn_lines(output_of(run_02[1], "summary_memory = SummaryMemory("))
    assert [line[:12] for line in lines] == ["[Turn 1] mes", "[Turn 2] mes", "[Turn 3] mes", "[Turn 4] mes",
                                             "  [SUMMARISE", "[Turn 5] mes", "[Turn 6] mes", "  [SUMMARISE"]
    tokens = [int(re.search(r"prompt_tokens: (\d+)", line).group(1)) for line in lines if line.startswith("[Turn")]
    assert tokens[4] < tokens[3]  # a short summary stands where two long turns stood
    assert lines[6].endswith("summary sent: True | salary in a verbatim turn: False")
    assert "From the summary" in run_02[0]["reply"] and "1,20,000" in run_02[0]["reply"]


@pytest.mark.parametrize("edit, fold_after, expect", [
    (("len(self.recent_turns) // 2 >= self", "len(self.recent_turns) // 2 > self"), 5, "From the summary"),
    (("max_turns_before_summary=4, turns_to_keep_verbatim=2)\nfor", "max_turns_before_summary=6, turns_to_keep_verbatim=2)\nfor"),
     6, "From the recent turns")])
def test_02_the_notebooks_own_try_its(edit, fold_after, expect):
    """'>' for '>=': the first fold comes after turn 5; 6 and 2: one fold, after turn 6, which finds the salary verbatim."""
    scope, printed = run_cells("02_summary_memory_run.ipynb", until="summary_memory = SummaryMemory(", edit=edit)
    lines = turn_lines(output_of(printed, "summary_memory = SummaryMemory("))
    first_fold = next(i for i, line in enumerate(lines) if "[SUMMARISE]" in line)
    assert lines[first_fold - 1].startswith(f"[Turn {fold_after}]") and expect in scope["reply"]


def drift_runs(edit=None):
    _, printed = run_cells("03_drift_measurement.ipynb", until="HARD_RULES_PROMPT =", edit=edit)
    return [output_of(printed, marker) for marker in ("summaries = run_cycles(", "TIGHT_PROMPT =", "HARD_RULES_PROMPT")]


def test_03_the_lessons_try_it_naming_hard_rules_keeps_the_rule_in_every_cycle_of_every_run():
    runs = drift_runs(("risk profile, goals, decisions made,", "risk profile, goals, hard rules the user stated, decisions made,"))
    for run in runs:
        assert [RULE in summary for summary in run.splitlines()[1::2]] == [True] * 3


@pytest.mark.parametrize("words, kept", [(30, False), (36, False), (37, True)])
def test_03_the_rule_comes_back_from_37_words(words, kept):
    tight = drift_runs(('"at most 30 words"', f'"at most {words} words"'))[1]
    assert [line.endswith("mentions equity: True") for line in tight.splitlines()[0::2]] == [kept] * 3


@pytest.mark.parametrize("edit, budget, overflows", [
    (("avg_response_tokens = 100", "avg_response_tokens = 150"), 300, 9),
    (("avg_response_tokens = 100", "avg_response_tokens = 150"), 1500, 1),
    (("def analyse(budget, messages_to_compress=4)", "def analyse(budget, messages_to_compress=2)"), 600, 5)])
def test_04_the_pages_try_its_change_the_table_as_the_page_says(edit, budget, overflows):
    _, printed = run_cells("04_budget_analysis.ipynb", until="results = [analyse(budget)", edit=edit)
    assert re.search(rf"^\s*{budget} \|\s+{overflows} \|", output_of(printed, "results = [analyse(budget)"), re.M)


@pytest.mark.parametrize("budget", [600, 2000, 10])
def test_05_the_run_at_600_the_pages_2000_try_it_and_an_over_budget_line(budget):
    """600: three overflows before turn 6, storing replies 3, 4 and 5. The page's try-it, 2000: nothing overflows, no
    summary, request[1] the first user message. 10: the 'buffer: 19/10 tokens' line the try-it section explains."""
    edit = None if budget == 600 else ("PROMPT, max_buffer_tokens=600", f"PROMPT, max_buffer_tokens={budget}")
    _, printed = run_cells("05_summary_buffer_run.ipynb", until="sb_memory = SummaryBufferMemory(", edit=edit)
    text = output_of(printed, "sb_memory = SummaryBufferMemory(")
    overflows = [int(line.rsplit(" ", 1)[1]) for line in turn_lines(text) if line.startswith("[Turn")]
    if budget == 600:
        assert overflows == [0, 0, 0, 1, 2, 3]
        assert [line.split(" (")[0] for line in turn_lines(text) if "[COMPRESS]" in line][:3] == [
            "  [COMPRESS] 4 messages + old summary", "  [COMPRESS] 2 messages + old summary",
            "  [COMPRESS] 2 messages + old summary"]
    elif budget == 2000:
        assert overflows == [0] * 6 and "[COMPRESS]" not in text
        assert f"request[1] at turn 6 (user): {lesson4()['buffer_run']['user_turns'][0]}" in text
    else:
        assert "buffer: 19/10 tokens in 1 messages" in text
