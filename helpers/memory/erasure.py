"""Erasure: forget a fact by removing every turn that mentions it and remaking the summary from what remains,
in as few summariser calls as its context allows; all or nothing, and resumable (docs/architecture.md)."""
from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from helpers.base.reading import mentions
from helpers.base.tokens import count_tokens
from helpers.memory.rolling import RollingMemory, quoted_headings
from helpers.memory.types import FoldEvent, Message, SettingError, SummariserError, SummaryRefused, check_count

MESSAGE_FRAME_TOKENS = 12  # what a message's framing can add to a request (a transcript line, a JSON object)
LONG_WORK_TURNS = 200  # a remake of this many folded turns or more reports its progress
# a request's bound when the summariser states no context: the lessons' model takes 131,072; a smaller server's
# context overflow halves it (a 4,096-token server refuses one or two calls)
DEFAULT_REQUEST_TOKENS = 8_000
CONTEXT_OVERFLOW = "context overflow"  # the model layer's reason for it, by value (helpers.model.errors.Reason)
# the part of a remake done so far, kept beside the memory so that an interrupted forget() goes on from there:
# memory -> (what it is a remake of: the text and the memory as it was, pieces done, summary, events, bound)
_PROGRESS: weakref.WeakKeyDictionary[RollingMemory, tuple[Any, ...]] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class ErasureReport:
    """What ``forget`` removed and whether the summary was written again."""

    text: str
    turns_removed: tuple[int, ...]
    messages_removed: int
    pinned_removed: int
    summary_remade: bool
    summariser_calls: int = 0  # the pieces the summary was remade in (condensing calls not counted)
    calls_before_resume: int = 0  # of those, the ones made by an earlier, interrupted forget() of the same text
    request_tokens: int = 0  # the bound on a request the remake ended with (0: no remake)

    def describe(self) -> str:
        """One line: what was removed, or that the text was found nowhere."""
        if not (self.messages_removed or self.pinned_removed or self.summary_remade):
            return (f"forgot {self.text!r}: found in no message, pinned rule or summary, so nothing was erased (case "
                    "and spacing do not matter; a text split across two messages is in neither: forget each part)")
        count, listed = len(self.turns_removed), ", ".join(map(str, self.turns_removed))
        turns = (f"{_plural(count, 'turn')} removed (turn{'s' * (count != 1)} {listed}: {self.messages_removed} "
                 "messages)" if count else "no turn removed")
        calls = _plural(self.summariser_calls, "summariser call")
        remade = ("summary not remade" if not self.summary_remade else "summary removed: no folded turn remains"
                  if not self.summariser_calls else f"summary remade in {calls}")
        resumed = f" ({self.calls_before_resume} of them before the interruption)" if self.calls_before_resume else ""
        return f"forgot {self.text!r}: {turns}, {self.pinned_removed} pinned rules removed, {remade}{resumed}"


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'s' * (count != 1)}"


def largest_request(memory: RollingMemory) -> int:
    """The largest request the memory's own folds made (tokens, framing and old summary): known to fit."""
    return max((event.message_tokens + MESSAGE_FRAME_TOKENS * event.messages_folded + event.old_summary_tokens
                for event in memory.fold_events), default=0)


def default_bound(memory: RollingMemory) -> int:
    """The summariser's ``context_tokens`` less its reply's ``max_tokens`` if it states them, else
    ``DEFAULT_REQUEST_TOKENS``; never below the largest request the memory already made."""
    context, reply = (getattr(memory.summarise, name, None) for name in ("context_tokens", "max_tokens"))
    bound = context - (reply if isinstance(reply, int) else 0) if isinstance(context, int) else DEFAULT_REQUEST_TOKENS
    return max(bound, largest_request(memory))


