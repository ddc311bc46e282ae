"""What an exercise check says, and how a notebook shows it: what is wrong first, a hint only later.

A check returns a ``Feedback`` and prints it with ``show``. The first failure of an exercise says what
is wrong, on the smallest case the check found; the hint comes with a second failure of the same
exercise in the same kernel, or at once when the check is called with ``hint=True``. No message gives
the formula or the algorithm: the student still writes the answer.

    [exercise 4.1] not done yet: write the body of overflows_at, then run this cell again.
    [exercise 4.1] correct: ...
    [exercise 4.1] not yet: ... (what is wrong, and where)
"""
from __future__ import annotations

import dataclasses
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

    def with_hint(self, hint: str) -> Feedback:
        """The same verdict with another hint (a check's own hint replaces the runner's general one)."""
        return dataclasses.replace(self, hint=hint)

    def shown(self, hint: bool, ask: str = "hint=True") -> str:
        """The text a notebook prints: the verdict, and the hint when ``hint`` is true (``ask`` is how to ask
        for it, e.g. ``check_overflows_at(overflows_at, hint=True)``)."""
        if self.status == CORRECT or not self.hint:
            return str(self)
        if hint:
            return f"{self}\n  hint: {self.hint}"
        if self.status == WRONG:
            return f"{self}\n  (a hint comes with the next try, or now with {ask})"
        return str(self)


def is_unanswered(answer: Any) -> bool:
    """True for the placeholder an exercise starts with (``...``) or an answer left as None."""
    return answer is Ellipsis or answer is None


def show(verdict: Feedback, hint: bool | None = None, check: str = "", answer: str = "") -> Feedback:
    """Print ``verdict`` and return it. The hint is printed when ``hint`` is true, or (``hint=None``)
    when this exercise has already failed once in this kernel; ``check`` and ``answer`` name the call that
    asks for it."""
    earlier = _failures.get(verdict.exercise, 0)
    if verdict.status == WRONG:
        _failures[verdict.exercise] = earlier + 1
    ask = f"{check}({answer}, hint=True)" if check else "hint=True"
    print(verdict.shown(bool(hint) if hint is not None else verdict.status == WRONG and earlier > 0, ask))
    return verdict


def forget_failures() -> None:
    """Start every exercise afresh, as in a new kernel (tests use it; a student never needs to)."""
    _failures.clear()
