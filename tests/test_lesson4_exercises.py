"""Lesson 4's exercise checks against lists of answers a student might write: every wrong one is told it is
wrong, and a known slip by its name; every right one, whatever its style, passes; a loop that never ends or a
summariser called again and again comes back as a verdict; no message gives the formula or the algorithm.
The stored notebooks hold the exercises undone and the solutions correct."""
from __future__ import annotations

from collections import deque

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.base.tokens import count_tokens, encoding
from helpers.grading import overflows, runner, summary_cap
from helpers.grading.overflows import CASES as OVERFLOW_CASES
from helpers.grading.overflows import MISTAKES as OVERFLOW_MISTAKES
from helpers.grading.runner import Clock
from helpers.grading.overflows import SMALLEST, OverflowCase, check_overflows_at, grade_overflows_at, memory_overflows_at
from helpers.grading.summary_cap import CASES as CAP_CASES
from helpers.grading.summary_cap import HINDI_SUMMARY, LONG_SUMMARY, check_summary_cap, grade_summary_cap, memory_keeps
from helpers.grading.runner import CORRECT, NOT_DONE, WRONG, forget_failures
from helpers.memory.summary_buffer import SummaryBufferMemory

from .notebook_core_support import NOTEBOOKS
from .test_exercise import assert_teaches


@pytest.fixture(autouse=True)
def fresh_kernel():
    forget_failures()


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
    return found


