"""Erasure: forget a fact by removing every turn that mentions it, and remake the summary from what remains.

The archive is append-only except here, on purpose: a user's "forget my salary" must reach the archive,
the summary, the request and (once saved again) the state file. Whole turns go, the reply with its
question, because a reply often repeats what it answers. The summary is written again from the remaining
folded turns, never edited (an edit could leave a paraphrase behind).

It is remade in as few summariser calls as a request allows: each call folds as many of the remaining
turns, in order, as fit with the summary so far. The bound on a request is ``max_request_tokens`` (the
messages' tokens, 12 a message for its framing, and the summary's tokens), by default the largest request
the memory's own folds made, counted the same way: no request is then larger than one the memory already
made, and erasure works at any length. Given the summariser's context, a 10,000-turn memory is remade in
a few dozen calls instead of thousands. Long work is reported as it goes (``progress``).

Nothing changes until every call has succeeded: then the memory is updated in one step. A failure or an
interrupt (the stop button) leaves the memory as it was, never half erased; the pieces already remade are
kept with the memory, and ``forget`` called again with the same text, on the unchanged memory, goes on
from there. Copies outside the memory (recordings, logs, the provider's own, older saved files) are out of
its reach.
"""
from __future__ import annotations

import dataclasses
import unicodedata
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from helpers.base.tokens import count_tokens
from helpers.memory.imitation import BLOCK_TEXTS
from helpers.memory.placement import strip_invisible
from helpers.memory.rolling import RollingMemory
from helpers.memory.types import FoldEvent, Message, SettingError, SummariserError, SummaryRefused

MESSAGE_FRAME_TOKENS = 12  # what a message's framing can add to a request (a transcript line, a JSON object)
LONG_WORK_TURNS = 200  # a remake of this many folded turns or more reports its progress


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

    def describe(self) -> str:
        """One line: what was removed, or that the text was found nowhere."""
        if not (self.messages_removed or self.pinned_removed or self.summary_remade):
            return (f"forgot {self.text!r}: found in no message, pinned rule or summary, so nothing was erased "
                    "(case and spacing do not matter; a text split across two messages is in neither: forget each part)")
        count = len(self.turns_removed)
        turns = (f"{count} turn{'s' if count != 1 else ''} removed (turn{'s' if count != 1 else ''} "
                 f"{', '.join(map(str, self.turns_removed))}: {self.messages_removed} messages)" if count
                 else "no turn removed")
        calls = self.summariser_calls
        remade = ("summary not remade" if not self.summary_remade else
                  "summary removed: no folded turn remains" if not calls else
                  f"summary remade in {calls} summariser call{'s' if calls != 1 else ''}"
                  + (f" ({self.calls_before_resume} of them before the interruption)" if self.calls_before_resume
                     else ""))
        return f"forgot {self.text!r}: {turns}, {self.pinned_removed} pinned rules removed, {remade}"


def _normal(text: str) -> str:
    """``text`` as a match sees it: invisible characters dropped (a soft hyphen or zero-width space inside a
    word), NFKC, case folded, every run of spaces, tabs or newlines one space."""
    return " ".join(unicodedata.normalize("NFKC", strip_invisible(text)).casefold().split())


def mentions(content: str, text: str) -> bool:
    """True if ``content`` holds ``text``, whatever the case, the spacing, full-width forms or invisible
    characters."""
    return _normal(text) in _normal(content)


def _pieces(memory: RollingMemory, drop: set[int]) -> list[list[Message]]:
    """The folded messages that remain, in the pieces the memory folded them in (empty pieces left out)."""
    messages, pieces = memory.messages, []
    for event in memory.fold_events:
        first, last = 2 * (event.first_turn - 1), 2 * event.last_turn
        piece = [messages[i] for i in range(first, last) if i not in drop]
        if piece:
            pieces.append(piece)
    return pieces


