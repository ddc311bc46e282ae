"""What an exercise check says and how it runs a student's answer, bounded in time and calls: ``run_answer``, one
case loop and comparison for every check (``Exercise``), the hint on a second failure; ``try_it`` for a cell."""
from __future__ import annotations

import contextlib
import dataclasses
import io
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from helpers.base.bounded import TimedOut, TooManyCalls, run_bounded

NOT_DONE = "not done yet"
CORRECT = "correct"
WRONG = "not yet"
SECONDS = 2.0  # per call of the student's function: far more than a right answer needs
TOTAL_SECONDS = 30.0  # for all the calls of one check together
_failures: dict[str, int] = {}  # failed checks per exercise in this kernel: the second one brings the hint


@dataclass(frozen=True)
class Feedback:
    """The verdict on one answer: ``status`` is NOT_DONE, CORRECT or WRONG; ``mistake`` names the known
    slip the answer shows (None if it shows none the check knows); ``hint`` is held back until asked for."""

    exercise: str
    status: str
    message: str
    hint: str = ""
    mistake: str | None = None

    def __str__(self) -> str:
        return f"[exercise {self.exercise}] {self.status}: {self.message}"

    def on(self, where: str) -> Feedback:
        """This verdict with the case it failed on added to its message."""
        return dataclasses.replace(self, message=f"{self.message.rstrip('.')} (on {where}).")


@dataclass(frozen=True)
class Mistake:
    """A wrong answer a check knows: its name, the wrong rule, what is wrong (said at once), a hint (held back)."""

    name: str
    rule: Callable[..., Any] | None
    says: str
    hint: str

    def verdict(self, exercise: str, example: str) -> Feedback:
        """The WRONG verdict: ``example`` (the smallest case that shows the mistake), then what is wrong."""
        return Feedback(exercise, WRONG, f"{example} {self.says[0].upper()}{self.says[1:]}.", self.hint, self.name)


def show(verdict: Feedback, hint: bool | None = None, check: str = "", answer: str = "") -> Feedback:
    """Print ``verdict`` and return it, with the hint if ``hint`` or (``None``) on a second failure in this kernel."""
    earlier = _failures.get(verdict.exercise, 0)
    if verdict.status == WRONG:
        _failures[verdict.exercise] = earlier + 1
    text = str(verdict)
    if verdict.status != CORRECT and verdict.hint:
        if hint or (hint is None and verdict.status == WRONG and earlier):
            text += f"\n  hint: {verdict.hint}"
        elif verdict.status == WRONG:
            ask = f"{check}({answer}, hint=True)" if check else "hint=True"
            text += f"\n  (a hint comes with the next try, or now with {ask})"
    print(text)
    return verdict


def forget_failures() -> None:
    """Start every exercise afresh, as in a new kernel (tests use it; a student never needs to)."""
    _failures.clear()


class Clock:
    """The time a check has left: each call gets at most ``per_call`` seconds, all of them ``total``."""

    def __init__(self, per_call: float = SECONDS, total: float = TOTAL_SECONDS) -> None:
        self.per_call, self.total = per_call, total
        self.ends = time.monotonic() + total

    def seconds(self) -> float:
        """The bound for the next call (0 when the check has used all its time)."""
        return max(0.0, min(self.per_call, self.ends - time.monotonic()))


def name_of(function: Any, default: str = "function") -> str:
    """The name a verdict calls the student's function by (``default`` for a lambda or a thing with no name)."""
    name = getattr(function, "__name__", "")
    return name if isinstance(name, str) and name.isidentifier() else default


def quietly(function: Callable[..., Any], name: str | None = None) -> Callable[..., Any]:
    """``function`` with its printing swallowed (a check runs it hundreds of times), under the name a verdict uses."""
    def quiet(*args: Any, **kwargs: Any) -> Any:
        with contextlib.redirect_stdout(io.StringIO()):
            return function(*args, **kwargs)
    quiet.__name__ = name or name_of(function)
    return quiet


class Misuse(Exception):
    """Raised by what a check hands the student's code (a summariser) when it is called wrongly: a verdict."""

    def __init__(self, message: str, hint: str, mistake: str) -> None:
        super().__init__(message)
        self.hint, self.mistake = hint, mistake


