"""Summarisers and conversations for memory tests: a recording stub and ones that fail on purpose."""
from __future__ import annotations

from helpers.memory.stubs import turn_range_stub

SYSTEM = "You are a test assistant."


def run_turns(memory, turns, reply=lambda i: f"reply {i}"):
    for i in range(1, turns + 1):
        memory.add_message("user", f"turn {i}")
        memory.add_message("assistant", reply(i))


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
        self.failing, self.mode = True, mode

    def __call__(self, messages, existing_summary):
        if not self.failing:
            return turn_range_stub(messages, existing_summary)
        if self.mode == "raise":
            raise ConnectionError("network down")
        return "   "
