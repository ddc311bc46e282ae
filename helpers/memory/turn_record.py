"""What one conversation turn sent, got back and measured: the record ``chat()`` returns.

Plain data: ``helpers.display.lines.turn_lines`` prints it in the lessons' format, and
``helpers.display.plots`` charts a list of them.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from helpers.memory.types import FoldEvent


@dataclass(frozen=True)
class TurnRecord:
    """One turn. Sizes are taken as the lessons take them: after the user message was stored,
    before the reply was (the request as sent)."""

    turn: int
    user_message: str
    reply: str
    request: list[dict[str, str]]  # the messages sent
    prompt_tokens: int | None  # from the response's usage (what the endpoint counted)
    completion_tokens: int | None
    model: str  # the model the response names
    finish_reason: str | None
    summary: str | None
    summary_tokens: int
    summary_block_tokens: int
    system_prompt_tokens: int
    verbatim_tokens: int  # the buffer, for summary buffer memory
    verbatim_messages: int
    request_tokens: int  # o200k_base tokens of the request's contents, as the memory counts them
    summary_count: int  # summariser folds made so far
    max_buffer_tokens: int | None = None  # set for a token-budgeted memory (lesson 4)
    overflow_count: int | None = None
    over_budget: bool = False  # the buffer holds more than its budget (a turn too big to fit, or a failed fold)
    watch: str | None = None  # text looked for in the verbatim turns (the lesson's "1,20,000")
    watch_label: str | None = None  # what the watched text is, for the line ("salary"); the text itself if None
    watch_in_verbatim: bool | None = None
    folds_before: tuple[FoldEvent, ...] = ()  # made while storing the user message (lesson 4 overflows)
    folds_after: tuple[FoldEvent, ...] = ()  # made while storing the reply
    notes: tuple[str, ...] = field(default=())  # summariser failures the memory absorbed (printed as [NOTE])
    notices: tuple[str, ...] = field(default=())  # what model access reported (already printed), e.g. a fallback
    buffer_tokens_after_reply: int | None = None  # the verbatim part once the reply was stored
    over_budget_after_reply: bool = False  # the reply took the buffer over its budget (lesson 4)
    not_received: tuple[str, ...] = ()  # the request's messages a live server dropped, named ("the summary")

    @property
    def messages_sent(self) -> int:
        return len(self.request)

    @property
    def summary_sent(self) -> bool:
        return self.summary is not None

    @property
    def reply_cut(self) -> bool:
        """True when the model stopped at its token limit: the reply may end mid-sentence."""
        return self.finish_reason == "length"

    @property
    def budgeted(self) -> bool:
        """True for a memory with a token budget (lesson 4's summary buffer), which has its own line format."""
        return self.max_buffer_tokens is not None

    @property
    def buffer_tokens(self) -> int:
        return self.verbatim_tokens

    @property
    def fold_events(self) -> tuple[FoldEvent, ...]:
        return self.folds_before + self.folds_after

    def to_dict(self) -> dict[str, Any]:
        """Plain data for tables and plots (fold events as dicts)."""
        return {
            "turn": self.turn, "messages_sent": self.messages_sent, "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens, "request_tokens": self.request_tokens,
            "summary_sent": self.summary_sent, "summary_tokens": self.summary_tokens,
            "verbatim_tokens": self.verbatim_tokens, "verbatim_messages": self.verbatim_messages,
            "max_buffer_tokens": self.max_buffer_tokens, "summary_count": self.summary_count,
            "overflow_count": self.overflow_count, "over_budget": self.over_budget,
            "watch_in_verbatim": self.watch_in_verbatim,
            "folds": [asdict(e) | {"tokens_in": e.tokens_in} for e in self.fold_events], "notes": list(self.notes),
            "notices": list(self.notices), "finish_reason": self.finish_reason, "reply_cut": self.reply_cut,
            "not_received": list(self.not_received),
            "buffer_tokens_after_reply": self.buffer_tokens_after_reply,
            "over_budget_after_reply": self.over_budget_after_reply,
            "model": self.model, "reply": self.reply,
        }
