"""Feedback for the notebooks' exercises: a check cell says whether the answer is right, and if not, what is wrong.

An exercise cell starts with ``answer = ...`` (Python's Ellipsis, "not written yet"); its check
cell calls ``feedback(...)``, which prints one of three verdicts, always the same for the same
answer, so a notebook stored with the exercise not yet done passes nbval:

    [exercise 1] not done yet: replace the ... with your answer, then run this cell again.
    [exercise 1] correct: ...
    [exercise 1] not yet: ... (what is wrong, and a hint)
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from helpers.base.bounded import TimedOut, TooManyCalls, run_bounded

NOT_DONE = "not done yet"
CORRECT = "correct"
WRONG = "not yet"


@dataclass(frozen=True)
class Feedback:
    """The verdict on one answer: ``status`` is one of NOT_DONE, CORRECT, WRONG."""

    exercise: str
    status: str
    message: str

    @property
    def correct(self) -> bool:
        return self.status == CORRECT

    def __str__(self) -> str:
        return f"[exercise {self.exercise}] {self.status}: {self.message}"


def is_unanswered(answer: Any) -> bool:
    """True for the placeholder an exercise starts with (``...``) or an answer left as None."""
    return answer is Ellipsis or answer is None


def judge(exercise: str, answer: Any, expected: Any, *, right: str, hint: str,
          explain: Callable[[Any], str] | None = None, todo: str = "replace the ... with your answer") -> Feedback:
    """Compare ``answer`` with ``expected``. ``right`` is said when they match; otherwise the message
    says what the answer was (``explain(answer)`` if given) and gives the ``hint``."""
    if is_unanswered(answer):
        return Feedback(exercise, NOT_DONE, f"{todo}, then run this cell again.")
    if answer == expected:
        return Feedback(exercise, CORRECT, right)
    said = explain(answer) if explain else f"your answer is {answer!r}"
    return Feedback(exercise, WRONG, f"{said}. {hint}")


def feedback(exercise: str, answer: Any, expected: Any, *, right: str, hint: str,
             explain: Callable[[Any], str] | None = None, todo: str = "replace the ... with your answer") -> Feedback:
    """``judge`` and print the verdict (the check cells call this); returns the ``Feedback``."""
    verdict = judge(exercise, answer, expected, right=right, hint=hint, explain=explain, todo=todo)
    print(verdict)
    return verdict


def run_answer(exercise: str, function: Callable[..., Any], *args: Any, seconds: float = 2.0,
               todo: str = "write the body of the function", **kwargs: Any) -> Any:
    """The student's ``function(*args, **kwargs)``, run with a time bound; or, instead of its result, the
    ``Feedback`` that says it is not written yet, ran too long, called something too often, or raised.

    A check calls this for each case and returns the ``Feedback`` (printed with ``show``) when it gets one.
    """
    name = getattr(function, "__name__", "function")
    try:
        result = run_bounded(function, *args, seconds=seconds, **kwargs)
    except NotImplementedError:
        return Feedback(exercise, NOT_DONE, f"{todo}, then run this cell again.")
    except TimedOut as stopped:
        return Feedback(exercise, WRONG, (
            f"{name} was still running after {stopped.seconds:g} seconds, so the check stopped it: a loop that "
            "never ends? Make sure each pass of a while loop brings it closer to its end (the value it tests "
            "must change inside the loop), or use a for loop over a fixed number of steps."))
    except TooManyCalls as stopped:
        return Feedback(exercise, WRONG, (
            f"{name} called {stopped.what} more than {stopped.limit} time{'s' if stopped.limit != 1 else ''}, "
            "so the check stopped it. Each call is a model call that costs time and money: work out first "
            "what to hand over, then call it once."))
    except Exception as error:  # a student's code may raise anything; say what it was
        return Feedback(exercise, WRONG, f"{name} raised {type(error).__name__}: {error}")
    if result is Ellipsis:
        return Feedback(exercise, NOT_DONE, f"{todo}, then run this cell again.")
    return result


def show(verdict: Feedback) -> Feedback:
    """Print a verdict and return it (the last line of every check)."""
    print(verdict)
    return verdict
