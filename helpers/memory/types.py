"""What every memory shares with its users: messages, fold events, the summariser's signature,
the snapshot a turn line reads, and the small ``ConversationMemory`` protocol that ``chat()`` and
the display rely on."""
from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

from helpers.base.errors import Explained

Summariser = Callable[[list[dict[str, str]], "str | None"], str]
"""``summarise(messages_to_fold, existing_summary) -> new summary``: an LLM call, the offline
stand-in, or ``turn_range_stub`` in the simulations."""

ROLES = ("user", "assistant")


class SummariserError(Explained, RuntimeError):
    """The summariser raised or returned empty text; the memory kept every message and will retry."""


class SummaryRefused(SummariserError):
    """The summary check (``summary_check="refuse"``) refused a new summary; the messages stay verbatim."""


class CutText(str):
    """Text a model stopped writing at its token limit (``finish_reason == "length"``).

    A summariser returns its summary as ``CutText`` so the memory can report the cut on the fold
    event; it is stored as plain text.
    """

    cut = True


@dataclass(frozen=True)
class Message:
    """One chat message with its o200k_base token count, counted once when it was added."""

    role: str
    content: str
    tokens: int

    def to_api(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class FoldEvent:
    """What one summariser call did: which turns it folded and the tokens in and out."""

    first_turn: int
    last_turn: int
    messages_folded: int
    message_tokens: int
    old_summary_tokens: int
    summary_tokens: int
    condensed: bool = False  # the summary passed max_summary_tokens and was summarised again
    over_cap: bool = False  # still over max_summary_tokens after that (reported, never cut)
    cut: bool = False  # the summariser stopped at its token limit: the summary may end mid-sentence
    check: tuple[str, ...] = ()  # what the summary check found ("kind: text"), when it is on (notebook 06)

    @property
    def tokens_in(self) -> int:
        """Tokens handed to the summariser: the folded messages plus the old summary."""
        return self.message_tokens + self.old_summary_tokens


@dataclass(frozen=True)
class MemorySnapshot:
    """The numbers a turn line reads off a memory, taken when the request is built."""

    turn: int
    summary: str | None
    summary_tokens: int
    summary_block_tokens: int  # the heading plus the summary, as sent
    system_prompt_tokens: int
    verbatim_tokens: int  # the buffer, for summary buffer memory
    verbatim_messages: int
    request_tokens: int  # system prompt + summary block + verbatim part, by o200k_base
    summary_count: int  # summariser folds made so far
    max_buffer_tokens: int | None = None  # only a token-budgeted memory (lesson 4) has one
    overflow_count: int | None = None
    over_budget: bool = False


class ConversationMemory(Protocol):
    """What ``chat()`` and the display need of a memory; both memory classes (and the notebooks'
    own teaching classes, with ``snapshot``) provide it."""

    fold_events: list[FoldEvent]

    def add_message(self, role: str, content: str) -> None: ...

    def get_messages_for_api(self) -> list[dict[str, str]]: ...

    @property
    def verbatim(self) -> list[dict[str, str]]: ...

    def transaction(self) -> AbstractContextManager[None]: ...

    def snapshot(self) -> MemorySnapshot: ...
