"""One conversation turn, in the spirit of the lessons' ``chat()``, returning what it measured.

``chat(memory, user_message, access)`` stores the user message, sends the memory's request
through ``access`` (the real openai SDK), stores the reply, and returns a ``TurnRecord``: the
numbers the lessons print per turn, the folds the memory made during the turn, the request and
the reply. Notebooks print ``record.lines()`` (the lessons' format) and plot the fields.

A failed model call changes nothing: the turn runs inside ``memory.transaction()``. A failed
summariser call does not abort the turn: the memory keeps the message verbatim and retries the
fold later, and the record carries a note saying so.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from helpers.llm import ModelAccess
from helpers.memory import FoldEvent, SummariserError, SummaryBufferMemory

Memory = Any  # SummaryMemory or SummaryBufferMemory (helpers.memory)


def summary_memory_line(turn: int, messages_sent: int, prompt_tokens: int | None, summary_sent: bool,
                        watched: tuple[str, bool | None] | None = None) -> str:
    """Lesson 3's turn line, e.g.
    ``[Turn 1] messages sent: 2 | prompt_tokens: 229 | summary sent: False | salary in a verbatim turn: True``.

    ``watched`` is (what, found): whether a watched text (the salary) is in a verbatim turn.
    """
    line = (f"[Turn {turn}] messages sent: {messages_sent} | prompt_tokens: {prompt_tokens} | "
            f"summary sent: {summary_sent}")
    if watched is not None:
        line += f" | {watched[0]} in a verbatim turn: {watched[1]}"
    return line


def summarise_line(messages: int, message_tokens: int, summary_tokens: int) -> str:
    """Lesson 3's fold line: ``  [SUMMARISE] 4 messages (489 tokens) -> summary (131 tokens)``."""
    return f"  [SUMMARISE] {messages} messages ({message_tokens} tokens) -> summary ({summary_tokens} tokens)"


@dataclass(frozen=True)
class TurnRecord:
    """What one turn sent, got back and measured. Sizes are taken as the lessons take them:
    after the user message was stored, before the reply was."""

    turn: int
    user_message: str
    reply: str
    request: list[dict[str, str]]  # the messages sent
    prompt_tokens: int | None  # from the response's usage (what the endpoint counted)
    completion_tokens: int | None
    model: str  # the model the response names
    finish_reason: str | None
    style: str  # "summary" (lesson 3) or "summary_buffer" (lesson 4)
    summary: str | None
    summary_tokens: int
    summary_block_tokens: int
    system_prompt_tokens: int
    verbatim_tokens: int  # the buffer, for summary buffer memory
    verbatim_messages: int
    summary_count: int  # summariser folds made so far
    max_buffer_tokens: int | None = None
    overflow_count: int | None = None
    over_budget: bool = False  # the buffer holds more than its budget (a turn too big to fit, or a failed fold)
    watch: str | None = None  # text looked for in the verbatim turns (the lesson's "1,20,000")
    watch_label: str = "salary"
    watch_in_verbatim: bool | None = None
    folds_before: tuple[FoldEvent, ...] = ()  # made while storing the user message (lesson 4 overflows)
    folds_after: tuple[FoldEvent, ...] = ()  # made while storing the reply
    notes: tuple[str, ...] = field(default=())  # summariser failures the memory absorbed (printed as [NOTE])
    notices: tuple[str, ...] = field(default=())  # what model access reported (already printed), e.g. a fallback

    # ----- derived -----------------------------------------------------------------------------
    @property
    def messages_sent(self) -> int:
        return len(self.request)

    @property
    def summary_sent(self) -> bool:
        return self.summary is not None

    @property
    def buffer_tokens(self) -> int:
        return self.verbatim_tokens

    @property
    def request_tokens(self) -> int:
        """o200k_base tokens of the request's contents (no chat-template overhead)."""
        return self.system_prompt_tokens + self.summary_block_tokens + self.verbatim_tokens

    @property
    def fold_events(self) -> tuple[FoldEvent, ...]:
        return self.folds_before + self.folds_after

    # ----- the lessons' lines -------------------------------------------------------------------
    def summary_memory_line(self) -> str:
        """Lesson 3's line for this turn (see ``summary_memory_line``)."""
        watched = (self.watch_label, self.watch_in_verbatim) if self.watch is not None else None
        return summary_memory_line(self.turn, self.messages_sent, self.prompt_tokens, self.summary_sent, watched)

    def summary_buffer_line(self) -> str:
        """Lesson 4's line, e.g.
        ``[Turn 1] prompt_tokens: .. | summary: 0 tokens | buffer: 19/600 tokens in 1 messages | overflows: 0``."""
        budget = self.max_buffer_tokens if self.max_buffer_tokens is not None else "-"
        overflows = self.overflow_count if self.overflow_count is not None else self.summary_count
        return (f"[Turn {self.turn}] prompt_tokens: {self.prompt_tokens} | summary: {self.summary_tokens} tokens | "
                f"buffer: {self.verbatim_tokens}/{budget} tokens in {self.verbatim_messages} messages | "
                f"overflows: {overflows}" + (" | OVER BUDGET: kept whole, folded at the next overflow"
                                             if self.over_budget else ""))

    def line(self) -> str:
        """The turn line in the format of this memory's lesson."""
        return self.summary_buffer_line() if self.style == "summary_buffer" else self.summary_memory_line()

    def fold_line(self, event: FoldEvent) -> str:
        """A fold as the lessons print it: ``[SUMMARISE] ...`` (lesson 3) or ``[COMPRESS] ...`` (lesson 4)."""
        if self.style == "summary_buffer":
            text = (f"  [COMPRESS] {event.messages_folded} messages + old summary ({event.tokens_in} tokens) "
                    f"-> new summary ({event.summary_tokens} tokens)")
        else:
            text = summarise_line(event.messages_folded, event.message_tokens, event.summary_tokens)
        if event.condensed:
            text += " [condensed: passed max_summary_tokens]"
        if event.over_cap:
            text += " [still over max_summary_tokens]"
        return text

    def lines(self) -> list[str]:
        """Everything the turn prints, in the order it happened: folds, the turn line, folds, notes."""
        return ([self.fold_line(e) for e in self.folds_before] + [self.line()]
                + [self.fold_line(e) for e in self.folds_after] + [f"  [NOTE] {note}" for note in self.notes])

    def __str__(self) -> str:
        return "\n".join(self.lines())

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
            "notices": list(self.notices),
            "model": self.model, "reply": self.reply,
        }