def request_size(messages: list[Message], summary_tokens: int) -> int:
    """The size a summariser request is bounded by: its messages' tokens, their framing, the summary's tokens."""
    return sum(m.tokens + MESSAGE_FRAME_TOKENS for m in messages) + summary_tokens


def largest_request(memory: RollingMemory) -> int:
    """The largest request the memory's own folds made, counted as ``request_size`` counts one."""
    return max((event.message_tokens + MESSAGE_FRAME_TOKENS * event.messages_folded + event.old_summary_tokens
                for event in memory.fold_events), default=0)


@dataclass(frozen=True)
class _Progress:
    """The part of a remake done so far, kept with the memory so that an interrupted ``forget`` can go on."""

    key: tuple[Any, ...]  # what the remake is of: the text, and the memory as it was
    pieces_done: int
    summary: str | None
    events: tuple[FoldEvent, ...]
    calls: int


_PROGRESS: weakref.WeakKeyDictionary[RollingMemory, _Progress] = weakref.WeakKeyDictionary()


def _key(memory: RollingMemory, text: str, limit: int) -> tuple[Any, ...]:
    return (_normal(text), limit, memory.messages, memory.verbatim_start, memory.summary, tuple(memory.fold_events),
            memory.defences)


def _refold(memory: RollingMemory, pieces: list[list[Message]], text: str, limit: int,
            progress: Callable[[str], None] | None) -> tuple[str | None, list[FoldEvent], int]:
    """The summary and fold events made from ``pieces``, as many pieces a call as ``limit`` allows (the calls
    made before an interruption reused); reads the memory only. Returns (summary, events, calls reused)."""
    key = _key(memory, text, limit)
    saved = _PROGRESS.get(memory)
    if saved is None or saved.key != key:
        saved = _Progress(key, 0, None, (), 0)
    reused = saved.calls
    done, summary, events = saved.pieces_done, saved.summary, list(saved.events)
    total_turns = sum(len(piece) for piece in pieces) // 2
    long_work = total_turns >= LONG_WORK_TURNS
    shown = -1
    while done < len(pieces):
        summary_tokens = count_tokens(summary) if summary else 0
        batch, end = list(pieces[done]), done + 1  # at least one piece: no larger than the fold that made it
        while end < len(pieces) and request_size(batch + pieces[end], summary_tokens) <= limit:
            batch += pieces[end]
            end += 1
        try:
            new, condensed, cut, findings = dataclasses.astuple(memory.summary_for([m.to_api() for m in batch], summary))
        except (SummaryRefused, SummariserError) as error:
            remade = sum(len(piece) for piece in pieces[:done]) // 2
            again = (f" {remade} of the {total_turns} folded turns were remade before it: call forget() again "
                     "with the same text to go on from there" if done else "")
            if isinstance(error, SummaryRefused):
                raise SummaryRefused(f"{error}, while remaking the summary; nothing was erased.{again}",
                                     findings=error.findings) from error
            raise SummariserError(f"{error} (while remaking the summary); nothing was erased.{again}",
                                  problem=error.problem, will_retry=error.will_retry) from error
        tokens = count_tokens(new) if new is not None else 0
        first_turn = events[-1].last_turn + 1 if events else 1
        events.append(FoldEvent(
            first_turn=first_turn, last_turn=first_turn + len(batch) // 2 - 1, messages_folded=len(batch),
            message_tokens=sum(m.tokens for m in batch), old_summary_tokens=summary_tokens,
            summary_tokens=tokens, condensed=condensed, cut=cut, check=findings or (),
            over_cap=memory.max_summary_tokens is not None and tokens > memory.max_summary_tokens))
        summary, done = new, end
        _PROGRESS[memory] = _Progress(key, done, summary, tuple(events), len(events))
        if long_work and progress is not None:
            turns = events[-1].last_turn
            step = 10 * turns // total_turns
            if step != shown:
                shown = step
                progress(f"forget: summary remade up to turn {turns:,} of {total_turns:,} folded turns "
                         f"({100 * turns // total_turns}%) in {len(events)} summariser call{'s' if len(events) != 1 else ''}")
    if summary is not None and mentions(summary, text):
        _PROGRESS.pop(memory, None)
        raise SummariserError(f"the remade summary still mentions {text!r}; nothing was erased. Try again with a "
                              "plainer summariser prompt, or forget a shorter text", problem="still mentions",
                              will_retry=False)
    return summary, events, reused


