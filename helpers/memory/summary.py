"""Lesson 3's summary memory: fold by turn count; its heading and the lines the lesson prints."""
from __future__ import annotations

from typing import Any

from helpers.memory.registry import register
from helpers.memory.summarising import SummarisingMemory
from helpers.memory.types import FoldEvent, MemoryDefences, MemoryKind, SettingError, Summariser, check_count


def summary_memory_line(turn: int, messages_sent: int, prompt_tokens: int | None, summary_sent: bool,
                        watched: tuple[str, bool | None] | None = None) -> str:
    """Lesson 3's turn line, e.g. ``[Turn 1] messages sent: 2 | prompt_tokens: 229 | summary sent: False``, and
    `` | salary in a verbatim turn: True`` with ``watched`` (what, found); the lesson's published run prints so too."""
    line = (f"[Turn {turn}] messages sent: {messages_sent} | prompt_tokens: {prompt_tokens} | "
            f"summary sent: {summary_sent}")
    return line + (f" | {watched[0]} in a verbatim turn: {watched[1]}" if watched else "")


def summarise_line(messages: int, message_tokens: int, summary_tokens: int) -> str:
    """Lesson 3's fold line: ``  [SUMMARISE] 4 messages (489 tokens) -> summary (131 tokens)``."""
    return (f"  [{SummaryMemory.KIND.fold_tag}] {messages} messages ({message_tokens} tokens) -> "
            f"summary ({summary_tokens} tokens)")


def _turn_line(record: Any) -> str:
    return summary_memory_line(record.turn, record.messages_sent, record.prompt_tokens,
                               record.snapshot.summary is not None, record.watched)


def _fold_line(event: FoldEvent) -> str:
    return summarise_line(event.messages_folded, event.message_tokens, event.summary_tokens) + event.notes()


@register
class SummaryMemory(SummarisingMemory):
    """Lesson 3: after an assistant reply, once ``max_turns_before_summary`` turns are held verbatim,
    every turn but the last ``turns_to_keep_verbatim`` is folded into the summary."""

    KIND = MemoryKind(
        name="summary memory", heading="CONVERSATION SUMMARY (earlier turns):\n", fold_tag="SUMMARISE",
        turn_line=_turn_line, fold_line=_fold_line, summariser_prompt="summary_memory", request_templates="lesson3",
        attack_settings={"max_turns_before_summary": 4, "turns_to_keep_verbatim": 2})

    def __init__(self, system_prompt: str, summarise: Summariser, *, max_turns_before_summary: int = 4,
                 turns_to_keep_verbatim: int = 2, max_summary_tokens: int | None = None,
                 defences: MemoryDefences | None = None) -> None:
        check_count("max_turns_before_summary", max_turns_before_summary, 1,
                    "the summary is triggered once this many turns are held verbatim")
        check_count("turns_to_keep_verbatim", turns_to_keep_verbatim, 1,
                    "the request needs the latest turn word for word")
        if turns_to_keep_verbatim >= max_turns_before_summary:
            raise SettingError("turns_to_keep_verbatim", turns_to_keep_verbatim, (
                f"turns_to_keep_verbatim ({turns_to_keep_verbatim}) must be smaller than max_turns_before_summary "
                f"({max_turns_before_summary}): otherwise a summary cycle has no turn to fold"))
        super().__init__(system_prompt, summarise, max_summary_tokens=max_summary_tokens, defences=defences)
        self.max_turns_before_summary = max_turns_before_summary
        self.turns_to_keep_verbatim = turns_to_keep_verbatim

    def messages_to_fold(self, role: str) -> int:
        """How many of the oldest verbatim messages are folded once a ``role`` message is stored (0: none)."""
        turns = self.verbatim_messages // 2 if role == "assistant" else 0  # the trigger waits for the reply
        return 2 * (turns - self.turns_to_keep_verbatim) if turns >= self.max_turns_before_summary else 0

    def add_message(self, role: str, content: str) -> None:
        """Store the message; after a reply, fold the oldest turns once the threshold is reached (if that fold
        fails, ``SummariserError`` says so: the message is kept and the fold retried after the next reply)."""
        self._store(self.checked_message(role, content))
        if failure := self._try_fold(self.messages_to_fold(role), role):
            raise failure