def _add(memory: Memory, role: str, content: str, notes: list[str]) -> None:
    try:
        memory.add_message(role, content)
    except SummariserError as error:
        notes.append(f"summariser failed while storing the {role} message; kept verbatim, fold retried later: {error}")


def chat(memory: Memory, user_message: str, access: ModelAccess, *, max_tokens: int = 1024,
         temperature: float | None = 0, watch: str | None = None, watch_label: str = "salary",
         show: bool = False) -> TurnRecord:
    """Run one turn: store the question, send the memory's request, store the reply; return the record.

    If the model call fails (``ModelUnavailable``, ``RecordingMissing``, ``EmptyReply``) the
    exception propagates and the memory is exactly as before the call. ``show=True`` prints the
    record's lines as the lessons do.
    """
    notices_before = len(access.notices)
    events_start = len(memory.fold_events)
    notes: list[str] = []
    with memory.transaction():
        _add(memory, "user", user_message, notes)
        events_mid = len(memory.fold_events)
        request = memory.get_messages_for_api()
        verbatim = memory.verbatim
        buffer_memory = isinstance(memory, SummaryBufferMemory)
        snapshot = dict(
            turn=memory.turn_count, summary=memory.summary, summary_tokens=memory.summary_tokens,
            summary_block_tokens=memory.summary_block_tokens, system_prompt_tokens=memory.system_prompt_tokens,
            verbatim_tokens=memory.verbatim_tokens, verbatim_messages=len(verbatim),
            summary_count=memory.summary_count,
            max_buffer_tokens=memory.max_buffer_tokens if buffer_memory else None,
            overflow_count=memory.overflow_count if buffer_memory else None,
            over_budget=memory.over_budget if buffer_memory else False,
        )
        response = access.complete(request, max_tokens=max_tokens, temperature=temperature, purpose="reply")
        choice = response.choices[0]
        reply = choice.message.content or ""
        _add(memory, "assistant", reply, notes)
    events = memory.fold_events
    usage = response.usage
    record = TurnRecord(
        user_message=user_message, reply=reply, request=request,
        prompt_tokens=usage.prompt_tokens if usage else None,
        completion_tokens=usage.completion_tokens if usage else None,
        model=response.model, finish_reason=choice.finish_reason,
        style="summary_buffer" if buffer_memory else "summary",
        watch=watch, watch_label=watch_label,
        watch_in_verbatim=None if watch is None else any(watch in m["content"] for m in verbatim),
        folds_before=tuple(events[events_start:events_mid]), folds_after=tuple(events[events_mid:]),
        notes=tuple(notes), notices=tuple(access.notices[notices_before:]), **snapshot)
    if show:
        print(record)
    return record
