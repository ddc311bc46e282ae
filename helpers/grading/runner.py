"""What an exercise check says (``Feedback``, printed by ``show``, the hint on a second failure) and how it runs the
student's answer, bounded in time and calls (``run_answer``), on every case of one check loop (``Exercise.grade``).
Under nbgrader's autograder (``NBGRADER_EXECUTION`` set) a verdict other than correct raises an ``AssertionError``
holding the printed feedback, so the graded cell scores nothing; elsewhere the verdict is only printed."""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import io
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from helpers.base.bounded import TimedOut, TooManyCalls, run_bounded

NOT_DONE, CORRECT, WRONG = "not done yet", "correct", "not yet"
SECONDS, TOTAL_SECONDS = 2.0, 8.0  # per call of the student's function, and for all the calls of one check
_failures: dict[str, int] = {}  # failed checks per exercise in this kernel: the second one brings the hint
forget_failures = _failures.clear  # every exercise afresh, as in a new kernel (for tests)


@dataclass(frozen=True)
class Feedback:
    """A verdict: ``status`` NOT_DONE, CORRECT or WRONG; ``mistake`` names the slip (None: no name); ``hint`` waits."""
    exercise: str
    status: str
    message: str
    hint: str = ""
    mistake: str | None = None

    def __str__(self) -> str:
        return f"[exercise {self.exercise}] {self.status}: {self.message}"

    def on(self, where: str) -> Feedback:
        return dataclasses.replace(self, message=f"{self.message.rstrip('.')} (on {where}).")


class Mistake(NamedTuple):
    """A wrong answer a check knows: its name, its rule (case -> answer), what is wrong (said at once) and a hint. A
    ``strict`` one is named when the answer is its rule on every case; another when on every case the answer misses."""
    name: str
    rule: Callable[[Any], Any]
    says: str
    hint: str
    strict: bool = True


def show(verdict: Feedback, hint: bool | None = None, check: str = "", answer: str = "") -> Feedback:
    """Print ``verdict`` and return it, with the hint if ``hint`` or (``None``) on a second failure in this kernel."""
    earlier = _failures.get(verdict.exercise, 0)
    _failures[verdict.exercise] = earlier + (verdict.status == WRONG)
    text = str(verdict)
    if verdict.status != CORRECT and verdict.hint:
        if hint or (hint is None and verdict.status == WRONG and earlier):
            text += f"\n  hint: {verdict.hint}"
        elif verdict.status == WRONG:
            ask = f"{check}({answer}, hint=True)" if check else "hint=True"
            text += f"\n  (a hint comes with the next try, or now with {ask})"
    print(text)
    if os.environ.get("NBGRADER_EXECUTION") and verdict.status != CORRECT:
        raise AssertionError(text)
    return verdict


def name_of(function: Any, default: str = "function") -> str:
    """The name a verdict calls the student's function by (``default`` for a lambda or a thing with no name)."""
    name = getattr(function, "__name__", "")
    return name if isinstance(name, str) and name.isidentifier() else default


class Misuse(Exception):
    """Raised by what a check hands the student's code (a summariser) when it is called wrongly: a verdict."""
    def __init__(self, message: str, hint: str, mistake: str) -> None:
        super().__init__(message)
        self.hint, self.mistake = hint, mistake


def run_answer(exercise: str, function: Callable[..., Any], *args: Any, ends: float | None = None, todo: str =
               "write the body of the function", start: str = "", read: Callable = lambda result: result,
               quiet: bool = True) -> Any:
    """``read(function(*args))`` within ``SECONDS`` and before ``ends``, its printing swallowed if ``quiet``, or the
    ``Feedback`` that replaces it; ``start`` is the hint for an answer not written."""
    name, ends = name_of(function), ends or time.monotonic() + TOTAL_SECONDS
    not_done = Feedback(exercise, NOT_DONE, f"{todo}, then run this cell again.", start)
    slow = Feedback(exercise, WRONG, f"{name} took more than {TOTAL_SECONDS:g} seconds for the cases so far, so the "
                    "check stopped; a right answer needs far less than a second for all of them.",
                    "is there a loop that runs many more times than it needs?", "too slow")

    def call() -> Any:
        with contextlib.redirect_stdout(io.StringIO()) if quiet else contextlib.nullcontext():
            return read(function(*args))
    try:
        left = min(SECONDS, ends - time.monotonic())
        result = run_bounded(call, seconds=left) if left > 0 else slow
    except NotImplementedError:
        return not_done
    except TimedOut as stopped:
        return slow if time.monotonic() >= ends else Feedback(
            exercise, WRONG, f"{name} was still running after {stopped.seconds:g} seconds, so the check stopped it: "
            "a loop that never ends?", "in a while loop, the value the loop tests must change on every pass, or the "
            "loop never ends", "never ends")
    except TooManyCalls as stopped:
        return Feedback(exercise, WRONG, f"{name} called {stopped.what} more than {stopped.limit} time"
                        f"{'s' * (stopped.limit != 1)}, so the check stopped it. Each call is a model call that costs "
                        "time and money.", "work out what to hand over first, then make the call once, and keep what "
                        "it returns in a variable", "too many calls")
    except Misuse as misuse:
        return Feedback(exercise, WRONG, str(misuse), misuse.hint, misuse.mistake)
    except Exception as error:  # a student's code may raise anything; say what it was
        return Feedback(exercise, WRONG, f"{name} raised {type(error).__name__}: {error}", "run your function on the "
                        "case above in a cell of its own and read the traceback: it names the line", "raises")
    return not_done if result is Ellipsis else result


