"""The grading layer's runner and verdicts: three distinct, deterministic verdicts; an answer that hangs or loops
is stopped; the hint is held back until a second failure or a request; an exercise cell can try an answer with
a bound (``try_it``)."""
import re
import time

import pytest

from helpers.base.bounded import TimedOut, TooManyCalls, limit_calls, run_bounded
from helpers.grading.runner import Clock, Misuse, run_answer, try_it
from helpers.grading.runner import CORRECT, NOT_DONE, WRONG, Feedback, forget_failures, show

# What no verdict may say: code that would be the answer (a formula, a slice, a comparison to copy)
FORMULA = re.compile(r"//|>=|<=|\blen\(|\bmin\(|\bmax\(|\bsum\(|re\.split|\.lower\(\)|\+=|\[-|\bis None\b|"
                     r"\bceil\b|\bbuffer\[|\brange\(")


def assert_teaches(verdict: Feedback) -> None:
    """A wrong verdict says what is wrong, holds a hint for later, and gives away no formula or algorithm."""
    assert verdict.status == WRONG and verdict.message and verdict.hint, verdict
    for text in (verdict.message, verdict.hint):
        quoted = re.sub(r"\[[\d, .]*\]|'[^']*'|\"[^\"]*\"", "", text)  # cases and quoted sentences may hold anything
        assert not FORMULA.search(quoted), f"{FORMULA.search(quoted).group()!r} in {text!r}"


@pytest.fixture(autouse=True)
def fresh_kernel():
    forget_failures()


def wrong(exercise="9.9"):
    return Feedback(exercise, WRONG, "your answer is 4, the memory makes 3.", hint="count the calls by hand")


def test_the_first_failure_says_what_is_wrong_and_the_second_brings_the_hint(capsys):
    show(wrong())
    first = capsys.readouterr().out
    assert first.startswith("[exercise 9.9] not yet: your answer is 4") and "count the calls by hand" not in first
    assert "hint=True" in first  # it says how to ask for the hint
    show(wrong())
    assert "  hint: count the calls by hand" in capsys.readouterr().out
    show(wrong("8.8"))  # another exercise starts afresh
    assert "count the calls by hand" not in capsys.readouterr().out


def test_a_hint_on_request_and_none_when_refused(capsys):
    show(wrong(), hint=True)
    assert "hint: count the calls by hand" in capsys.readouterr().out
    show(wrong(), hint=False)
    assert "hint:" not in capsys.readouterr().out


def test_a_right_answer_shows_no_hint_and_is_deterministic(capsys):
    right = Feedback("9.9", CORRECT, "three calls", hint="never shown")
    show(right, hint=True)
    show(right)
    assert capsys.readouterr().out.splitlines() == ["[exercise 9.9] correct: three calls"] * 2


# ----- running a student's answer with bounds --------------------------------------------------------

def test_a_loop_that_never_ends_is_stopped_even_if_it_catches_every_exception():
    def runaway():
        while True:
            try:
                pass
            except Exception:  # a student's catch-all must not swallow the stop
                pass

    started = time.monotonic()
    with pytest.raises(TimedOut) as stopped:
        run_bounded(runaway, seconds=0.2)
    assert stopped.value.seconds == 0.2 and time.monotonic() - started < 30
    assert run_bounded(lambda x: x + 1, 1, seconds=5) == 2  # and the next call runs normally
    time.sleep(0.3)  # no late stop arrives after a call that finished


def test_a_call_limit_stops_the_call_past_it():
    twice = limit_calls(lambda: "s", 2, "the summariser")
    assert twice() == twice() == "s" and twice.calls == 2
    with pytest.raises(TooManyCalls) as stopped:
        twice()
    assert (stopped.value.what, stopped.value.limit) == ("the summariser", 2)


def test_run_answer_turns_each_way_of_failing_into_a_verdict():
    def not_written():
        raise NotImplementedError

    def loops():
        while True:
            pass

    def calls_too_often(summarise):
        while True:
            summarise()

    def raises():
        return [][1]

    assert run_answer("9.9", not_written).status == NOT_DONE
    assert run_answer("9.9", lambda: ...).status == NOT_DONE
    hang = run_answer("9.9", loops, seconds=0.2)
    assert isinstance(hang, Feedback) and hang.status == WRONG and "still running after 0.2 seconds" in hang.message
    many = run_answer("9.9", calls_too_often, limit_calls(lambda: "s", 3, "the summariser"))
    assert many.status == WRONG and "called the summariser more than 3 times" in many.message
    error = run_answer("9.9", raises)
    assert error.status == WRONG and "IndexError" in error.message
    assert (hang.mistake, many.mistake, error.mistake) == ("never ends", "too many calls", "raises")
    for verdict in (hang, many, error):
        assert_teaches(verdict)
    assert run_answer("9.9", lambda a, b: a * b, 6, 7) == 42

    def misuses(summarise):
        return summarise("the wrong thing")

    def summariser(*_):
        raise Misuse("summarise was called with the wrong thing", "hand over the summary", "calls wrongly")
    misuse = run_answer("9.9", misuses, summariser)  # a wrong call of what the check handed over, in its own words
    assert (misuse.status, misuse.message, misuse.hint, misuse.mistake) == (
        WRONG, "summarise was called with the wrong thing", "hand over the summary", "calls wrongly")


def test_a_check_has_a_clock_for_all_its_calls():
    clock = Clock(per_call=5.0, total=0.3)
    assert 0 < clock.seconds() <= 0.3
    time.sleep(0.35)
    verdict = run_answer("9.9", lambda: 1, clock=clock)
    assert verdict.status == WRONG and "took more than 0.3 seconds" in verdict.message


def test_try_it_runs_an_answer_once_with_a_bound(capsys):
    def cap_summary(summary, summarise, cap):
        return summarise([], summary)

    def unwritten(summary):
        return ...

    def loops(summary):
        while True:
            pass

    try_it(cap_summary, "a long summary", lambda messages, summary: summary.upper(), 3)
    try_it(lambda sizes: [6, 8, 10], [1, 2])
    try_it(unwritten, "x")
    started = time.monotonic()
    try_it(loops, "x", seconds=0.2)
    assert time.monotonic() - started < 30
    out = capsys.readouterr().out.splitlines()
    assert out[:3] == ["A LONG SUMMARY", "[6, 8, 10]", "unwritten is not written yet: write its body, then run this "
                                                       "cell again."]
    assert out[3].startswith("loops: loops was still running after 0.2 seconds")


def test_an_answer_not_written_yet_gets_a_hint_to_start_only_on_request(capsys):
    from helpers.grading.calls import check_calls_formula
    from helpers.grading.overflows import check_overflows_at
    from helpers.grading.rule_check import check_rule_check
    from helpers.grading.summary_cap import check_summary_cap

    def todo(*_):
        raise NotImplementedError

    for check in (check_calls_formula, check_overflows_at, check_rule_check, check_summary_cap):
        assert check(todo).status == NOT_DONE
        assert "hint:" not in capsys.readouterr().out
        check(todo, hint=True)
        out = capsys.readouterr().out
        assert "not done yet" in out and "\n  hint: " in out and not FORMULA.search(out), out
