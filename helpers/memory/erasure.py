"""Erasure: forget a fact by removing every turn that mentions it, and remake the summary from what remains.

The archive is append-only except here, on purpose: a user's "forget my salary" must reach the
archive, the summary, the request and (once saved again) the state file. Whole turns go, the
reply with its question, because a reply often repeats what it answers. The summary is written
again from the remaining folded turns (one summariser call), never edited: an edit could leave
a paraphrase behind. Copies outside the memory (recordings, logs, the provider's own) are out
of its reach.
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass, replace
from typing import Any

from helpers.base.redaction import redact_messages
from helpers.base.tokens import count_tokens
from helpers.memory.pinned import PINNED_HEADING
from helpers.memory.placement import DATA_CLOSE, DATA_NOTE, DATA_OPEN
from helpers.memory.summary_check import check_summary
from helpers.memory.types import FoldEvent, SummariserError, SummaryRefused


@dataclass(frozen=True)
class ErasureReport:
    """What ``forget`` removed and whether the summary was written again."""

    text: str
    turns_removed: tuple[int, ...]
    messages_removed: int
    pinned_removed: int
    summary_remade: bool

    def describe(self) -> str:
        """One line: what was removed, or that the text was found nowhere."""
        if not (self.messages_removed or self.pinned_removed or self.summary_remade):
            return (f"forgot {self.text!r}: found in no message, pinned rule or summary, so nothing was erased "
                    "(case and spacing do not matter; a text split across two messages is in neither: forget each part)")
        turns = ", ".join(map(str, self.turns_removed)) or "none"
        return (f"forgot {self.text!r}: turns removed {turns} ({self.messages_removed} messages), "
                f"pinned rules removed {self.pinned_removed}, summary remade: {self.summary_remade}")


def _normal(text: str) -> str:
    """``text`` as a match sees it: NFKC, case folded, every run of spaces, tabs or newlines one space."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _mentions(content: str, text: str) -> bool:
    """True if ``content`` holds ``text``, whatever the case, the spacing or full-width forms."""
    return _normal(text) in _normal(content)


def forget(memory: Any, text: str) -> ErasureReport:
    """(``memory`` is a ``RollingSummaryMemory``: not imported here, as rolling.py calls this module.)

    Remove every turn (question and reply) whose text mentions ``text``, any pinned rule that does,
    and remake the summary from the folded turns that remain.

    All or nothing: if the summariser fails, or its new summary still holds ``text``, nothing is
    erased and ``SummariserError`` says so. Do not call it inside ``memory.transaction()``.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError("say what to forget: forget() needs a non-empty piece of text, e.g. forget('1,20,000')")
    if _mentions(memory.system_prompt, text):
        raise ValueError(f"{text!r} is in the system prompt, which the application sets: change the system prompt instead")
    own = (memory.summary_heading, PINNED_HEADING, DATA_NOTE, DATA_OPEN, DATA_CLOSE)
    if any(_mentions(part, text) for part in own):
        raise ValueError(f"{text!r} is in the headings or data markers the memory writes itself, not only in the "
                         "conversation, so it would stay in every request: forget a longer piece of what was said")
    archive, start = memory._archive, memory._verbatim_start
    hit_turns = sorted({index // 2 for index, message in enumerate(archive) if _mentions(message.content, text)})
    drop = {index for index in range(len(archive)) if index // 2 in hit_turns}
    folded = [m for index, m in enumerate(archive[:start]) if index not in drop]
    recent = [m for index, m in enumerate(archive[start:], start) if index not in drop]
    pinned = tuple(rule for rule in memory._pinned if not _mentions(rule, text))
    pinned_removed = len(memory._pinned) - len(pinned)
    summary = memory._summary
    remade = summary is not None and (any(index < start for index in drop) or _mentions(summary, text))
    if remade:
        summary = None
        if folded:
            messages = [m.to_api() for m in folded]
            summary = memory._call_summariser(redact_messages(messages) if memory.redact else messages, None)
            if _mentions(summary, text):
                raise SummariserError(f"the remade summary still mentions {text!r}; nothing was erased. "
                                      "Try again with a plainer summariser prompt, or forget a shorter text")
    findings = check_summary(summary) if summary and memory.summary_check != "off" else None
    if findings is not None and findings.flagged and memory.summary_check == "refuse":
        raise SummaryRefused(f"the summary check refused the remade summary ({findings.describe()}); "
                              "nothing was erased")
    # Commit: everything above only read the memory.
    memory._archive[:] = folded + recent
    memory._verbatim_start = len(folded)
    memory._verbatim_tokens = sum(m.tokens for m in recent)
    if remade:
        memory._summary = summary
        memory._summary_tokens = count_tokens(summary) if summary else 0
        memory._summary_block_tokens = memory._block_tokens(summary, memory._summary_tokens) if summary else 0
    if remade:
        # The folds that made the old summary described turns that are gone; what made the summary
        # now is one call over the remaining folded turns, so that is the history kept (and saved).
        memory.fold_events = [FoldEvent(
            first_turn=1, last_turn=len(folded) // 2, messages_folded=len(folded),
            message_tokens=sum(m.tokens for m in folded), old_summary_tokens=0,
            summary_tokens=memory._summary_tokens, over_cap=memory.summary_over_cap,
            check=tuple(f"{kind}: {found}" for kind, found in findings.findings) if findings else ())] if summary else []
        for counter in memory.COUNTERS:  # every counter counts folds (summary_count, overflow_count)
            setattr(memory, counter, len(memory.fold_events))
    else:
        # the summary check's findings quote summaries: blank any that held the text
        memory.fold_events = [replace(event, check=tuple("(erased)" if _mentions(item, text) else item
                                                         for item in event.check)) for event in memory.fold_events]
    memory._set_pinned(pinned)  # also rebuilds the request
    return ErasureReport(text, tuple(turn + 1 for turn in hit_turns), len(drop), pinned_removed, remade)
