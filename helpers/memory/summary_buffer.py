"""Lesson 4's summary buffer memory: fold before a token budget would overflow."""
from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from helpers.memory.rolling import RollingSummaryMemory
from helpers.memory.types import MemorySnapshot, Summariser, SummariserError
from helpers.memory.validation import check_count


class SummaryBufferMemory(RollingSummaryMemory):
    """Lesson 4: the verbatim buffer is capped in tokens; before a message would pass the cap, the
    oldest whole turns (at least ``messages_to_compress_on_overflow`` messages, more if the new
    message still would not fit) are merged into the summary by one summariser call.

    A turn bigger than the whole budget is never cut or lost: everything older is folded, the turn
    stays verbatim, and ``over_budget`` reports it until the next overflow folds it.
    """

    summary_heading: ClassVar[str] = "CONVERSATION MEMORY (earlier turns, compressed):\n"
    COUNTERS: ClassVar[tuple[str, ...]] = ("summary_count", "overflow_count")

    def __init__(self, system_prompt: str, summarise: Summariser, max_buffer_tokens: int = 600,
                 messages_to_compress_on_overflow: int = 4, max_summary_tokens: int | None = None,
                 **defences: Any) -> None:
        check_count("max_buffer_tokens", max_buffer_tokens, 1, "the buffer needs room for at least one token")
        check_count("messages_to_compress_on_overflow", messages_to_compress_on_overflow, 2,
                    "only whole user/assistant pairs leave the buffer, so an overflow compresses at least 2")
        if messages_to_compress_on_overflow % 2:
            raise ValueError(
                f"messages_to_compress_on_overflow must be even, got {messages_to_compress_on_overflow}: "
                "only whole user/assistant pairs leave the buffer")
        super().__init__(system_prompt, summarise, max_summary_tokens, **defences)  # placement=, pinned_rules=, ...
        self.max_buffer_tokens = max_buffer_tokens
        self.messages_to_compress_on_overflow = messages_to_compress_on_overflow
        self.overflow_count = 0

    def settings(self) -> dict[str, Any]:
        return {"max_buffer_tokens": self.max_buffer_tokens,
                "messages_to_compress_on_overflow": self.messages_to_compress_on_overflow,
                "max_summary_tokens": self.max_summary_tokens, **self.defence_settings()}

    @property
    def buffer(self) -> list[dict[str, str]]:
        """The recent messages, word for word (same as ``verbatim``)."""
        return self.verbatim

    @property
    def buffer_tokens(self) -> int:
        return self._verbatim_tokens

    @property
    def over_budget(self) -> bool:
        """True when the buffer is over its budget: a turn too big to fit alone, or a failed fold."""
        return self._verbatim_tokens > self.max_buffer_tokens

    def snapshot(self) -> MemorySnapshot:
        return dataclasses.replace(super().snapshot(), max_buffer_tokens=self.max_buffer_tokens,
                                   overflow_count=self.overflow_count, over_budget=self.over_budget)

    def _check_loaded(self) -> None:
        if self.overflow_count != self.summary_count:
            raise ValueError(f"counters.overflow_count ({self.overflow_count}) must equal counters.summary_count "
                             f"({self.summary_count}): every overflow is one fold")
        held = len(self._archive) - self._verbatim_start
        if self.over_budget and held > 2 and not self._fold_pending:
            raise ValueError(
                f"the saved buffer holds {self._verbatim_tokens} tokens in {held} messages, over max_buffer_tokens "
                f"{self.max_buffer_tokens}: only the latest turn alone may pass the budget unless a fold failed "
                "(fold_pending is false)")

    def messages_to_fold(self, incoming_tokens: int) -> int:
        """How many of the oldest buffered messages an overflow folds before adding ``incoming_tokens``.

        0 means no overflow. Whole turns only; a reply's own question is never folded before it.
        """
        if self._verbatim_tokens + incoming_tokens <= self.max_buffer_tokens:
            return 0
        archive, start = self._archive, self._verbatim_start
        whole = (len(archive) - start) // 2 * 2
        n = min(self.messages_to_compress_on_overflow, whole)
        remaining = self._verbatim_tokens
        for message in archive[start:start + n]:
            remaining -= message.tokens
        while n < whole and remaining + incoming_tokens > self.max_buffer_tokens:
            remaining -= archive[start + n].tokens + archive[start + n + 1].tokens
            n += 2
        return n

    def add_message(self, role: str, content: str) -> None:
        """Fold the oldest turns first if this message would pass the budget, then store it.

        Raises ``SummariserError`` if that fold fails: the message is still stored (the buffer is
        over budget for now) and the fold is retried on the next message.
        """
        message = self._new_message(role, content)
        n = self.messages_to_fold(message.tokens)
        failure = None
        if n:
            try:
                self._fold(n)
                self.overflow_count += 1
            except SummariserError as error:
                failure = error
        self._append(message)
        if failure is not None:
            raise self._kept_error(failure, role) from failure