def run_answer(exercise: str, function: Callable[..., Any], *args: Any, seconds: float = SECONDS,
               clock: Clock | None = None, todo: str = "write the body of the function", start: str = "",
               **kwargs: Any) -> Any:
    """The student's ``function(*args, **kwargs)`` run with a time bound (``seconds``, or what ``clock`` has left),
    or the ``Feedback`` that replaces its result; ``start`` is the hint for an answer not written yet."""
    name = name_of(function)
    not_done = Feedback(exercise, NOT_DONE, f"{todo}, then run this cell again.", start)
    slow = Feedback(exercise, WRONG, (
        f"{name} took more than {clock.total if clock else TOTAL_SECONDS:g} seconds for the cases so far, so the "
        "check stopped; a right answer needs far less than a second for all of them."),
        "is there a loop that runs many more times than it needs?", "too slow")
    if clock and clock.seconds() <= 0:
        return slow
    try:
        result = run_bounded(function, *args, seconds=clock.seconds() if clock else seconds, **kwargs)
    except NotImplementedError:
        return not_done
    except TimedOut as stopped:
        return slow if clock and clock.seconds() <= 0 else Feedback(exercise, WRONG, (
            f"{name} was still running after {stopped.seconds:g} seconds, so the check stopped it: a loop that "
            "never ends?"), "in a while loop, the value the loop tests must change on every pass, or the loop never "
            "ends; a for loop over a fixed number of steps always does", "never ends")
    except TooManyCalls as stopped:
        return Feedback(exercise, WRONG, (
            f"{name} called {stopped.what} more than {stopped.limit} time{'s' if stopped.limit != 1 else ''}, "
            "so the check stopped it. Each call is a model call that costs time and money."),
            "work out what to hand over first, then make the call, and keep what it returns in a variable",
            "too many calls")
    except Misuse as misuse:
        return Feedback(exercise, WRONG, str(misuse), misuse.hint, misuse.mistake)
    except Exception as error:  # a student's code may raise anything; say what it was
        return Feedback(exercise, WRONG, f"{name} raised {type(error).__name__}: {error}", (
            "run your function on the case above in a cell of its own and read the traceback: it names the line"),
            "raises")
    return not_done if result is Ellipsis else result


@dataclass(frozen=True)
class Exercise:
    """One exercise's check as data: its cases, the answer's arguments on a case, what to say while the answer is
    not written (``todo``, with ``start`` as its hint), its named mistakes and the hint for a slip with no name."""

    number: str
    cases: tuple[Any, ...]
    arguments: Callable[[Any], tuple]
    todo: str
    start: str
    mistakes: tuple[Mistake, ...] = ()
    hint: str = ""
    noun: str = "cases"
    spread: bool = False  # a mistake's rule takes the case's items (True) or the case itself

    def runs(self, function: Callable[..., Any], cases: tuple[Any, ...] = ()) -> Iterator[tuple[Any, tuple, Any]]:
        """Each case (``cases`` or all), the answer's arguments and what ``run_answer`` returned: one ``Clock``."""
        clock, quiet = Clock(), quietly(function)
        for case in cases or self.cases:
            args = self.arguments(case)
            yield case, args, run_answer(self.number, quiet, *args, clock=clock, todo=self.todo, start=self.start)

    def answers(self, function: Callable[..., Any], refuse: Callable[[Any, tuple, Any], Feedback | None] | None = None,
                where: Callable[[Any], str] | None = None) -> list[Any] | Feedback:
        """What ``function`` returns on every case, or the verdict that stops the check (a failed run, ``refuse``)."""
        found = []
        for case, args, result in self.runs(function):
            if isinstance(result, Feedback):
                return result.on(where(case)) if where and result.status == WRONG else result
            verdict = refuse and refuse(case, args, result)
            if verdict:
                return verdict
            found.append(result)
        return found

    def known(self, answers: list[Any], example: str) -> Feedback:
        """The verdict naming the mistake whose rule gives exactly ``answers``, or a wrong one with no name."""
        known = next((m for m in self.mistakes
                      if [m.rule(*case) if self.spread else m.rule(case) for case in self.cases] == answers), None)
        return known.verdict(self.number, example) if known else Feedback(self.number, WRONG, example, self.hint)

    def compare(self, answers: list[Any], right: Callable[[Any], Any], correct: str,
                example: Callable[[Any, Any], str], key: Callable[[Any], Any] = lambda case: case) -> Feedback:
        """CORRECT if every answer is ``right(case)``, else the smallest differing case (``key``) and its mistake."""
        wrong = [index for index, case in enumerate(self.cases) if answers[index] != right(case)]
        if not wrong:
            return Feedback(self.number, CORRECT, correct)
        index = min(wrong, key=lambda index: key(self.cases[index]))
        return self.known(answers, f"{len(wrong)} of {len(self.cases)} {self.noun} differ. The smallest: "
                                   f"{example(self.cases[index], answers[index])}")


def checker(grade: Callable[[Any], Feedback], check: str, answer: str) -> Callable[..., Feedback]:
    """The check a notebook calls: ``grade``'s verdict, printed and returned (``answer``: the function's name)."""
    def check_answer(function: Any, *, hint: bool | None = None) -> Feedback:
        return show(grade(function), hint, check, name_of(function, answer))
    check_answer.__name__ = check_answer.__qualname__ = check
    check_answer.__doc__ = f"{grade.__doc__} Prints the verdict and returns it."
    return check_answer


def try_it(function: Callable[..., Any], *args: Any, seconds: float = SECONDS, **kwargs: Any) -> None:
    """Run the student's ``function(*args, **kwargs)`` once, bounded, and print what it returned or what went wrong."""
    result = run_answer("try", function, *args, seconds=seconds, **kwargs)
    if not isinstance(result, Feedback):
        print(result if isinstance(result, str) else repr(result))
    elif result.status == NOT_DONE:
        print(f"{name_of(function)} is not written yet: write its body, then run this cell again.")
    else:
        print(f"{name_of(function)}: {result.message}")
