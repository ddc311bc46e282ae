"""Lesson 4's exercise checks against lists of answers a student might write: every wrong one is told it is
wrong, with the words of its own mistake; every right one, whatever its style, passes; a loop that never ends
or a summariser called again and again comes back as a verdict. The stored notebooks hold the exercises
undone and the solutions correct."""
from __future__ import annotations

from collections import deque

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.base.tokens import count_tokens, encoding
from helpers.display.exercise import CORRECT, NOT_DONE, WRONG
from helpers.display.lesson4_exercises import (
    CAP_CASES,
    HINDI_SUMMARY,
    LONG_SUMMARY,
    OVERFLOW_CASES,
    OVERFLOW_MISTAKES,
    OverflowCase,
    check_overflows_at,
    check_summary_cap,
    memory_overflows_at,
    overflow_rule,
    reference_cap,
)
from helpers.memory.summary_buffer import SummaryBufferMemory

from .notebook_core_support import NOTEBOOKS


# ----- exercise 4.1: right answers in several styles --------------------------------------------------

def solution(sizes, budget, messages_to_compress=4):
    buffer, found = [], []
    for number, size in enumerate(sizes, start=1):
        if sum(buffer) + size > budget:
            whole = len(buffer) // 2 * 2
            n = min(messages_to_compress, whole)
            while n < whole and sum(buffer[n:]) + size > budget:
                n += 2
            if n:
                buffer = buffer[n:]
                found.append(number)
        buffer.append(size)
    return found


