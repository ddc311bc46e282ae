"""The exercise checker gives three distinct, deterministic verdicts, and stops an answer that hangs or loops."""
import time

import pytest

from helpers.base.bounded import TimedOut, TooManyCalls, limit_calls, run_bounded
from helpers.display.exercise import CORRECT, NOT_DONE, WRONG, Feedback, feedback, judge, run_answer


def test_an_untouched_answer_is_not_done():
    assert judge("1", ..., 3, right="yes", hint="h").status == NOT_DONE
    assert judge("1", None, 3, right="yes", hint="h").status == NOT_DONE


def test_a_right_answer_is_correct_and_a_wrong_one_says_what_was_wrong(capsys):
    assert feedback("2", 3, 3, right="three calls", hint="count again").status == CORRECT
    wrong = feedback("2", 4, 3, right="three calls", hint="count again", explain=lambda a: f"you said {a} calls")
    assert wrong.status == WRONG and "you said 4 calls" in str(wrong) and "count again" in str(wrong)
    printed = capsys.readouterr().out.splitlines()
    assert printed == ["[exercise 2] correct: three calls", str(wrong)]


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
    assert run_answer("9.9", lambda a, b: a * b, 6, 7) == 42
