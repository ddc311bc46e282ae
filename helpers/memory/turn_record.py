"""What one conversation turn sent, got back and measured: the record ``chat()`` returns (plain data that
``display.lines`` prints in its kind's format and ``display.plots`` charts)."""
from __future__ import annotations

from dataclasses import dataclass

from helpers.memory.types import FoldEvent, MemorySnapshot


@dataclass(frozen=True)
class TurnRecord:
    """One turn: what was sent and came back, and the memory as it was when the request was sent
    (``snapshot``: after the user message was stored, before the reply was) and after the reply."""

    reply: str
    request: list[dict[str, str]]  # the messages sent
    prompt_tokens: int | None  # from the response's usage (what the endpoint counted)
    completion_tokens: int | None
    model: str  # the model the response names
    finish_reason: str | None
    snapshot: MemorySnapshot  # the memory when the request was sent
    after_reply: MemorySnapshot | None = None  # the memory once the reply was stored
    # (what, found) for the turn line: is a watched text ("salary": the lesson's "1,20,000") in a verbatim turn?
    watched: tuple[str, bool] | None = None
    folds_before: tuple[FoldEvent, ...] = ()  # made while storing the user message (lesson 4 overflows)
    folds_after: tuple[FoldEvent, ...] = ()  # made while storing the reply
    notes: tuple[str, ...] = ()  # summariser failures the memory absorbed (printed as [NOTE])
    not_received: tuple[str, ...] = ()  # the request's messages a live server dropped, named ("the summary")

    turn = property(lambda self: self.snapshot.turn)
    kind = property(lambda self: self.snapshot.kind, doc="The memory kind's registered name.")
    messages_sent = property(lambda self: len(self.request))
    reply_cut = property(lambda self: self.finish_reason == "length", doc="The model stopped at its token limit.")
    over_budget_after_reply = property(lambda self: self.after_reply is not None and self.after_reply.over_budget,
                                       doc="The reply took the buffer over its budget (a kind with one, lesson 4).")
