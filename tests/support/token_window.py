"""A fourth memory kind, written as docs/architecture.md's recipe says, to test the design: a sliding window
capped in tokens. Before a message would take the window past ``max_window_tokens``, the oldest whole turns are
dropped; a turn larger than the whole budget is kept (never cut) and its turn line says it is over budget.
Registered in tests only, with ``registry.registered(TokenWindowMemory)`` (a kind of the course would carry
``@register`` and one line in ``helpers/memory/__init__.py``)."""
from __future__ import annotations

import dataclasses
from typing import Any

from helpers.memory.rolling import RollingMemory
from helpers.memory.types import FoldEvent, MemoryDefences, MemoryKind, MemorySnapshot, check_count


def _turn_line(record: Any) -> str:
    s = record.snapshot
    line = (f"[Turn {record.turn}] prompt_tokens: {record.prompt_tokens} | window: {s.verbatim_tokens}/{s.budget} "
            f"tokens in {s.verbatim_messages} messages | trims: {s.folds}")
    return line + (" | OVER BUDGET: one turn alone is larger than the window" if s.over_budget else "")


def _fold_line(event: FoldEvent) -> str:
    return (f"  [{TokenWindowMemory.KIND.fold_tag}] {event.messages_folded} messages ({event.message_tokens} tokens) "
            "left the window")


class TokenWindowMemory(RollingMemory):
    """The most recent whole turns that fit in ``max_window_tokens``, word for word; older turns are dropped."""

    KIND = MemoryKind(name="token window", heading=None, fold_tag="TRIM", turn_line=_turn_line,
                      fold_line=_fold_line, recent_label="window", attack_settings={"max_window_tokens": 250})

    def __init__(self, system_prompt: str, *, max_window_tokens: int = 600,
                 defences: MemoryDefences | None = None) -> None:
        check_count("max_window_tokens", max_window_tokens, 1, "the window needs room for at least one token")
        super().__init__(system_prompt, defences=defences)
        self.max_window_tokens = max_window_tokens

    def snapshot(self) -> MemorySnapshot:
        budget = self.max_window_tokens
        return dataclasses.replace(super().snapshot(), budget=budget, over_budget=self.verbatim_tokens > budget)

    def messages_to_fold(self, incoming_tokens: int) -> int:
        """How many of the oldest messages leave before a message of ``incoming_tokens`` is stored: whole turns."""
        held, tokens, n = self.verbatim_records, self.verbatim_tokens, 0
        while n + 2 <= len(held) and tokens + incoming_tokens > self.max_window_tokens:
            tokens -= held[n].tokens + held[n + 1].tokens
            n += 2
        return n

    def add_message(self, role: str, content: str) -> None:
        """Drop the oldest whole turns while this message would not fit, then store it."""
        message = self.checked_message(role, content)
        if n_messages := self.messages_to_fold(message.tokens):
            self._fold(n_messages)
        self._store(message)
