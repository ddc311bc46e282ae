"""One conversation turn, as the lessons' ``chat()``, measured as a ``TurnRecord``: a failed model call changes nothing
(``memory.transaction()``); a failed summariser keeps the message and the record says when the fold is tried again."""
from __future__ import annotations

from typing import Any

from helpers.display.lines import turn_text
from helpers.memory.turn_record import TurnRecord
from helpers.memory.types import SummariserError, SummaryRefused
from helpers.model.connect import ModelAccess
from helpers.model.responses import describe


def _add(memory: Any, role: str, content: str, notes: list[str]) -> None:
    try:
        memory.add_message(role, content)
    except SummaryRefused as error:
        notes.append(f"summary refused by the check while storing the {role} message; kept verbatim: {error}")
    except SummariserError as error:
        later = "fold retried later" if error.will_retry else "fold not retried until something changes"
        notes.append(f"summariser failed while storing the {role} message; kept verbatim, {later}: {error}")


def chat(memory: Any, user_message: str, access: ModelAccess, *, max_tokens: int = 1024, watch: str | None = None,
         watch_label: str | None = None, show: bool = False) -> TurnRecord:
    """Run one turn (store the question, send the memory's request, store the reply) and return its record; a failed
    call leaves the memory as before. ``watch`` is a text looked for in the verbatim turns (named ``watch_label`` on
    the turn line); ``show=True`` prints the record's lines, as the lessons do."""
    events_start, notes = len(memory.fold_events), []
    with memory.transaction():
        _add(memory, "user", user_message, notes)
        events_mid = len(memory.fold_events)
        request, verbatim, snapshot = memory.get_messages_for_api(), memory.verbatim, memory.snapshot()
        response = access.complete(request, max_tokens=max_tokens, purpose="reply")
        not_received = tuple(describe(request, index) for index in access.trace.not_received)
        choice = response.choices[0]
        reply = choice.message.content or ""
        _add(memory, "assistant", reply, notes)
    events, usage = memory.fold_events, response.usage
    record = TurnRecord(
        reply=reply, request=request,
        prompt_tokens=usage.prompt_tokens if usage else None,
        completion_tokens=usage.completion_tokens if usage else None,
        model=response.model, finish_reason=choice.finish_reason, snapshot=snapshot, after_reply=memory.snapshot(),
        watched=None if watch is None else (watch_label or repr(watch), any(watch in m["content"] for m in verbatim)),
        folds_before=tuple(events[events_start:events_mid]), folds_after=tuple(events[events_mid:]),
        notes=tuple(notes), not_received=not_received)
    if show:
        print(turn_text(record), flush=True)
    return record
