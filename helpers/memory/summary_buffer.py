"""Lesson 4's summary buffer memory: fold before a token budget would overflow; its heading and lines."""
from __future__ import annotations

import dataclasses
from typing import Any

from helpers.memory.registry import register
from helpers.memory.summarising import SummarisingMemory
from helpers.memory.types import (FoldEvent, MemoryDefences, MemoryKind, MemorySnapshot, SettingError, Summariser,
                                  check_count)


def _turn_line(record: Any) -> str:
    """Lesson 4's turn line: ``[Turn 1] prompt_tokens: .. | summary: 0 tokens | buffer: 19/600 tokens in 1 message
    | overflows: 0`` (and what an over-budget buffer means)."""
    s = record.snapshot
    held = f"{s.verbatim_messages} message{'' if s.verbatim_messages == 1 else 's'}"
    return (f"[Turn {record.turn}] prompt_tokens: {record.prompt_tokens} | summary: {s.summary_tokens} tokens | "
            f"buffer: {s.verbatim_tokens}/{s.budget} tokens in {held} | overflows: {s.folds}"
            + (" | OVER BUDGET: kept whole, folded at the next overflow" if s.over_budget else ""))


def compress_line(tokens_in: int, summary_tokens: int, messages: int, old_summary: bool) -> str:
    """Lesson 4's fold line, e.g. ``  [COMPRESS] 2 messages + old summary (370 tokens) -> new summary (148 tokens)``
    (``tokens_in``: the messages plus the old summary); the lesson's published run prints so too."""
    what = f"{messages} message{'' if messages == 1 else 's'}" + (" + old summary" if old_summary else "")
    tag = SummaryBufferMemory.KIND.fold_tag
    return f"  [{tag}] {what} ({tokens_in} tokens) -> new summary ({summary_tokens} tokens)"


def _fold_line(event: FoldEvent) -> str:
    return compress_line(event.tokens_in, event.summary_tokens, event.messages_folded,
                         event.old_summary_tokens > 0) + event.notes()


@register
class SummaryBufferMemory(SummarisingMemory):
    """Lesson 4: before a message would take the buffer past ``max_buffer_tokens``, the oldest whole turns (at least
    ``messages_to_compress_on_overflow`` messages) are merged into the summary; a turn over the budget stays whole."""

    KIND = MemoryKind(
        name="summary buffer memory", heading="CONVERSATION MEMORY (earlier turns, compressed):\n",
        fold_tag="COMPRESS", turn_line=_turn_line, fold_line=_fold_line, summariser_prompt="summary_buffer",
        request_templates="lesson4", block_label="memory block", recent_label="buffer",
        # a budget the attack table's scripted conversation overflows (its replies are shorter than a model's)
        attack_settings={"max_buffer_tokens": 250, "messages_to_compress_on_overflow": 4})

    def __init__(self, system_prompt: str, summarise: Summariser, *, max_buffer_tokens: int = 600,
                 messages_to_compress_on_overflow: int = 4, max_summary_tokens: int | None = None,
                 defences: MemoryDefences | None = None) -> None:
        check_count("max_buffer_tokens", max_buffer_tokens, 1, "the buffer needs room for at least one token")
        check_count("messages_to_compress_on_overflow", messages_to_compress_on_overflow, 2,
                    "only whole user/assistant pairs leave the buffer, so an overflow compresses at least 2")
        if messages_to_compress_on_overflow % 2:
            raise SettingError("messages_to_compress_on_overflow", messages_to_compress_on_overflow, (
                f"messages_to_compress_on_overflow must be even, got {messages_to_compress_on_overflow}: "
                "only whole user/assistant pairs leave the buffer"))
        super().__init__(system_prompt, summarise, max_summary_tokens=max_summary_tokens, defences=defences)
        self.max_buffer_tokens = max_buffer_tokens
        self.messages_to_compress_on_overflow = messages_to_compress_on_overflow

    buffer = SummarisingMemory.verbatim  # lesson 4's names: the buffer is the verbatim part, an overflow a fold
    buffer_tokens = property(lambda self: self.verbatim_tokens)
    overflow_count = SummarisingMemory.summary_count

    over_budget = property(lambda self: self.verbatim_tokens > self.max_buffer_tokens,
                           doc="The buffer is over its budget: a turn too big to fit alone, or a failed fold.")

    def snapshot(self) -> MemorySnapshot:
        return dataclasses.replace(super().snapshot(), budget=self.max_buffer_tokens, over_budget=self.over_budget)

    def messages_to_fold(self, incoming_tokens: int) -> int:
        """How many of the oldest buffered messages an overflow folds before adding ``incoming_tokens`` (0: no
        overflow); whole turns only, so a reply's own question is never folded before it."""
        room = self.max_buffer_tokens - incoming_tokens
        remaining = self.verbatim_tokens
        if remaining <= room:
            return 0
        held = self.verbatim_records
        whole = len(held) // 2 * 2
        n = min(self.messages_to_compress_on_overflow, whole)
        remaining -= sum(m.tokens for m in held[:n])
        while n < whole and remaining > room:
            remaining -= held[n].tokens + held[n + 1].tokens
            n += 2
        return n

    def add_message(self, role: str, content: str) -> None:
        """Fold the oldest turns first if this message would pass the budget, then store it (stored even if the
        fold fails: ``SummariserError`` says so, and the fold is retried on the next message)."""
        message = self.checked_message(role, content)
        failure = self._try_fold(self.messages_to_fold(message.tokens), role)
        self._store(message)
        if failure:
            raise failure