def one_pass_with_a_running_sum(sizes, budget, messages_to_compress=4):
    held, total, found = [], 0, []
    for number, size in enumerate(sizes, start=1):
        if total + size > budget and len(held) >= 2:
            k = min(messages_to_compress, len(held) // 2 * 2)
            while True:
                freed = sum(held[:k])
                if total - freed + size <= budget or k + 2 > len(held) // 2 * 2:
                    break
                k += 2
            held, total = held[k:], total - sum(held[:k])
            found.append(number)
        held.append(size)
        total += size
    return found


RIGHT_OVERFLOW_ANSWERS = [solution, running_total, index_based, one_pass_with_a_running_sum]


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


def extra_step_breaks_turns(sizes, budget, messages_to_compress=4):
    """Folds whole turns first, then one message at a time."""
    buffer, found = [], []
    for number, size in enumerate(sizes, start=1):
        if sum(buffer) + size > budget:
            whole = len(buffer) // 2 * 2
            n = min(messages_to_compress, whole)
            while n < whole and sum(buffer[n:]) + size > budget:
                n += 1
            if n:
                buffer = buffer[n:]
                found.append(number)
        buffer.append(size)
    return found


def extra_step_of_compress(sizes, budget, messages_to_compress=4):
    """Folds messages_to_compress more each time the message still does not fit."""
    buffer, found = [], []
    for number, size in enumerate(sizes, start=1):
        if sum(buffer) + size > budget:
            whole = len(buffer) // 2 * 2
            n = min(messages_to_compress, whole)
            while n < whole and sum(buffer[n:]) + size > budget:
                n += messages_to_compress
            if n:
                buffer = buffer[n:]
                found.append(number)
        buffer.append(size)
    return found


def returns_a_tuple(sizes, budget, messages_to_compress=4):
    return tuple(solution(sizes, budget, messages_to_compress))


def empties_the_list(sizes, budget, messages_to_compress=4):
    buffer, found, number = [], [], 0
    while sizes:
        size = sizes.pop(0)
        number += 1
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


def sorts_the_callers_list(sizes, budget, messages_to_compress=4):
    found = solution(sizes, budget, messages_to_compress)
    sizes.sort()
    return found


def set_of_numbers(sizes, budget, messages_to_compress=4):
    return set(solution(sizes, budget, messages_to_compress))


def floats(sizes, budget, messages_to_compress=4):
    return [float(n) for n in solution(sizes, budget, messages_to_compress)]


def strictly_under_the_budget(sizes, budget, messages_to_compress=4):
    return solution(sizes, budget - 1, messages_to_compress)


def only_user_messages_overflow(sizes, budget, messages_to_compress=4):
    return [n for n in solution(sizes, budget, messages_to_compress) if n % 2 == 1]


def compresses_two_always(sizes, budget, messages_to_compress=4):
    return solution(sizes, budget, 2)


def slow(sizes, budget, messages_to_compress=4):
    import time
    time.sleep(0.2)
    return solution(sizes, budget, messages_to_compress)


# wrong answer -> the mistake the check must name (None: wrong, with no name), and words its message holds
WRONG_OVERFLOW_ANSWERS = {
    pages_analyse: ("the page's analyse()", "right on every setting the page tries"),
    pages_analyse_without_empty_folds: ("stops at messages_to_compress", "stops after messages_to_compress"),
    greater_or_equal: ("overflows on the budget", "exactly"),
    strictly_under_the_budget: ("overflows on the budget", "exactly"),
    folds_until_below_the_budget: ("folds below the budget", "the fold stops"),
    store_then_test: ("stores, then tests", "stores the message first"),
    folds_a_waiting_question: ("folds a waiting question", "without its reply"),
    extra_step_breaks_turns: ("folds more one message at a time", "half way through a turn"),
    extra_step_of_compress: ("folds more messages_to_compress at a time", "another messages_to_compress"),
    zero_based: ("numbered from 0", "message 1"),
    counts_only: ("wrong type", "not how many there are"),
    returns_a_tuple: ("wrong type", "a tuple"),
    set_of_numbers: ("wrong type", "a list of whole numbers"),
    floats: ("wrong type", "a list of whole numbers"),
    empties_the_list: ("changes the caller's list", "is [] after the call"),
    sorts_the_callers_list: ("changes the caller's list", "changed the list it was given"),
    each_turn_an_overflow: ("each turn folded is an overflow", "one summariser call"),
    always_four: ("messages_to_compress ignored", "does not use the argument"),
    compresses_two_always: (None, "The smallest:"),
    never_removes: ("the folded messages stay", "keeps the folded messages"),
    hangs: ("never ends", "still running after 2 seconds"),
    crashes: ("raises", "raised IndexError"),
    forgets_to_return: ("wrong type", "returned None"),
    folds_every_whole_turn: ("folds every whole turn", "every whole turn"),
    turns_not_messages: ("turn numbers", "turn numbers"),
    only_user_messages_overflow: (None, "Where it starts: message"),
}


@pytest.mark.parametrize("answer", WRONG_OVERFLOW_ANSWERS, ids=lambda f: f.__name__)
def test_wrong_overflow_answers_are_rejected_and_named(answer):
    mistake, words = WRONG_OVERFLOW_ANSWERS[answer]
    verdict = grade_overflows_at(answer)
    assert verdict.status == WRONG, verdict
    assert verdict.mistake == mistake, verdict
    assert words in verdict.message, verdict.message
    assert_teaches(verdict)


def test_a_slow_answer_is_stopped_by_the_checks_own_clock(monkeypatch):
    """Each call is bounded, and so are all the calls of one check together."""
    monkeypatch.setattr(runner, "Clock", lambda: Clock(per_call=2.0, total=0.5))
    verdict = grade_overflows_at(slow)
    assert verdict.status == WRONG and "took more than 0.5 seconds" in verdict.message, verdict


def test_the_smallest_failing_case_is_shown():
    verdict = grade_overflows_at(greater_or_equal)
    assert "The smallest: sizes [1, 1, 1], budget 3, messages_to_compress 2" in verdict.message, verdict.message


def test_the_pages_analyse_is_right_on_the_pages_settings():
    for case in OVERFLOW_CASES[:5]:  # the lesson's table, both try-its, the lesson's run
        assert pages_analyse(list(case.sizes), case.budget, case.compress) == memory_overflows_at(case), case.about


def test_an_unfinished_answer_is_not_done():
    verdict = check_overflows_at(lambda sizes, budget, messages_to_compress=4: ...)
    assert verdict.status == NOT_DONE and "write the body of overflows_at" in verdict.message


@pytest.mark.parametrize("mistake", OVERFLOW_MISTAKES, ids=lambda m: m.name)
def test_every_named_mistake_is_told_apart_from_the_memory_and_named_as_itself(mistake):
    def answer(sizes, budget, messages_to_compress=4):
        return mistake.rule(OverflowCase(tuple(sizes), budget, messages_to_compress))

    differ = [case for case in OVERFLOW_CASES if mistake.rule(case) != memory_overflows_at(case)]
    assert differ, f"no case tells {mistake.name!r} from the memory's rule"
    assert min(len(case.sizes) for case in differ) <= 10  # a small case shows it
    verdict = grade_overflows_at(answer)
    assert verdict.mistake == mistake.name, verdict


def test_each_smallest_case_separates_a_named_mistake():
    for sizes, budget, compress in SMALLEST:
        case = OverflowCase(sizes, budget, compress)
        assert any(m.rule(case) != memory_overflows_at(case) for m in OVERFLOW_MISTAKES), case


def test_the_random_cases_are_hundreds_and_fixed():
    assert len(OVERFLOW_CASES) >= 300
    assert OVERFLOW_CASES == overflows._fixed_cases() + tuple(OverflowCase(*s) for s in SMALLEST) + overflows._random_cases()


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(sizes=st.lists(st.integers(1, 500), min_size=1, max_size=24), budget=st.integers(2, 1500),
       compress=st.sampled_from([2, 4, 6, 8]))
def test_the_reference_answer_is_the_memorys(sizes, budget, compress):
    """A plain right answer agrees with the class on any sizes (the check's right answer is the class)."""
    assert solution(sizes, budget, compress) == memory_overflows_at(OverflowCase(tuple(sizes), budget, compress))


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(sizes=st.lists(st.integers(1, 40), min_size=1, max_size=16), budget=st.integers(2, 160),
       compress=st.sampled_from([2, 4, 6]))
def test_the_mistakes_built_from_the_memory_are_the_wrong_rules_students_write(sizes, budget, compress):
    """A mistake made from the class (a mutant, or another reading of one) gives what the plain wrong loop gives
    on any sizes, odd folds and a fold of the whole buffer included."""
    rules = {mistake.name: mistake.rule for mistake in OVERFLOW_MISTAKES}
    case = OverflowCase(tuple(sizes), budget, compress)
    for answer in (store_then_test, folds_a_waiting_question, extra_step_breaks_turns, extra_step_of_compress):
        assert rules[WRONG_OVERFLOW_ANSWERS[answer][0]](case) == answer(sizes, budget, compress), answer.__name__


def test_the_fixed_cases_include_the_lessons_figures():
    by_about = {case.about: memory_overflows_at(case) for case in OVERFLOW_CASES if case.about}
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


def cap_with_a_loop_over_both(summary, summarise, max_summary_tokens):
    """Picks the shorter text with a loop, and treats None first."""
    if max_summary_tokens is None:
        return summary
    size = count_tokens(summary)
    if size <= max_summary_tokens:
        return summary
    best, best_size = summary, size
    for text in [summarise([], summary)]:
        if text.strip() and count_tokens(text) < best_size:
            best, best_size = text, count_tokens(text)
    return best


RIGHT_CAP_ANSWERS = [cap_solution, cap_with_min, cap_with_keywords, cap_with_a_loop_over_both]


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


def no_cap_for_zero(summary, summarise, max_summary_tokens):
    if not max_summary_tokens or count_tokens(summary) <= max_summary_tokens:
        return summary
    shorter = summarise([], summary)
    return shorter if shorter and count_tokens(shorter) < count_tokens(summary) else summary


def returns_the_pair(summary, summarise, max_summary_tokens):
    if max_summary_tokens is None or count_tokens(summary) <= max_summary_tokens:
        return summary
    return summary, summarise([], summary)


def prints_instead(summary, summarise, max_summary_tokens):
    print(cap_solution(summary, summarise, max_summary_tokens))


def passes_the_messages(summary, summarise, max_summary_tokens):
    if max_summary_tokens is None or count_tokens(summary) <= max_summary_tokens:
        return summary
    shorter = summarise([{"role": "user", "content": summary}], summary)
    return shorter if shorter and count_tokens(shorter) < count_tokens(summary) else summary


WRONG_CAP_ANSWERS = {
    loops_until_under: ("calls more than once", "called a second time"),
    calls_twice: ("calls more than once", "called a second time"),
    counts_words: ("counts words", "words but"),
    counts_characters: ("counts words", "words but"),
    always_shortens: ("calls within the cap", "yet summarise was called"),
    strict_cap: ("at the cap is over", "exactly"),
    trusts_the_summariser: ("keeps the longer one", "came back with"),
    keeps_an_empty_summary: ("keeps an empty summary", "would lose every earlier turn"),
    forgets_none: ("forgets None", "None means no cap"),
    no_cap_for_zero: ("a cap of 0 is no cap", "a cap of 0 is a cap"),
    cuts_the_text: ("cuts the text", "not cut by hand"),
    wrong_arguments: ("calls the summariser wrongly", "there are no new messages"),
    passes_the_messages: ("calls the summariser wrongly", "there are no new messages"),
    names_the_summary_keyword: ("calls the summariser wrongly", "summarise(messages, existing_summary)"),
    spins: ("never ends", "still running after 2 seconds"),
    keeps_the_long_one: ("keeps the long one", "kept the long one"),
    keeps_fewer_characters: ("keeps the longer one", "fewer characters and words, but more tokens"),
    keeps_fewer_words: ("keeps the longer one", "fewer characters and words, but more tokens"),
    returns_the_pair: ("wrong type", "not the summary to keep"),
    prints_instead: ("no return", "forget `return`"),
}


@pytest.mark.parametrize("answer", WRONG_CAP_ANSWERS, ids=lambda f: f.__name__)
def test_wrong_cap_answers_are_rejected_and_named(answer):
    mistake, words = WRONG_CAP_ANSWERS[answer]
    verdict = grade_summary_cap(answer)
    assert verdict.status == WRONG, verdict
    assert verdict.mistake == mistake, verdict
    assert words in verdict.message, verdict.message
    assert "<locals>" not in verdict.message and "WrongCall" not in verdict.message  # no names from the check's code
    assert_teaches(verdict)


def test_the_hindi_summary_looks_shorter_and_costs_more_tokens():
    """The case that tells counting tokens from counting characters or words when picking the shorter text."""
    assert len(HINDI_SUMMARY) < len(LONG_SUMMARY) and len(HINDI_SUMMARY.split()) < len(LONG_SUMMARY.split())
    assert count_tokens(HINDI_SUMMARY) > count_tokens(LONG_SUMMARY)


def test_an_unfinished_cap_is_not_done():
    verdict = check_summary_cap(lambda summary, summarise, max_summary_tokens: ...)
    assert verdict.status == NOT_DONE and "write the body of cap_summary" in verdict.message


@pytest.mark.parametrize("case", CAP_CASES, ids=lambda case: case.about)
def test_the_right_cap_is_what_the_project_class_keeps(case):
    """What the check calls right is what the memory keeps, and what the exercise's words say."""
    assert memory_keeps(case) == cap_solution(case.summary, case.summarise, case.cap)


def test_a_cap_of_zero_is_in_the_cases_and_every_summary_is_over_it():
    zero = [case for case in CAP_CASES if case.cap == 0]
    assert len(zero) >= 2 and all(count_tokens(case.summary) > 1 for case in zero)


# ----- the stored notebooks ---------------------------------------------------------------------------

def outputs(path) -> str:
    book = nbformat.read(path, as_version=4)
    return "\n".join(o.get("text", "") for cell in book.cells if cell.cell_type == "code" for o in cell.outputs)


@pytest.mark.parametrize("notebook, exercise", [("04_budget_analysis", "4.1"), ("05_summary_buffer_run", "5.1")])
def test_stored_notebooks_hold_the_exercise_undone_and_the_solutions_correct(notebook, exercise):
    assert f"[exercise {exercise}] not done yet" in outputs(NOTEBOOKS / f"{notebook}.ipynb")
    solved = outputs(NOTEBOOKS / "solutions" / f"{notebook}_solutions.ipynb")
    assert solved.count(f"[exercise {exercise}] correct") == 2 and "not yet" not in solved
