"""Erasure: forget a fact by removing every turn that mentions it, and remake the summary from what remains.

The archive is append-only except here, on purpose: a user's "forget my salary" must reach the archive,
the summary, the request and (once saved again) the state file. Whole turns go, the reply with its
question, because a reply often repeats what it answers. The summary is written again from the remaining
folded turns, never edited (an edit could leave a paraphrase behind), and written as it was built: fold by
fold, each piece the turns one earlier fold took (less the erased ones) with the summary so far. Every
summariser request is then no larger than one the memory already made, so erasure works at any length.
Copies outside the memory (recordings, logs, the provider's own, older saved files) are out of its reach.
"""
from __future__ import annotations

import dataclasses
import unicodedata
from dataclasses import dataclass
from typing import Any

from helpers.base.tokens import count_tokens
from helpers.memory.pinned import PINNED_CLOSE, PINNED_HEADING, PINNED_NOTE, PINNED_OPEN
from helpers.memory.placement import DATA_CLOSE, DATA_NOTE, DATA_OPEN, strip_invisible
from helpers.memory.rolling import RollingMemory
from helpers.memory.types import FoldEvent, Message, SettingError, SummariserError, SummaryRefused


@dataclass(frozen=True)
class ErasureReport:
    """What ``forget`` removed and whether the summary was written again."""

    text: str
    turns_removed: tuple[int, ...]
    messages_removed: int
    pinned_removed: int
    summary_remade: bool
    summariser_calls: int = 0  # the pieces the summary was remade in

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
                  f"summary remade in {calls} summariser call{'s' if calls != 1 else ''}")
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
    pieces = []
    for event in memory.fold_events:
        first, last = 2 * (event.first_turn - 1), 2 * event.last_turn
        piece = [memory._archive[i] for i in range(first, last) if i not in drop]
        if piece:
            pieces.append(piece)
    return pieces


def _refold(memory: RollingMemory, pieces: list[list[Message]], text: str) -> tuple[str | None, list[FoldEvent]]:
    """The summary and fold events the memory would have made from ``pieces``; reads the memory only."""
    summary: str | None = None
    events: list[FoldEvent] = []
    next_turn = 1
    for piece in pieces:
        try:
            new, condensed, cut, findings = memory._new_summary([m.to_api() for m in piece], summary)
        except SummaryRefused as error:
            raise SummaryRefused(f"{error}, while remaking the summary; nothing was erased",
                                 findings=error.findings) from error
        except SummariserError as error:
            raise SummariserError(f"{error} (while remaking the summary); nothing was erased",
                                  problem=error.problem, will_retry=error.will_retry) from error
        tokens = count_tokens(new) if new is not None else 0
        events.append(FoldEvent(
            first_turn=next_turn, last_turn=next_turn + len(piece) // 2 - 1, messages_folded=len(piece),
            message_tokens=sum(m.tokens for m in piece), old_summary_tokens=count_tokens(summary) if summary else 0,
            summary_tokens=tokens, condensed=condensed, cut=cut, check=findings or (),
            over_cap=memory.max_summary_tokens is not None and tokens > memory.max_summary_tokens))
        summary, next_turn = new, next_turn + len(piece) // 2
    if summary is not None and mentions(summary, text):
        raise SummariserError(f"the remade summary still mentions {text!r}; nothing was erased. Try again with a "
                              "plainer summariser prompt, or forget a shorter text", problem="still mentions",
                              will_retry=False)
    return summary, events


def forget(memory: RollingMemory, text: str) -> ErasureReport:
    """Remove every turn (question and reply) whose text mentions ``text``, any pinned rule that does, and
    remake the summary from the folded turns that remain.

    All or nothing: if a summariser call fails, the summary check refuses a remade summary, or the new
    summary still holds ``text``, nothing is erased and ``SummariserError`` says so. Inside
    ``memory.transaction()`` a later failure undoes the erasure too.
    """
    if not isinstance(text, str) or not text.strip():
        raise SettingError("text", text, "say what to forget: forget() needs a non-empty piece of text, "
                           "e.g. forget(memory, '1,20,000')")
    if mentions(memory.system_prompt, text):
        raise SettingError("text", text, f"{text!r} is in the system prompt, which the application sets: change "
                           "the system prompt instead")
    own = (memory.KIND.heading or "", PINNED_HEADING, PINNED_NOTE, PINNED_OPEN, PINNED_CLOSE, DATA_NOTE, DATA_OPEN,
           DATA_CLOSE)
    if any(mentions(part, text) for part in own if part):
        raise SettingError("text", text, f"{text!r} is in the headings or data markers the memory writes itself, "
                           "not only in the conversation, so it would stay in every request: forget a longer piece "
                           "of what was said")
    archive, start = memory._archive, memory._verbatim_start
    hit_turns = sorted({index // 2 for index, message in enumerate(archive) if mentions(message.content, text)})
    drop = {index for index in range(len(archive)) if index // 2 in hit_turns}
    defences: Any = memory.defences
    rules = defences.pinned_rules if defences is not None else ()
    kept_rules = tuple(rule for rule in rules if not mentions(rule, text))
    summary = memory.summary
    refold = any(index < start for index in drop) or (summary is not None and mentions(summary, text))
    pieces = _pieces(memory, drop) if refold else []
    if refold:
        summary, events = _refold(memory, pieces, text)
    archive = [m for index, m in enumerate(archive) if index not in drop]
    start = sum(len(piece) for piece in pieces) if refold else start
    verbatim_tokens = sum(m.tokens for m in archive[start:])
    if not refold:  # the summary check's findings quote summaries: blank any that held the text
        events = [dataclasses.replace(event, check=tuple("(erased)" if mentions(item, text) else item
                                                         for item in event.check)) for event in memory.fold_events]
    kept = dataclasses.replace(defences, pinned_rules=kept_rules) if kept_rules != rules else defences
    held = memory._held(kept, summary)
    # Commit: everything above only read the memory, and this one update calls no code of ours, so an
    # interrupt lands before it (nothing erased) or after it (all erased). Lists are replaced, not edited,
    # so that a transaction() around this call can put the old ones back.
    vars(memory).update(held, _archive=archive, _verbatim_start=start, _verbatim_tokens=verbatim_tokens,
                        fold_events=events)
    remade = refold and memory.KIND.heading is not None
    return ErasureReport(text, tuple(turn + 1 for turn in hit_turns), len(drop), len(rules) - len(kept_rules), remade,
                         len(pieces) if remade else 0)
