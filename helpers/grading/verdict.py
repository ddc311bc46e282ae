"""What an exercise check says, and how a notebook shows it: what is wrong first, on the smallest case found;
the hint on a second failure of the same exercise in this kernel, or at once with ``hint=True``; no message
gives the formula or the algorithm away."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

NOT_DONE = "not done yet"
CORRECT = "correct"
WRONG = "not yet"

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


@dataclass(frozen=True)
class Mistake:
    """A wrong answer a check knows: its name, the wrong rule, what is wrong (said at once), a hint (held back)."""

    name: str
    rule: Callable[..., Any] | None
    says: str
    hint: str

    def verdict(self, exercise: str, example: str, also: str = "") -> Feedback:
        """The WRONG verdict: ``example`` (the smallest case that shows the mistake), then what is wrong."""
        return Feedback(exercise, WRONG, f"{example} {self.says[0].upper()}{self.says[1:]}{also}.", self.hint,
                        self.name)


def show(verdict: Feedback, hint: bool | None = None, check: str = "", answer: str = "") -> Feedback:
    """Print ``verdict`` and return it, with the hint if ``hint`` is true or (``None``) if this exercise has
    already failed once in this kernel; ``check(answer, hint=True)`` is the call that asks for it."""
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
