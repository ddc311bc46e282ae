"""The grading layer's runner and verdicts: a loop that never ends is stopped, on one line too, and a debugger's
trace function survives it; the hint waits for a second failure; nbgrader's autograder gets an AssertionError;
exercise 7.1's verdicts on a three-turn conversation."""
import sys
import time

import pytest

from helpers.base.bounded import TimedOut, TooManyCalls, limit_calls, run_bounded
from helpers.grading import capstone, runner
from helpers.grading.capstone import judge_cheapest
from helpers.grading.runner import CORRECT, NOT_DONE, WRONG, Feedback, forget_failures, run_answer, show, try_it


@pytest.fixture(autouse=True)
def fresh_kernel(monkeypatch):
    forget_failures()
    monkeypatch.setattr(runner, "SECONDS", 0.1)


def test_the_hint_comes_with_the_second_failure_or_on_request(capsys):
    wrong = Feedback("9.9", WRONG, "your answer is 4, the memory makes 3.", hint="count the calls by hand")
    show(wrong, check="check_x", answer="f")
    first = capsys.readouterr().out
    assert first.startswith("[exercise 9.9] not yet: your answer is 4") and "check_x(f, hint=True)" in first
    show(wrong)
    assert "  hint: count the calls by hand" in capsys.readouterr().out
    show(Feedback("8.8", WRONG, "no", hint="h"), hint=False)
    show(Feedback("9.9", CORRECT, "three calls", hint="never shown"), hint=True)
    out = capsys.readouterr().out
    assert "hint: h" not in out and out.endswith("[exercise 9.9] correct: three calls\n")


def test_under_nbgrader_a_verdict_that_is_not_correct_raises_after_printing(monkeypatch, capsys):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    show(Feedback("9.9", CORRECT, "right"))
    for status in (WRONG, NOT_DONE):
        with pytest.raises(AssertionError, match=f"exercise 9.9. {status}: wrong"):
            show(Feedback("9.9", status, "wrong"))
    assert capsys.readouterr().out.count("[exercise 9.9]") == 3


def test_a_loop_that_never_ends_is_stopped_and_a_debuggers_tracer_survives():
    def runaway():
        while True:
            try:
                pass
            except Exception:  # a student's catch-all must not swallow the stop
                pass

    def debugger(frame, event, arg):
        return None
    exec("def one_line():\n    while True: pass", namespace := {})
    sys.settrace(debugger)
    try:
        for loop in (runaway, namespace["one_line"]):
            started = time.process_time()  # CPU seconds: a spinning loop spends them, the machine's load does not
            with pytest.raises(TimedOut) as stopped:
                run_bounded(loop, seconds=0.1)
            assert stopped.value.seconds == 0.1 and time.process_time() - started < 5
            assert sys.gettrace() is debugger
    finally:
        sys.settrace(None)
    assert run_bounded(lambda x: x + 1, 1, seconds=5) == 2


def test_each_way_of_failing_becomes_a_verdict(capsys):
    def loops():
        while True:
            pass

    def calls_too_often(summarise):
        while True:
            summarise()

    def raises():
        return [][1]
    twice = limit_calls(lambda: "s", 2, "the summariser")
    assert twice() == twice() == "s" and twice.calls == 2
    with pytest.raises(TooManyCalls):
        twice()
    verdicts = [run_answer("9.9", f, *args) for f, args in ((loops, ()), (calls_too_often, (twice,)), (raises, ()))]
    assert [(v.status, v.mistake) for v in verdicts] == [(WRONG, "never ends"), (WRONG, "too many calls"),
                                                         (WRONG, "raises")]
    assert "still running after 0.1 seconds" in verdicts[0].message and "IndexError" in verdicts[2].message
    assert run_answer("9.9", lambda: ...).status == NOT_DONE and run_answer("9.9", lambda a, b: a * b, 6, 7) == 42
    try_it(lambda summary: print("working") or summary.upper(), "a summary")
    try_it(loops)
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == ["working", "A SUMMARY"] and out[2].startswith("loops: loops was still running after 0.1")


def test_exercise_7_1_on_a_three_turn_conversation():
    from helpers.measure.ledger import Fact, Ledger
    from helpers.measure.transcript import Transcript
    from helpers.memory.registry import kind_named

    def make(kind, settings):
        cls = kind_named(kind)
        return cls.create("S", (lambda messages, old: "User ASHA.") if cls.KIND.heading else None, settings)
    SMALL = Transcript(("I'm ASHA.", "hi", "ok"), ("fine", "yes", "done"))
    SMALL_LEDGER = Ledger((Fact("name", "name", 1, ("ASHA",)), Fact("greeting", "name", 2, ("hi",))))
    capstone.search.cache_clear()
    assert judge_cheapest(..., make, SMALL, SMALL_LEDGER).status == NOT_DONE
    assert "not a memory kind" in judge_cheapest(("buffer", {}), make, SMALL, SMALL_LEDGER).message
    assert "refused" in judge_cheapest(["sliding window", {"window_turns": 0}], make, SMALL, SMALL_LEDGER).message
    assert "name (absent)" in judge_cheapest(({"window_turns": 1}, "Sliding_Window"), make, SMALL, SMALL_LEDGER).message
    full = judge_cheapest(("sliding window", {"window_turns": 3}), make, SMALL, SMALL_LEDGER)
    assert full.status == WRONG and "no less than the full buffer" in full.message and full.hint
    late = Ledger((Fact("greeting", "name", 2, ("hi",)),))  # turn 2's fact only: windows of 2 and 3 keep it
    assert judge_cheapest(("sliding window", {"window_turns": 2}), make, SMALL, late).status == CORRECT
    last = Ledger((Fact("ok", "name", 3, ("ok",)),))  # turn 3's fact only: a window of 1 keeps it, far cheaper
    verdict = judge_cheapest(("sliding window", {"window_turns": 2}), make, SMALL, last)
    assert verdict.status == WRONG and "must save at least 50%" in verdict.message
