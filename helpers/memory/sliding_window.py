"""The course's sliding window (the lesson before lesson 3): the last ``window_turns`` turns, word for word; older
turns are dropped (kept in the archive, never sent again), which is how lesson 3's salary is lost by turn 6."""
from __future__ import annotations

from typing import Any

from helpers.memory.registry import register
from helpers.memory.rolling import RollingMemory
from helpers.memory.types import FoldEvent, MemoryDefences, MemoryKind, check_count


def _turn_line(record: Any) -> str:
    """The window's turn line, in lesson 3's style:
    ``[Turn 6] messages sent: 9 | prompt_tokens: .. | turns in the window: 4 | salary in a verbatim turn: False``."""
    return (f"[Turn {record.turn}] messages sent: {record.messages_sent} | prompt_tokens: {record.prompt_tokens} | "
            f"turns in the window: {(record.snapshot.verbatim_messages + 1) // 2}"
            + (f" | {record.watched[0]} in a verbatim turn: {record.watched[1]}" if record.watched else ""))


def _fold_line(event: FoldEvent) -> str:
    """The window's fold line: ``  [DROP] 2 messages (42 tokens) left the window (kept in the archive)``."""
    return (f"  [{SlidingWindowMemory.KIND.fold_tag}] {event.messages_folded} messages ({event.message_tokens} "
            "tokens) left the window (kept in the archive)")


@register
class SlidingWindowMemory(RollingMemory):
    """The last ``window_turns`` turns, word for word; older turns are dropped before a new turn starts."""

    KIND = MemoryKind(name="sliding window", heading=None, fold_tag="DROP", turn_line=_turn_line,
                      fold_line=_fold_line, block_label="memory block", recent_label="window",
                      attack_settings={"window_turns": 4})

    def __init__(self, system_prompt: str, *, window_turns: int = 4, defences: MemoryDefences | None = None) -> None:
        check_count("window_turns", window_turns, 1, "the request needs the turn being asked")
        super().__init__(system_prompt, defences=defences)
        self.window_turns = window_turns

    def add_message(self, role: str, content: str) -> None:
        """Store the message; a user message that starts a turn past the window first drops the oldest turns."""
        message = self.checked_message(role, content)
        if n_messages := self.messages_to_fold(role):
            self._fold(n_messages)
        self._store(message)

    def messages_to_fold(self, role: str) -> int:
        """How many of the oldest messages leave the window before a ``role`` message is stored (0: none)."""
        held = self.verbatim_messages // 2  # complete turns in the window
        return 2 * (held - self.window_turns + 1) if role == "user" and held >= self.window_turns else 0