def running_total(sizes, budget, messages_to_compress=4):
    turns, pending, total, found = deque(), None, 0, []
    for number, size in enumerate(sizes, start=1):
        if total + size > budget and turns:
            for _ in range(messages_to_compress // 2):
                total -= sum(turns.popleft()) if turns else 0
            while turns and total + size > budget:
                total -= sum(turns.popleft())
            found.append(number)
        total += size
        if pending is None:
            pending = size
        else:
            turns.append((pending, size))
            pending = None
    return found


def index_based(sizes, budget, messages_to_compress=4):
    start, found = 0, []                      # the buffer is sizes[start:i]
    for i, size in enumerate(sizes):
        if sum(sizes[start:i]) + size > budget:
            whole = (i - start) // 2 * 2
            n = min(messages_to_compress, whole)
            while n < whole and sum(sizes[start + n:i]) + size > budget:
                n += 2
            if n > 0:
                start += n
                found.append(i + 1)
    return tuple(found)                       # a tuple is a fine answer too


RIGHT_OVERFLOW_ANSWERS = [solution, running_total, index_based]


@pytest.mark.parametrize("answer", RIGHT_OVERFLOW_ANSWERS, ids=lambda f: f.__name__)
def test_right_overflow_answers_in_any_style_pass(answer, capsys):
    assert check_overflows_at(answer).status == CORRECT
    assert "[exercise 4.1] correct" in capsys.readouterr().out


# ----- exercise 4.1: wrong answers, as a student might write them --------------------------------------

def pages_analyse(sizes, budget, messages_to_compress=4):
    """The lesson page's analyse(), with the loop over sizes."""
    buffer, found = [], []
    for number, size in enumerate(sizes, start=1):
        if sum(buffer) + size > budget:
            n = min(messages_to_compress, len(buffer)) // 2 * 2
            buffer = buffer[n:]
            found.append(number)
        buffer.append(size)
    return found


def pages_analyse_without_empty_folds(sizes, budget, messages_to_compress=4):
    buffer, found = [], []
    for number, size in enumerate(sizes, start=1):
        if sum(buffer) + size > budget:
            n = min(messages_to_compress, len(buffer)) // 2 * 2
            if n:
                buffer = buffer[n:]
                found.append(number)
        buffer.append(size)
    return found


def greater_or_equal(sizes, budget, messages_to_compress=4):
    buffer, found = [], []
    for number, size in enumerate(sizes, start=1):
        if sum(buffer) + size >= budget:
            whole = len(buffer) // 2 * 2
            n = min(messages_to_compress, whole)
            while n < whole and sum(buffer[n:]) + size >= budget:
                n += 2
            if n:
                buffer = buffer[n:]
                found.append(number)
        buffer.append(size)
    return found


def folds_until_below_the_budget(sizes, budget, messages_to_compress=4):
    buffer, found = [], []
    for number, size in enumerate(sizes, start=1):
        if sum(buffer) + size > budget:
            whole = len(buffer) // 2 * 2
            n = min(messages_to_compress, whole)
            while n < whole and sum(buffer[n:]) + size >= budget:   # stops only below the budget
                n += 2
            if n:
                buffer = buffer[n:]
                found.append(number)
        buffer.append(size)
    return found


def store_then_test(sizes, budget, messages_to_compress=4):
    buffer, found = [], []
    for number, size in enumerate(sizes, start=1):
        buffer.append(size)
        if sum(buffer) > budget:
            n = min(messages_to_compress, len(buffer) // 2 * 2)
            while n < len(buffer) // 2 * 2 and sum(buffer[n:]) > budget:
                n += 2
            if n:
                buffer = buffer[n:]
                found.append(number)
    return found


def folds_a_waiting_question(sizes, budget, messages_to_compress=4):
    buffer, found = [], []
    for number, size in enumerate(sizes, start=1):
        if sum(buffer) + size > budget:
            n = min(messages_to_compress, len(buffer))
            while n < len(buffer) and sum(buffer[n:]) + size > budget:
                n += 1
            if n:
                buffer = buffer[n:]
                found.append(number)
        buffer.append(size)
    return found


def zero_based(sizes, budget, messages_to_compress=4):
    return [number - 1 for number in solution(sizes, budget, messages_to_compress)]


def counts_only(sizes, budget, messages_to_compress=4):
    return len(solution(sizes, budget, messages_to_compress))


def each_turn_an_overflow(sizes, budget, messages_to_compress=4):
    buffer, found = [], []
    for number, size in enumerate(sizes, start=1):
        if sum(buffer) + size > budget:
            whole = len(buffer) // 2 * 2
            n = min(messages_to_compress, whole)
            if n:
                found.append(number)
            while n < whole and sum(buffer[n:]) + size > budget:
                n += 2
                found.append(number)
            buffer = buffer[n:]
        buffer.append(size)
    return found


def always_four(sizes, budget, messages_to_compress=4):
    return solution(sizes, budget, 4)


def never_removes(sizes, budget, messages_to_compress=4):
    buffer, found = [], []
    for number, size in enumerate(sizes, start=1):
        if sum(buffer) + size > budget and len(buffer) >= 2:
            found.append(number)
        buffer.append(size)
    return found


def hangs(sizes, budget, messages_to_compress=4):
    buffer, found = [], []
    for number, size in enumerate(sizes, start=1):
        n = 0
        while sum(buffer[n:]) + size > budget:   # forgets n += 2
            pass
        buffer.append(size)
    return found


def crashes(sizes, budget, messages_to_compress=4):
    return [sizes[number] for number in range(len(sizes) + 1)]


def forgets_to_return(sizes, budget, messages_to_compress=4):
    solution(sizes, budget, messages_to_compress)


def folds_every_whole_turn(sizes, budget, messages_to_compress=4):
    buffer, found = [], []
    for number, size in enumerate(sizes, start=1):
        if sum(buffer) + size > budget and len(buffer) >= 2:
            buffer = buffer[len(buffer) // 2 * 2:]
            found.append(number)
        buffer.append(size)
    return found


def turns_not_messages(sizes, budget, messages_to_compress=4):
    return [(number + 1) // 2 for number in solution(sizes, budget, messages_to_compress)]


WRONG_OVERFLOW_ANSWERS = {
    pages_analyse: "Your rule is the page's analyse()",
    pages_analyse_without_empty_folds: "Your rule is the page's: it stops after messages_to_compress",
    greater_or_equal: "(>, not >=)",
    folds_until_below_the_budget: "stop folding",
    store_then_test: "tests *before* storing",
    folds_a_waiting_question: "whole turns only",
    zero_based: "number the messages from 1",
    counts_only: "a number; return the *list*",
    each_turn_an_overflow: "one overflow: one summariser call",
    always_four: "use the messages_to_compress argument",
    never_removes: "keep the folded messages in the buffer",
    hangs: "still running after 2 seconds",
    crashes: "raised IndexError",
    forgets_to_return: "returned None",
    turns_not_messages: "You give turn numbers",
    folds_every_whole_turn: "Where it starts: message",   # a mistake the check has no name for
}


@pytest.mark.parametrize("answer", WRONG_OVERFLOW_ANSWERS, ids=lambda f: f.__name__)
def test_wrong_overflow_answers_are_told_their_mistake(answer):
    verdict = check_overflows_at(answer)
    assert verdict.status == WRONG, verdict
    assert WRONG_OVERFLOW_ANSWERS[answer] in verdict.message, verdict.message


def test_the_pages_analyse_is_told_it_is_right_on_the_pages_settings_and_where_it_is_not():
    message = check_overflows_at(pages_analyse).message
    assert "right on every setting the page tries" in message
    assert "folds more whole turns" in message and "no whole turn to fold" in message
    for case in OVERFLOW_CASES[:5]:  # the lesson's table, both try-its, the lesson's run
        assert pages_analyse(list(case.sizes), case.budget, case.compress) == memory_overflows_at(case), case.about


def test_an_unfinished_answer_is_not_done():
    verdict = check_overflows_at(lambda sizes, budget, messages_to_compress=4: ...)
    assert verdict.status == NOT_DONE and "write the body of overflows_at" in verdict.message


@pytest.mark.parametrize("mistake", OVERFLOW_MISTAKES, ids=lambda m: m.name)
def test_every_mistake_the_check_names_is_seen_by_its_cases_and_named(mistake):
    def answer(sizes, budget, messages_to_compress=4):
        return overflow_rule(sizes, budget, messages_to_compress, **mistake.settings)

    differ = [case for case in OVERFLOW_CASES
              if overflow_rule(case.sizes, case.budget, case.compress, **mistake.settings) != memory_overflows_at(case)]
    assert differ, f"no case tells {mistake.name!r} from the memory's rule"
    assert mistake.says in check_overflows_at(answer).message


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(sizes=st.lists(st.integers(1, 500), min_size=1, max_size=24), budget=st.integers(1, 1500),
       compress=st.sampled_from([2, 4, 6, 8]))
def test_the_checks_own_rule_is_the_memorys(sizes, budget, compress):
    case = OverflowCase(tuple(sizes), budget, compress, "hypothesis")
    assert overflow_rule(sizes, budget, compress) == memory_overflows_at(case)


def test_the_fixed_cases_include_the_lessons_figures():
    by_about = {case.about: memory_overflows_at(case) for case in OVERFLOW_CASES}
    assert len(by_about["the page's first try-it (replies of 150, 300 tokens)"]) == 9
    assert len(by_about["the page's second try-it (compress 2, 600 tokens)"]) == 5
    assert len(by_about["the lesson's table at 600 tokens (replies of 100)"]) == 3
    assert by_about["the lesson's run in notebook 05, at 600 tokens"] == [6, 8, 10]


# ----- exercise 5.1 -------------------------------------------------------------------------------------

def cap_solution(summary, summarise, max_summary_tokens):
    if max_summary_tokens is None or count_tokens(summary) <= max_summary_tokens:
        return summary
    shorter = summarise([], summary)
    if shorter and count_tokens(shorter) < count_tokens(summary):
        return shorter
    return summary


def cap_with_min(summary, summarise, max_summary_tokens):
    if max_summary_tokens is not None and count_tokens(summary) > max_summary_tokens:
        return min((text for text in (summary, summarise([], summary)) if text.strip()), key=count_tokens)
    return summary


def cap_with_keywords(summary, summarise, max_summary_tokens):
    tokens = len(encoding().encode(summary))
    if max_summary_tokens is None or not tokens > max_summary_tokens:
        return summary
    candidate = summarise(messages=[], existing_summary=summary).strip()
    return candidate if candidate and len(encoding().encode(candidate)) < tokens else summary


RIGHT_CAP_ANSWERS = [cap_solution, cap_with_min, cap_with_keywords]


@pytest.mark.parametrize("answer", RIGHT_CAP_ANSWERS, ids=lambda f: f.__name__)
def test_right_cap_answers_in_any_style_pass(answer):
    assert check_summary_cap(answer).status == CORRECT


def loops_until_under(summary, summarise, max_summary_tokens):
    while max_summary_tokens is not None and count_tokens(summary) > max_summary_tokens:
        summary = summarise([], summary)
    return summary


def calls_twice(summary, summarise, max_summary_tokens):
    if max_summary_tokens is None or count_tokens(summary) <= max_summary_tokens:
        return summary
    if count_tokens(summarise([], summary)) < count_tokens(summary):
        return summarise([], summary)
    return summary


def counts_words(summary, summarise, max_summary_tokens):
    if max_summary_tokens is None or len(summary.split()) <= max_summary_tokens:
        return summary
    shorter = summarise([], summary)
    return shorter if shorter and count_tokens(shorter) < count_tokens(summary) else summary


def counts_characters(summary, summarise, max_summary_tokens):
    if max_summary_tokens is None or len(summary) <= max_summary_tokens * 4:
        return summary
    shorter = summarise([], summary)
    return shorter if shorter and count_tokens(shorter) < count_tokens(summary) else summary


def always_shortens(summary, summarise, max_summary_tokens):
    shorter = summarise([], summary)
    over = max_summary_tokens is not None and count_tokens(summary) > max_summary_tokens
    return shorter if over and shorter and count_tokens(shorter) < count_tokens(summary) else summary


def strict_cap(summary, summarise, max_summary_tokens):
    if max_summary_tokens is None or count_tokens(summary) < max_summary_tokens:
        return summary
    shorter = summarise([], summary)
    return shorter if shorter and count_tokens(shorter) < count_tokens(summary) else summary


def trusts_the_summariser(summary, summarise, max_summary_tokens):
    if max_summary_tokens is None or count_tokens(summary) <= max_summary_tokens:
        return summary
    return summarise([], summary)


def keeps_an_empty_summary(summary, summarise, max_summary_tokens):
    if max_summary_tokens is None or count_tokens(summary) <= max_summary_tokens:
        return summary
    return min(summary, summarise([], summary), key=count_tokens)


def forgets_none(summary, summarise, max_summary_tokens):
    if count_tokens(summary) <= max_summary_tokens:
        return summary
    shorter = summarise([], summary)
    return shorter if shorter and count_tokens(shorter) < count_tokens(summary) else summary


def cuts_the_text(summary, summarise, max_summary_tokens):
    if max_summary_tokens is None or count_tokens(summary) <= max_summary_tokens:
        return summary
    return encoding().decode(encoding().encode(summary)[:max_summary_tokens])


def wrong_arguments(summary, summarise, max_summary_tokens):
    if max_summary_tokens is None or count_tokens(summary) <= max_summary_tokens:
        return summary
    return summarise(summary)


def spins(summary, summarise, max_summary_tokens):
    while count_tokens(summary) > (max_summary_tokens or 0):
        pass
    return summary


def keeps_the_long_one(summary, summarise, max_summary_tokens):
    if max_summary_tokens is None or count_tokens(summary) <= max_summary_tokens:
        return summary
    summarise([], summary)
    return summary


def keeps_fewer_characters(summary, summarise, max_summary_tokens):
    if max_summary_tokens is None or count_tokens(summary) <= max_summary_tokens:
        return summary
    return min((text for text in (summary, summarise([], summary)) if text.strip()), key=len)


def keeps_fewer_words(summary, summarise, max_summary_tokens):
    if max_summary_tokens is None or count_tokens(summary) <= max_summary_tokens:
        return summary
    return min((text for text in (summary, summarise([], summary)) if text.strip()), key=lambda t: len(t.split()))


def names_the_summary_keyword(summary, summarise, max_summary_tokens):
    """Calls the summariser by the parameter name of the notebook's own example, first_20_words(messages, summary)."""
    if max_summary_tokens is None or count_tokens(summary) <= max_summary_tokens:
        return summary
    shorter = summarise(messages=[], summary=summary)
    return shorter if shorter and count_tokens(shorter) < count_tokens(summary) else summary


WRONG_CAP_ANSWERS = {
    loops_until_under: "summarise was called a second time",
    calls_twice: "summarise was called a second time",
    counts_words: "count tokens with count(summary), not words",
    counts_characters: "count tokens with count(summary), not words",
    always_shortens: "yet summarise was called",
    strict_cap: "(<=, not <)",
    trusts_the_summariser: "came back with",
    keeps_an_empty_summary: "Keep the old summary when the new one is empty",
    forgets_none: "None means no cap",
    cuts_the_text: "rather than cutting the text yourself",
    wrong_arguments: "call summarise([], summary)",
    spins: "still running after 2 seconds",
    keeps_the_long_one: "kept the long one",
    keeps_fewer_characters: "fewer characters and words, but more tokens",
    keeps_fewer_words: "fewer characters and words, but more tokens",
    names_the_summary_keyword: "call summarise([], summary)",
}


@pytest.mark.parametrize("answer", WRONG_CAP_ANSWERS, ids=lambda f: f.__name__)
def test_wrong_cap_answers_are_told_their_mistake(answer):
    verdict = check_summary_cap(answer)
    assert verdict.status == WRONG, verdict
    assert WRONG_CAP_ANSWERS[answer] in verdict.message, verdict.message
    assert "<locals>" not in verdict.message and "WrongCall" not in verdict.message  # no names from the check's code
    assert "count_tokens" not in verdict.message  # notebook 05 counts with count(text)


def test_the_hindi_summary_looks_shorter_and_costs_more_tokens():
    """The case that tells counting tokens from counting characters or words when picking the shorter text."""
    assert len(HINDI_SUMMARY) < len(LONG_SUMMARY) and len(HINDI_SUMMARY.split()) < len(LONG_SUMMARY.split())
    assert count_tokens(HINDI_SUMMARY) > count_tokens(LONG_SUMMARY)


def test_an_unfinished_cap_is_not_done():
    verdict = check_summary_cap(lambda summary, summarise, max_summary_tokens: ...)
    assert verdict.status == NOT_DONE and "write the body of cap_summary" in verdict.message


@pytest.mark.parametrize("case", CAP_CASES, ids=lambda case: case.about)
def test_the_reference_cap_is_what_the_project_class_does(case):
    """Every fold writes the case's summary; the memory's max_summary_tokens must keep what reference_cap keeps."""
    def summarise(messages, existing):
        return case.summarise(messages, existing) if not messages else case.summary

    memory = SummaryBufferMemory("s", summarise, max_buffer_tokens=60, max_summary_tokens=case.cap)
    for index in range(6):
        memory.add_message(("user", "assistant")[index % 2], "x" + " x" * 29)
    assert memory.summary == reference_cap(case.summary, case.summarise, case.cap)


# ----- the stored notebooks ---------------------------------------------------------------------------

def outputs(path) -> str:
    book = nbformat.read(path, as_version=4)
    return "\n".join(o.get("text", "") for cell in book.cells if cell.cell_type == "code" for o in cell.outputs)


@pytest.mark.parametrize("notebook, exercise", [("04_budget_analysis", "4.1"), ("05_summary_buffer_run", "5.1")])
def test_stored_notebooks_hold_the_exercise_undone_and_the_solutions_correct(notebook, exercise):
    assert f"[exercise {exercise}] not done yet" in outputs(NOTEBOOKS / f"{notebook}.ipynb")
    solved = outputs(NOTEBOOKS / "solutions" / f"{notebook}_solutions.ipynb")
    assert solved.count(f"[exercise {exercise}] correct") == 2 and "not yet" not in solved
