"""Summarisers for memory tests: a recording stub and ones that fail on purpose."""
from __future__ import annotations

from helpers.memory.stubs import turn_range_stub


class RecordingStub:
    """turn_range_stub that also remembers every call it received."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[dict], str | None]] = []

    def __call__(self, messages, existing_summary):
        self.calls.append((list(messages), existing_summary))
        return turn_range_stub(messages, existing_summary)


class FlakySummariser:
    """Fails (by raising or returning empty text) while ``failing`` is True, else acts as the stub."""

    def __init__(self, mode: str = "raise") -> None:
        self.failing = True
        self.mode = mode

    def __call__(self, messages, existing_summary):
        if self.failing:
            if self.mode == "raise":
                raise ConnectionError("network down")
            return "   "
        return turn_range_stub(messages, existing_summary)