def drawn(fixed: list, count: int, seed: int, draw: Callable[[random.Random, int], Any]) -> tuple:
    """The ``fixed`` cases, then ``count`` more that ``draw(rng, index)`` makes, each new one (``rng`` seeded)."""
    found, rng = list(fixed), random.Random(seed)
    while len(found) < len(fixed) + count:
        if (case := draw(rng, len(found) - len(fixed))) not in found:
            found.append(case)
    return tuple(found)


@functools.lru_cache(maxsize=1 << 16)
def _gives(rule: Callable[[Any], Any], case: Any) -> Any:
    return rule(case)  # a right rule or a mistake on one case, worked out once a kernel


@dataclass(frozen=True)
class Exercise:
    """One exercise's check as data: its cases, the answer's arguments on a case, the right rules (the first is the
    notebook's; an answer must give one of them on every case), the named mistakes, and what to say."""
    number: str
    cases: tuple[Any, ...]
    arguments: Callable[[Any], tuple]
    rights: tuple[Callable[[Any], Any], ...]
    todo: str
    start: str
    mistakes: tuple[Mistake, ...] = ()
    hint: str = ""
    noun: str = "cases"
    refuse: Callable[..., Feedback | None] = lambda name, case, args, result: None  # a result not to compare
    wanted: tuple[Callable[[Any], bool], str] | None = None  # what a result must be, and how the verdict says it
    read: Callable[[Any], Any] = lambda result: result  # the result as compared, made inside the time bound
    example: Callable[[Any, Any], str] = lambda case, mine: f"for {case!r} you say {mine!r}."
    key: Callable[[Any], Any] = lambda case: 0  # the smallest case that differs is shown
    correct: Callable[[int], str] = lambda rule: "every case right."  # what to say for right rule number ``rule``

    def grade(self, function: Callable[..., Any], where: Callable[[Any], str] | None = None) -> Feedback:
        """A failed run or a ``refuse``d one ends the check; then CORRECT if the answers are one right rule's on
        every case, else the smallest case that differs from the first rule's, with the mistake it shows."""
        answers, ends = [], time.monotonic() + TOTAL_SECONDS
        for case in self.cases:
            args = self.arguments(case)
            result = run_answer(self.number, function, *args, ends=ends, todo=self.todo, start=self.start,
                                read=self.read)
            if isinstance(result, Feedback):
                return result.on(where(case)) if where and result.status == WRONG else result
            if refused := self.refuse(name_of(function), case, args, result):
                return refused
            if self.wanted and not self.wanted[0](result):
                return Feedback(self.number, WRONG, f"{name_of(function)} returned {result!r:.80}, not "
                                f"{self.wanted[1]}" + (": did you forget `return`?" if result is None else ""),
                                "print what your function returns for the lesson's case", "wrong type").on(
                    where(case) if where else repr(case))
            answers.append(result)
        for number, right in enumerate(self.rights):
            if all(answer == _gives(right, case) for case, answer in zip(self.cases, answers)):
                return Feedback(self.number, CORRECT, self.correct(number))
        wrong = [i for i, answer in enumerate(answers) if answer != _gives(self.rights[0], self.cases[i])]
        index = min(wrong, key=lambda i: self.key(self.cases[i]))
        said = (f"{len(wrong)} of {len(self.cases)} {self.noun} differ. The smallest: "
                f"{self.example(self.cases[index], answers[index])}")
        for m in sorted(self.mistakes, key=lambda m: not m.strict):
            if all(_gives(m.rule, self.cases[i]) == answers[i] for i in (range(len(answers)) if m.strict else wrong)):
                return Feedback(self.number, WRONG, f"{said} {m.says[0].upper()}{m.says[1:]}.", m.hint, m.name)
        return Feedback(self.number, WRONG, said, self.hint)


def checker(grade: Callable[[Any], Feedback], answer: str) -> Callable[..., Feedback]:
    """The check a notebook calls (``grade_x`` gives ``check_x``): the verdict, printed and returned."""
    check = grade.__name__.replace("grade_", "check_")

    def check_answer(function: Any, *, hint: bool | None = None) -> Feedback:
        return show(grade(function), hint, check, name_of(function, answer))
    check_answer.__name__ = check_answer.__qualname__ = check
    check_answer.__doc__ = f"{grade.__doc__} Prints the verdict and returns it."
    return check_answer


def try_it(function: Callable[..., Any], *args: Any) -> None:
    """Run the student's ``function(*args)`` once, bounded, and print what it returned or what went wrong."""
    result = run_answer("try", function, *args, quiet=False)
    if not isinstance(result, Feedback):
        print(result if isinstance(result, str) else repr(result))
    else:
        print(f"{name_of(function)} is not written yet: write its body, then run this cell again."
              if result.status == NOT_DONE else f"{name_of(function)}: {result.message}")