def forget(memory: RollingMemory, text: str, *, max_request_tokens: int | None = None,
           progress: Callable[[str], None] | None = print) -> ErasureReport:
    """Remove every turn (question and reply) whose text mentions ``text``, any pinned rule that does, and
    remake the summary from the folded turns that remain, in as few summariser calls as
    ``max_request_tokens`` allows (default: the largest request the memory already made).

    All or nothing: if a summariser call fails, the summary check refuses a remade summary, or the new
    summary still holds ``text``, nothing is erased and ``SummariserError`` says so; called again, it goes on
    from the calls already made. A remake of many turns reports its progress to ``progress`` (``print``; None
    for silence). Inside ``memory.transaction()`` a later failure undoes the erasure too.
    """
    if not isinstance(text, str) or not text.strip():
        raise SettingError("text", text, "say what to forget: forget() needs a non-empty piece of text, "
                           "e.g. forget(memory, '1,20,000')")
    if max_request_tokens is not None and (isinstance(max_request_tokens, bool) or
                                           not isinstance(max_request_tokens, int) or max_request_tokens < 1):
        raise SettingError("max_request_tokens", max_request_tokens, "max_request_tokens is the tokens a summariser "
                           "request may hold (a whole number, e.g. the model's context less its reply), or None "
                           "for the largest request the memory already made")
    if mentions(memory.system_prompt, text):
        raise SettingError("text", text, f"{text!r} is in the system prompt, which the application sets: change "
                           "the system prompt instead")
    own = (memory.KIND.heading or "", *BLOCK_TEXTS)
    if any(mentions(part, text) for part in own if part):
        raise SettingError("text", text, f"{text!r} is in the headings or data markers the memory writes itself, "
                           "not only in the conversation, so it would stay in every request: forget a longer piece "
                           "of what was said")
    messages, start = memory.messages, memory.verbatim_start
    hit_turns = sorted({index // 2 for index, message in enumerate(messages) if mentions(message.content, text)})
    drop = {index for index in range(len(messages)) if index // 2 in hit_turns}
    defences: Any = memory.defences
    rules = defences.pinned_rules if defences is not None else ()
    kept_rules = tuple(rule for rule in rules if not mentions(rule, text))
    summary = memory.summary
    refold = any(index < start for index in drop) or (summary is not None and mentions(summary, text))
    pieces = _pieces(memory, drop) if refold else []
    reused = 0
    if refold:
        limit = max_request_tokens if max_request_tokens is not None else largest_request(memory)
        summary, events, reused = _refold(memory, pieces, text, limit, progress)
    else:  # the summary check's findings quote summaries: blank any that held the text
        events = [dataclasses.replace(event, check=tuple("(erased)" if mentions(item, text) else item
                                                         for item in event.check)) for event in memory.fold_events]
    kept_messages = [m for index, m in enumerate(messages) if index not in drop]
    start = sum(len(piece) for piece in pieces) if refold else start
    kept = dataclasses.replace(defences, pinned_rules=kept_rules) if kept_rules != rules else defences
    # Commit: everything above only read the memory; this one update (replace_history) changes it whole, so an
    # interrupt lands before it (nothing erased) or after it (all erased).
    memory.replace_history(kept_messages, start, summary, events, kept)
    _PROGRESS.pop(memory, None)
    remade = refold and memory.KIND.heading is not None
    return ErasureReport(text, tuple(turn + 1 for turn in hit_turns), len(drop), len(rules) - len(kept_rules), remade,
                         len(events) if remade else 0, reused if remade else 0)
