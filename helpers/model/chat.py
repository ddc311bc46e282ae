"""One conversation turn, as the lessons' ``chat()``, returning what it measured as a ``TurnRecord``. A failed
model call changes nothing (``memory.transaction()``); a failed summariser keeps the message and the record
notes when the fold is tried again.
"""
from __future__ import annotations

from helpers.display.lines import turn_text
from helpers.memory.turn_record import TurnRecord
from helpers.memory.rolling import RollingMemory as ConversationMemory
from helpers.memory.types import SummariserError, SummaryRefused
from helpers.model.connect import ModelAccess
from helpers.model.responses import describe, naming


def _add(memory: ConversationMemory, role: str, content: str, notes: list[str]) -> None:
    try:
        memory.add_message(role, content)
    except SummaryRefused as error:
        notes.append(f"summary refused by the check while storing the {role} message; kept verbatim: {error}")
    except SummariserError as error:
        later = "fold retried later" if error.will_retry else "fold not retried until something changes"
        notes.append(f"summariser failed while storing the {role} message; kept verbatim, {later}: {error}")


def message_names(request: list[dict[str, str]], summary: str | None) -> dict[str, str]:
    """What to call the memory's messages in a warning: its first system message is the system prompt, the
    message that holds the summary is the summary."""
    names = {}
    if request and request[0].get("role") == "system":
        names[request[0]["content"]] = "the system prompt"
    for message in request[1:]:
        if summary and summary in message["content"]:
            names[message["content"]] = "the summary"
            break
    return names


def _warn_in_plain_words(access: ModelAccess, finish_reason: str | None) -> None:
    """Say once per client, in plain words, what a turn line's short warning means."""
    if finish_reason == "length":
        access.warn_once("reply cut", (
            "WARNING: the model stopped at its token limit (finish_reason 'length'); the reply was stored as it "
            "came and may end mid-sentence. Raise max_tokens (a local server may also shrink it to fit its "
            "context: give the server a larger context size)."))


def chat(memory: ConversationMemory, user_message: str, access: ModelAccess, *, max_tokens: int = 1024,
         temperature: float | None = 0, watch: str | None = None, watch_label: str | None = None,
         show: bool = False) -> TurnRecord:
    """Run one turn: store the question, send the memory's request, store the reply; return the record.

    A failed model call propagates and leaves the memory as before. ``watch`` is a text looked for in the verbatim
    turns (named ``watch_label`` on the turn line); ``show=True`` prints the record's lines, as the lessons do.
    """
    notices_before = len(access.notices)
    events_start = len(memory.fold_events)
    notes: list[str] = []
    with memory.transaction():
        _add(memory, "user", user_message, notes)
        events_mid = len(memory.fold_events)
        request = memory.get_messages_for_api()
        verbatim = memory.verbatim
        snapshot = memory.snapshot()
        names = message_names(request, snapshot.summary)
        with naming(names):
            response = access.complete(request, max_tokens=max_tokens, temperature=temperature, purpose="reply")
            not_received = tuple(describe(request, index) for index in access.trace.not_received)
        choice = response.choices[0]
        reply = choice.message.content or ""
        _add(memory, "assistant", reply, notes)
    after = memory.snapshot()
    events = memory.fold_events
    usage = response.usage
    _warn_in_plain_words(access, choice.finish_reason)
    record = TurnRecord(
        user_message=user_message, reply=reply, request=request,
        prompt_tokens=usage.prompt_tokens if usage else None,
        completion_tokens=usage.completion_tokens if usage else None,
        model=response.model, finish_reason=choice.finish_reason, snapshot=snapshot, after_reply=after,
        watch=watch, watch_label=watch_label,
        watch_in_verbatim=None if watch is None else any(watch in m["content"] for m in verbatim),
        folds_before=tuple(events[events_start:events_mid]), folds_after=tuple(events[events_mid:]),
        notes=tuple(notes), notices=tuple(access.notices[notices_before:]), not_received=not_received)
    if show:
        print(turn_text(record), flush=True)
    return record