def _refold(memory: RollingMemory, pieces: list[list[Message]], text: str, bound: int | None,
            progress: Callable[[str], None] | None) -> tuple[str | None, list[FoldEvent], int, int]:
    """The summary and fold events remade from ``pieces``, as many a call as the bound allows, going on from an
    interrupted remake of the same text; reads the memory only. Returns (summary, events, calls reused, bound)."""
    key = (text, memory.messages, memory.verbatim_start, memory.summary, tuple(memory.fold_events), memory.defences)
    saved = _PROGRESS.get(memory)
    _, done, summary, events, limit = saved if saved and saved[0] == key else (key, 0, None, (), default_bound(memory))
    events, reused, limit = list(events), len(events), bound if bound is not None else limit
    floor, total, shown = largest_request(memory), sum(len(piece) for piece in pieces) // 2, -1
    sizes = [sum(m.tokens + MESSAGE_FRAME_TOKENS for m in piece) for piece in pieces]  # what a piece adds to a request
    summary_tokens = count_tokens(summary) if summary else 0  # then carried from each remade summary's count
    while done < len(pieces):
        end, size = done + 1, summary_tokens + sizes[done]  # at least one piece: no larger than the fold that made it
        while end < len(pieces) and size + sizes[end] <= limit:
            end, size = end + 1, size + sizes[end]
        batch = [message for piece in pieces[done:end] for message in piece]
        try:
            result = memory.summary_for([m.to_api() for m in batch], summary)
        except SummariserError as error:
            if getattr(error.__cause__, "reason", None) == CONTEXT_OVERFLOW and end - done > 1 and limit > floor:
                limit = max(limit // 2, floor)
                _PROGRESS[memory] = (key, done, summary, tuple(events), limit)  # an interrupt keeps it
                if progress is not None:
                    progress(f"forget: a request was too long for the summariser's context; going on with requests "
                             f"of at most {limit:,} tokens")
                continue
            remade = events[-1].last_turn if events else 0
            message = f"{error} (while remaking the summary); nothing was erased." + (
                f" {remade:,} of the {total:,} folded turns were remade before it: call forget() again with the same "
                "text to go on from there" if remade else "")
            raise (SummaryRefused(message, findings=error.findings) if isinstance(error, SummaryRefused) else
                   SummariserError(message, problem=error.problem, will_retry=error.will_retry)) from error
        tokens = count_tokens(result.summary) if result.summary is not None else 0
        first = events[-1].last_turn + 1 if events else 1
        events.append(FoldEvent.of(first, batch, summary_tokens, tokens, result, memory.max_summary_tokens))
        summary, summary_tokens, done = result.summary, tokens, end
        _PROGRESS[memory] = (key, done, summary, tuple(events), limit)
        turns = events[-1].last_turn
        if total >= LONG_WORK_TURNS and progress is not None and 10 * turns // total != shown:
            shown = 10 * turns // total
            progress(f"forget: summary remade up to turn {turns:,} of {total:,} folded turns "
                     f"({100 * turns // total}%) in {_plural(len(events), 'summariser call')}")
    if summary is not None and mentions(summary, text):
        _PROGRESS.pop(memory, None)
        raise SummariserError(f"the remade summary still mentions {text!r}; nothing was erased. Try again with a "
                              "plainer summariser prompt, or forget a shorter text", problem="still mentions",
                              will_retry=False)
    return summary, events, reused, limit


def forget(memory: RollingMemory, text: str, *, max_request_tokens: int | None = None,
           progress: Callable[[str], None] | None = print) -> ErasureReport:
    """Remove every turn and pinned rule that mentions ``text`` and remake the summary in requests of at most
    ``max_request_tokens`` (``default_bound``; halved on a context overflow). All or nothing, resumable."""
    if not isinstance(text, str) or not text.strip():
        raise SettingError("text", text, "say what to forget: forget() needs a non-empty piece of text, "
                           "e.g. forget(memory, '1,20,000')")
    if max_request_tokens is not None:
        check_count("max_request_tokens", max_request_tokens, 1, "the tokens one summariser request may hold (None: "
                    "the summariser's context)")
    if mentions(memory.system_prompt, text):
        raise SettingError("text", text, f"{text!r} is in the system prompt, which the application sets: change "
                           "the system prompt instead")
    defences: Any = memory.defences
    rules = defences.pinned_rules if defences is not None else ()
    kept_rules = tuple(rule for rule in rules if not mentions(rule, text))
    kept = defences if kept_rules == rules else type(defences).from_settings(
        {**defences.settings(), "pinned_rules": list(kept_rules)})
    heading = memory.KIND.heading or ""
    framing = [heading] if kept is None else [heading, kept.system_text(""),
                                              kept.summary_message(heading, "", quoted_headings(heading))["content"]]
    if any(mentions(part, text) for part in framing if part):
        raise SettingError("text", text, f"{text!r} is in the headings or data markers the memory writes itself, "
                           "not only in the conversation, so it would stay in every request: forget a longer piece "
                           "of what was said")
    messages, start, summary, events = memory.messages, memory.verbatim_start, memory.summary, memory.fold_events
    hit_turns = sorted({index // 2 for index, message in enumerate(messages) if mentions(message.content, text)})
    drop = {index for index in range(len(messages)) if index // 2 in hit_turns}
    refold = any(index < start for index in drop) or (summary is not None and mentions(summary, text))
    reused = limit = 0
    if refold:  # the folded messages that remain, in the pieces the memory folded them in
        pieces = [piece for piece in ([messages[i] for i in range(2 * (e.first_turn - 1), 2 * e.last_turn)
                                       if i not in drop] for e in events) if piece]
        summary, events, reused, limit = _refold(memory, pieces, text, max_request_tokens, progress)
        start = sum(len(piece) for piece in pieces)
    # the check's findings quote summaries: blank any that hold the text
    events = [event._replace(check=tuple("(erased)" if mentions(item, text) else item for item in event.check))
              for event in events]
    # all above only read the memory; this one call changes it whole (nothing erased, or all of it)
    memory.replace_history([m for index, m in enumerate(messages) if index not in drop], start, summary, events, kept)
    _PROGRESS.pop(memory, None)
    remade = refold and memory.KIND.heading is not None
    return ErasureReport(text, tuple(turn + 1 for turn in hit_turns), len(drop), len(rules) - len(kept_rules), remade,
                         len(events) if remade else 0, reused if remade else 0, limit if remade else 0)
