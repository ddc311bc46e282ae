"""The part every memory kind shares: the archive, the verbatim suffix, the summary that stands for the
older part, and the one fold.

A kind decides *when* to fold (``SummaryMemory``: after N turns; ``SummaryBufferMemory``: before a token
budget would overflow; ``SlidingWindowMemory``: when the window is full) and, by overriding
``_new_summary``, *what* a fold keeps (a summary written by ``summarise(messages, existing_summary)``, or
nothing). The request is built on each call from the system prompt, the memory messages (the summary
block) and the archive's verbatim slice; pinned rules, when the defences pin some, follow the system prompt in
the first system message.

Each message is counted once, when it is added, and the verbatim part is a suffix of the append-only
archive (a start index and a running token total), so a turn costs the same at turn 10 as at 10,000.
A fold changes nothing until the summariser has answered and its answer passed the checks: a failure,
or an interrupt (the stop button) anywhere inside it, leaves the memory as it was before the fold.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, ClassVar, NamedTuple

from helpers.base.tokens import count_tokens
from helpers.memory.imitation import escape_imitations
from helpers.memory.placement import shows_nothing
from helpers.memory.types import (
    ROLES,
    FoldEvent,
    FoldResult,
    MemoryDefences,
    MemoryKind,
    MemorySnapshot,
    Message,
    SettingError,
    StateError,
    Summarised,
    Summariser,
    SummariserError,
    SummaryRefused,
)
from helpers.memory.validation import check_count, check_text


def _sentence(text: str) -> str:
    """``text`` ending with a full stop, so another sentence can follow it."""
    text = text.rstrip()
    return text if text.endswith((".", "!", "?")) else text + "."


class _DoomedFold(NamedTuple):
    """A fold that failed in a way a retry cannot fix, and what it was tried with."""

    conditions: tuple[Any, ...]  # RollingMemory._fold_conditions() at the time
    summarise: Summariser | None
    message_tokens: int


class RollingMemory:
    """Archive, verbatim suffix, summary and the one fold that every memory kind uses."""

    KIND: ClassVar[MemoryKind]

    def __init__(self, system_prompt: str, summarise: Summariser | None, *, max_summary_tokens: int | None = None,
                 defences: MemoryDefences | None = None) -> None:
        check_text("system_prompt", system_prompt)
        if self.KIND.heading is not None and not callable(summarise):
            raise SettingError("summarise", summarise, "summarise must be a callable (messages, existing_summary) "
                               "-> str: the summariser that writes the summary")
        if max_summary_tokens is not None:
            check_count("max_summary_tokens", max_summary_tokens, 1, "a summary needs room for at least one token")
        self.system_prompt, self.summarise, self.max_summary_tokens = system_prompt, summarise, max_summary_tokens
        self.system_prompt_tokens = count_tokens(system_prompt)
        self._archive: list[Message] = []
        self._verbatim_start = 0
        self._verbatim_tokens = 0
        self.fold_events: list[FoldEvent] = []
        self._summary: str | None = None
        self._doomed: _DoomedFold | None = None  # the last fold that failed for good
        self.defences = defences  # None: the lessons' design; else helpers.memory.defences.Defences

    @classmethod
    def create(cls, system_prompt: str, summarise: Summariser | None, settings: dict[str, Any],
               defences: MemoryDefences | None = None) -> RollingMemory:
        """A memory of this kind from its ``settings()`` (what generic code, a saved state or the attack table uses)."""
        return cls(system_prompt, summarise, defences=defences, **settings)

    # ----- what the memory holds -------------------------------------------------------------
    @property
    def archive(self) -> list[dict[str, str]]:
        """Every message ever added, in order. Never sent to the model."""
        return [message.to_api() for message in self._archive]

    @property
    def verbatim(self) -> list[dict[str, str]]:
        """The recent messages sent word for word."""
        return [message.to_api() for message in self._archive[self._verbatim_start:]]

    @property
    def summary(self) -> str | None:
        return self._summary

    @property
    def current_summary(self) -> str | None:
        """The summary, by the name lesson 3's class gives it (notebooks 02 and 06)."""
        return self._summary

    @property
    def recent_turns(self) -> list[dict[str, str]]:
        """The messages sent word for word, by the name lesson 3's class gives them (the same as ``verbatim``)."""
        return self.verbatim

    @property
    def summary_tokens(self) -> int:
        return self._summary_tokens

    @property
    def summary_block_tokens(self) -> int:
        """Tokens of the summary message as sent: its heading (or data markers) plus the summary; 0 without one."""
        return self._summary_block_tokens

    @property
    def verbatim_tokens(self) -> int:
        return self._verbatim_tokens

    @property
    def request_tokens(self) -> int:
        """o200k_base tokens of the request's contents (the chat template adds a few per message)."""
        return self.system_prompt_tokens + self._pinned_tokens + self._summary_block_tokens + self._verbatim_tokens

    @property
    def summary_count(self) -> int:
        """Folds made so far (each one fold event)."""
        return len(self.fold_events)

    @property
    def turns_folded(self) -> int:
        """Whole turns no longer sent verbatim (turns 1 to this number)."""
        return self._verbatim_start // 2

    @property
    def turn_count(self) -> int:
        """Turns started so far, the one awaiting a reply included."""
        return (len(self._archive) + 1) // 2

    @property
    def last_message_tokens(self) -> int:
        """Tokens of the most recently added message (0 before the first)."""
        return self._archive[-1].tokens if self._archive else 0

    @property
    def last_fold(self) -> FoldEvent | None:
        return self.fold_events[-1] if self.fold_events else None

    @property
    def summary_over_cap(self) -> bool:
        """True when the summary is longer than max_summary_tokens even after being condensed."""
        return self.max_summary_tokens is not None and self._summary_tokens > self.max_summary_tokens

    @property
    def defences(self) -> MemoryDefences | None:
        return self._defences

    @defences.setter
    def defences(self, defences: MemoryDefences | None) -> None:
        """Set (or change) the defences; the memory messages are remade for them."""
        vars(self).update(self._held(defences, self._summary))

    def _set_summary(self, summary: str | None) -> None:
        """Store the summary and the message that carries it (counted once, here)."""
        vars(self).update(self._held(self._defences, summary, pinned=False))

    def _held(self, defences: MemoryDefences | None, summary: str | None, *, pinned: bool = True) -> dict[str, Any]:
        """The attributes that hold ``summary`` under ``defences`` (and the pinned block, with ``pinned``): the
        summary message, the pinned text the first system message carries, and their token counts. Made apart
        from storing them, so that a change is stored in one update: an interrupt (the stop button) lands before
        it or after it, never halfway. Under any defences, text in the summary that imitates a memory block is
        escaped (``imitation.py``)."""
        if summary is None:
            message = None
        elif defences is not None:
            message = defences.summary_message(self.KIND.heading, escape_imitations(summary, self._own_headings()))
        else:  # the lessons' design: a second system message, the heading then the summary
            message = {"role": "system", "content": self.KIND.heading + summary}
        held = {"_summary": summary, "_summary_tokens": count_tokens(summary) if summary is not None else 0,
                "_summary_message": message, "_summary_block_tokens": count_tokens(message["content"]) if message else 0}
        if pinned:
            block = defences.pinned_message() if defences is not None else None
            text = f"\n\n{block['content']}" if block else ""
            held.update(_defences=defences, _pinned=text, _pinned_tokens=count_tokens(text) if text else 0)
        return held

    def _own_headings(self) -> tuple[str, ...]:
        return (self.KIND.heading,) if self.KIND.heading else ()

    # ----- the request -----------------------------------------------------------------------
    def memory_messages(self) -> list[dict[str, str]]:
        """The messages between the system prompt and the verbatim part: the summary block, once there is one
        (pinned rules are no message of their own: they ride in the first system message)."""
        return [dict(self._summary_message)] if self._summary_message is not None else []

    def get_messages_for_api(self) -> list[dict[str, str]]:
        """The request: the system prompt (with the pinned rules after it), the memory messages, then the verbatim
        messages (a new list each call). Under any defences, verbatim text that imitates a memory block is escaped."""
        verbatim = [message.to_api() for message in self._archive[self._verbatim_start:]]
        if self._defences is not None:
            headings = self._own_headings()
            verbatim = [{**message, "content": escape_imitations(message["content"], headings)} for message in verbatim]
        return [{"role": "system", "content": self.system_prompt + self._pinned}, *self.memory_messages(), *verbatim]

    def snapshot(self) -> MemorySnapshot:
        """The numbers a turn line reads: sizes of the request's parts and the folds so far."""
        return MemorySnapshot(
            kind=self.KIND.name, turn=self.turn_count, summary=self._summary, summary_tokens=self._summary_tokens,
            summary_block_tokens=self._summary_block_tokens, pinned_tokens=self._pinned_tokens,
            system_prompt_tokens=self.system_prompt_tokens, verbatim_tokens=self._verbatim_tokens,
            verbatim_messages=len(self._archive) - self._verbatim_start, request_tokens=self.request_tokens,
            folds=len(self.fold_events))

    # ----- adding messages and folding ---------------------------------------------------------
    def _new_message(self, role: str, content: str, index: int | None = None) -> Message:
        """The message ``role``/``content`` checked and counted, as the archive's next one (or its ``index``-th)."""
        index = len(self._archive) if index is None else index
        if role not in ROLES:
            raise SettingError("role", role, f"role must be 'user' or 'assistant', got {role!r}; the system prompt is "
                               "set once, in the constructor")
        check_text("the user message's content" if role == "user" else "the assistant message's content", content)
        if role != ROLES[index % 2]:
            if role == "assistant":
                raise SettingError("role", role, "expected a user message: the last turn is complete, so a new turn "
                                   "starts with the user")
            raise SettingError("role", role, "expected the assistant's reply: the last user message has no reply "
                               "yet; add the reply first")
        return Message(role, content, count_tokens(content))

    def _append(self, message: Message) -> None:
        self._archive.append(message)
        self._verbatim_tokens += message.tokens

    def _fold_conditions(self) -> tuple[Any, ...]:
        """What a fold's request depends on besides the folded messages and the summariser: if none of it
        changes, a fold that failed for good fails again."""
        return self._summary, self.settings(), self._defences

    @property
    def fold_waits(self) -> bool:
        """True while the next fold is one that failed in a way a retry cannot fix (a request too long for the
        server's context, say): it is not tried again until the summary, the settings, the defences or the
        summariser (another object) change, or fewer tokens are to be folded."""
        doomed = self._doomed
        return (doomed is not None and doomed.summarise is self.summarise
                and doomed.conditions == self._fold_conditions())

    def _fold(self, n_messages: int) -> FoldEvent | None:
        """Fold the oldest ``n_messages`` verbatim messages: one summariser call (or a drop, for a window).

        On failure nothing changes and ``SummariserError`` is raised. A fold at least as large as one that failed
        for good (``will_retry`` False) is not attempted while ``fold_waits``: None, and nothing changes.
        """
        start = self._verbatim_start
        old = self._archive[start:start + n_messages]
        message_tokens = sum(m.tokens for m in old)
        if self.fold_waits and message_tokens >= self._doomed.message_tokens:  # type: ignore[union-attr]
            return None
        try:
            result = self._new_summary([m.to_api() for m in old], self._summary)
        except SummariserError as error:
            if not error.will_retry:
                self._doomed = _DoomedFold(self._fold_conditions(), self.summarise, message_tokens)
            raise
        held = self._held(self._defences, result.summary, pinned=False)
        tokens = held["_summary_tokens"]
        event = FoldEvent(first_turn=start // 2 + 1, last_turn=(start + n_messages) // 2, messages_folded=n_messages,
                          message_tokens=message_tokens, old_summary_tokens=self._summary_tokens, summary_tokens=tokens,
                          condensed=result.condensed, cut=result.cut, check=result.findings or (),
                          over_cap=self.max_summary_tokens is not None and tokens > self.max_summary_tokens)
        # Commit: everything above only read the memory, and the commit calls no code of ours, so an interrupt
        # (the stop button) raised in any call of the fold lands before it: nothing changed.
        vars(self).update(held, _verbatim_start=start + n_messages, _verbatim_tokens=self._verbatim_tokens - message_tokens)
        self.fold_events.append(event)
        return event

    def _new_summary(self, messages: list[dict[str, str]], existing: str | None) -> FoldResult:
        """The summary after folding ``messages`` into ``existing``: (summary, condensed, cut, check findings).

        Reads the memory, never changes it. Over ``max_summary_tokens`` the summary is summarised once more;
        the defences, if any, redact the summariser's input and check the new summary (and may refuse it).
        """
        given = self._defences.fold_input(messages) if self._defences is not None else messages
        written = self._call_summariser(given, existing)
        summary, cut, condensed = written.text, written.cut, False
        # counted here only to hold it to the cap: what a fold stores is counted once, in _held
        if self.max_summary_tokens is not None and (tokens := count_tokens(summary)) > self.max_summary_tokens:
            try:
                shorter: Summarised | None = self._call_summariser([], summary)
            except SummariserError:
                shorter = None  # the fold itself worked; the cap is reported as missed on the fold event
            if shorter is not None and count_tokens(shorter.text) < tokens:
                summary, condensed, cut = shorter.text, True, shorter.cut
        findings = self._defences.check(summary, self.system_prompt) if self._defences is not None else None
        if self._defences is not None and self._defences.refuses(findings):
            raise SummaryRefused(f"the summary check refused the new summary ({'; '.join(findings or ())})",
                                 findings=findings or ())
        return FoldResult(summary, condensed, cut, findings)

    def _call_summariser(self, messages: list[dict[str, str]], existing: str | None) -> Summarised:
        what = "condensing the summary" if not messages else f"folding {len(messages)} messages"
        try:
            result = self.summarise(messages, existing)  # type: ignore[misc]
        except Exception as error:
            retry = getattr(error, "retry_can_help", True) is not False
            raise SummariserError(_sentence(f"the summariser raised {type(error).__name__} while {what}: {error}"),
                                  will_retry=retry) from error
        cut = isinstance(result, Summarised) and result.cut
        result = result.text if isinstance(result, Summarised) else result
        if not isinstance(result, str):
            raise SummariserError(f"the summariser returned {type(result).__name__} ({str(result)[:60]!r}) while "
                                  f"{what}, not text; a summariser must return the summary as a str (or Summarised).",
                                  problem="not text")
        if shows_nothing(result):
            raise SummariserError(f"the summariser returned empty text while {what}; an empty summary is never "
                                  "stored.", problem="empty text")
        try:
            check_text("the summary", result)
        except ValueError as error:
            raise SummariserError(f"the summariser's text was refused while {what}: {error}",
                                  problem="unstorable text") from error
        return Summarised(result.strip(), cut)

    @staticmethod
    def _kept_error(error: SummariserError, role: str) -> SummariserError:
        """The fold's error, saying what was kept and what happens next (raised from ``add_message``)."""
        kept = (f"Nothing was lost: the {role} message was kept verbatim and added to the archive, and the summary "
                "is unchanged.")
        if isinstance(error, SummaryRefused):  # the summariser worked; what it wrote was refused
            return SummaryRefused(
                f"{_sentence(str(error))} {kept} The fold is tried again on a later message and is refused again "
                "while the turns to fold hold that text: forget() it, or use summary_check='report' to keep the "
                "summary and see the findings on the fold line.", findings=error.findings, kept_role=role)
        later = ("The fold will be tried again on a later message. Fix the summariser (or switch to replay/offline "
                 "mode) and go on." if error.will_retry else
                 "Trying the same fold again cannot help (the summariser's error says so), so the memory does not try "
                 "it again until the summary, the memory's settings or its summariser change: fix what the error "
                 "names, then give the memory a summariser from a new connect() (memory.summarise = ...) or run the "
                 "notebook again.")
        return SummariserError(f"{_sentence(str(error))} {kept} {later}", problem=error.problem, kept_role=role,
                               will_retry=error.will_retry)

    # ----- transactions, settings and saved states ---------------------------------------------
    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Undo every change made inside the block if it raises: a failed model call changes nothing.

        Every attribute is put back as it was, except the record of a fold that failed for good (``fold_waits``):
        that is a fact about the server, not the turn. The lists (the archive, the fold events) are only appended
        to, or replaced whole (by ``forget``), so they are cut back to their old lengths, not copied.
        """
        saved = dict(vars(self))
        lengths = {name: len(value) for name, value in saved.items() if isinstance(value, list)}
        try:
            yield
        except BaseException:
            for name, length in lengths.items():
                del saved[name][length:]
            doomed = self._doomed  # what a failed fold taught about the server outlives the undone turn
            vars(self).clear()
            vars(self).update(saved, _doomed=doomed)
            raise

    def settings(self) -> dict[str, Any]:
        """The kind's own settings (what its constructor takes besides the prompt, summariser and defences)."""
        return {"max_summary_tokens": self.max_summary_tokens}

    def check_loaded(self) -> None:
        """Refuse a loaded state that breaks this kind's rules (``StateError`` naming the field).

        A kind that summarises sends the folded turns only through the summary: there is a summary exactly
        when some turns were folded.
        """
        if (self._summary is None) != (self._verbatim_start == 0):
            raise StateError("summary", f"summary and verbatim_start disagree: summary is "
                             f"{'null' if self._summary is None else 'set'} but verbatim_start is "
                             f"{self._verbatim_start}; turns before verbatim_start are sent only through the summary, "
                             "so there is a summary exactly when verbatim_start > 0")

    # ----- public access for saved states and erasure (helpers.memory.state, helpers.memory.erasure) -----
    # What those modules read and write, so that no module outside this class reaches a private field.
    @property
    def messages(self) -> tuple[Message, ...]:
        """Every message ever added, with its token count (the archive as records, not request dicts)."""
        return tuple(self._archive)

    @property
    def verbatim_start(self) -> int:
        """Index in the archive of the first message sent verbatim (always even: only whole turns fold)."""
        return self._verbatim_start

    def checked_message(self, role: str, content: str, index: int) -> Message:
        """The message at archive position ``index``, checked as ``add_message`` checks one and counted
        (``SettingError`` for a wrong role or an unstorable text)."""
        return self._new_message(role, content, index)

    def summary_for(self, messages: list[dict[str, str]], existing: str | None) -> FoldResult:
        """What a fold of ``messages`` into ``existing`` would store, computed without changing the memory:
        (summary, condensed, cut, check findings); raises ``SummariserError`` or ``SummaryRefused`` as a fold does."""
        return self._new_summary(messages, existing)

    def replace_history(self, messages: list[Message], verbatim_start: int, summary: str | None,
                        fold_events: list[FoldEvent], defences: MemoryDefences | None) -> None:
        """Store a whole history at once (a loaded state, an erasure): one update, so that an interrupt lands
        before it (nothing changed) or after it (all changed). The lists are new ones, never edited in place,
        so that a ``transaction()`` around the call can put the old ones back."""
        held = self._held(defences, summary)
        tokens = sum(message.tokens for message in messages[verbatim_start:])
        vars(self).update(held, _archive=list(messages), _verbatim_start=verbatim_start, _verbatim_tokens=tokens,
                          fold_events=list(fold_events))
