"""The part every memory kind shares: the archive, the verbatim part, the request and the one fold, held as one
immutable ``MemoryState`` that every change replaces in a single assignment (docs/architecture.md).
A kind decides when to fold; this base drops what leaves the verbatim part, ``SummarisingMemory`` keeps a summary."""
from __future__ import annotations

import contextlib
import copy
import functools
import inspect
from collections.abc import Iterator, Sequence
from operator import attrgetter
from typing import Any, ClassVar, NamedTuple

from helpers.base.files import lone_surrogate_at
from helpers.base.tokens import count_tokens
from helpers.memory.types import (ROLES, FoldEvent, FoldResult, MemoryDefences, MemoryKind, MemorySnapshot, Message,
                                  SettingError, StateError, new_tuple)
from helpers.memory.validation import check_text

DROPPED = FoldResult(None, False, False, None)  # what a fold that keeps nothing stores
_NOT_SETTINGS = frozenset({"self", "system_prompt", "summarise", "defences"})  # what settings() leaves out
_heading_tokens = functools.lru_cache(maxsize=64)(count_tokens)  # a kind's heading, counted once a process


def _registered() -> tuple[str, ...]:
    from helpers.memory.registry import headings  # the registry imports this module

    return headings()


class Sent(dict):  # type: ignore[type-arg]
    """A message as a request sends it, made once and shared by every request that holds it, so read-only."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("a request's messages are shared with the memory and read-only: change a copy, dict(message)")

    __setitem__ = __delitem__ = update = pop = popitem = clear = setdefault = __ior__ = _refuse  # type: ignore

    def __reduce__(self) -> tuple[type, tuple[dict[str, str]]]:
        return Sent, (dict(self),)  # copy and pickle make it again whole (the default would set items one by one)


class Log(NamedTuple):
    """The append-only lists that successive states share; each state sees a prefix of them."""

    messages: list[Message]
    sent: list[Sent | None]  # each message as a request sends it (None: folded before it was needed)
    extra: list[int]  # tokens the escaping of imitations adds to each message as sent (0 without defences)
    events: list[FoldEvent]

    def cut_to(self, length: int, folds: int) -> None:
        """Drop what a later state appended (a rolled-back turn, an interrupted change)."""
        del self.messages[length:], self.sent[length:], self.extra[length:], self.events[folds:]


class Held(NamedTuple):
    """What the request holds besides the verbatim messages: the summary, the defences, and their messages."""

    summary: str | None
    summary_tokens: int
    summary_message: Sent | None
    summary_block_tokens: int
    defences: MemoryDefences | None
    system_message: Sent  # the system prompt with the pinned rules, if any, after it
    pinned_tokens: int
    registered: tuple[str, ...]  # the registered kinds' headings when the escaping was made
    headings: tuple[str, ...]  # the headings escaped: the memory's own and every registered kind's


class MemoryState(NamedTuple):
    """Everything a memory holds, as one value: the first ``length`` messages and ``folds`` fold events of
    ``log``, the verbatim part from ``verbatim_start`` (its tokens as stored, and what escaping adds) and ``held``."""

    log: Log
    length: int
    folds: int
    verbatim_start: int
    verbatim_tokens: int
    verbatim_extra: int
    held: Held


def _splits_after(heading: str, summary: str) -> bool:
    """True when o200k_base's pre-tokenizer always cuts ``heading + summary`` after the heading (so the block's count
    is the two counts added): the heading ends in a line break, the summary starts with no space, break or ``/``."""
    return heading.endswith("\n") and summary[:1] not in ("", "/") and not summary[:1].isspace()


class RollingMemory:
    """Archive, verbatim suffix, request and the one fold that every memory kind uses; a fold drops."""

    KIND: ClassVar[MemoryKind]
    summarise: Any = None  # a kind that drops has no summariser (generic code reads None) ...
    max_summary_tokens: int | None = None  # ... and no summary to cap
    _KEPT_ON_ROLLBACK: ClassVar[tuple[str, ...]] = ("_doomed",)  # facts about the server, not the turn
    _NOT_COPIED: ClassVar[frozenset[str]] = frozenset({"_state", "summarise", "_doomed"})

    def __init__(self, system_prompt: str, *, defences: MemoryDefences | None = None) -> None:
        check_text("system_prompt", system_prompt)
        self.system_prompt = system_prompt
        self.system_prompt_tokens = count_tokens(system_prompt)
        self._state = self._rebuilt([], 0, None, [], defences)

    @classmethod
    def create(cls, system_prompt: str, summarise: Any, settings: dict[str, Any],
               defences: MemoryDefences | None = None) -> RollingMemory:
        """A memory of this kind from its ``settings()``; ``summarise`` is passed only if the kind takes one."""
        given = {"summarise": summarise} if "summarise" in inspect.signature(cls).parameters else {}
        return cls(system_prompt, defences=defences, **given, **settings)

    # ----- the state value -----------------------------------------------------------------------------
    def _held(self, defences: MemoryDefences | None, summary: str | None, old: Held | None = None) -> Held:
        """``summary`` and ``defences`` as the request carries them, each text counted once (the system message
        and pinned rules reused from ``old`` when its defences are the same)."""
        registered, heading = _registered(), self.KIND.heading
        if old is not None and old.defences is defences and old.registered == registered:
            system, pinned_tokens, headings = old.system_message, old.pinned_tokens, old.headings
        else:
            headings = tuple(dict.fromkeys(h for h in (heading, *registered) if h))
            pinned = defences.system_text(self.system_prompt)[len(self.system_prompt):] if defences is not None else ""
            system = Sent(role="system", content=self.system_prompt + pinned)
            pinned_tokens = count_tokens(pinned) if pinned else 0
        if summary is None:
            return Held(None, 0, None, 0, defences, system, pinned_tokens, registered, headings)
        summary_tokens = count_tokens(summary)
        if defences is None:  # the lessons' design: a second system message, the heading then the summary
            message = Sent(role="system", content=heading + summary)
            if _splits_after(heading, summary):  # exact: no token spans the heading's end
                return new_tuple(Held, (summary, summary_tokens, message, _heading_tokens(heading) + summary_tokens,
                                        None, system, pinned_tokens, registered, headings))
        else:
            message = Sent(defences.summary_message(heading, summary, headings))
        return new_tuple(Held, (summary, summary_tokens, message, count_tokens(message["content"]), defences, system,
                                pinned_tokens, registered, headings))

    @staticmethod
    def _sent(message: Message, held: Held) -> tuple[Sent, int]:
        """``message`` as a request sends it, and the tokens its escaping adds (counted only if it changed)."""
        if held.defences is None:
            return Sent(role=message.role, content=message.content), 0
        content = held.defences.sent_text(message.content, held.headings)
        extra = count_tokens(content) - message.tokens if content != message.content else 0
        return Sent(role=message.role, content=content), extra

    def _rebuilt(self, messages: Sequence[Message], verbatim_start: int, summary: str | None, events: list[FoldEvent],
                 defences: MemoryDefences | None) -> MemoryState:
        """A whole new state on new lists (a new memory, a loaded or erased history, other defences)."""
        held = self._held(defences, summary)
        verbatim = messages[verbatim_start:]
        pairs = [self._sent(message, held) for message in verbatim]
        sent: list[Sent | None] = [None] * verbatim_start + [text for text, _ in pairs]
        extra = [0] * verbatim_start + [added for _, added in pairs]
        return MemoryState(Log(list(messages), sent, extra, list(events)), len(messages), len(events),
                           verbatim_start, sum(m.tokens for m in verbatim), sum(extra), held)

    def _current(self) -> MemoryState:
        """The state, remade first if a kind was registered since its escaping was made (under defences)."""
        held = self._state.held
        if held.defences is not None and held.registered != _registered():
            self.replace_history(self.messages, self.verbatim_start, held.summary, self.fold_events, held.defences)
        return self._state

    # ----- what the memory holds -------------------------------------------------------------------------
    @property
    def messages(self) -> tuple[Message, ...]:
        """Every message ever added, with its token count (the archive as records, not request dicts)."""
        state = self._state
        return tuple(state.log.messages[:state.length])

    @property
    def fold_events(self) -> list[FoldEvent]:
        """What each fold did, in order (read it, never change it: the list is shared by the memory's states)."""
        state = self._state
        events = state.log.events
        return events if len(events) == state.folds else events[:state.folds]  # O(1) at any length

    @property
    def archive(self) -> list[dict[str, str]]:
        return [message.to_api() for message in self.messages]

    @property
    def verbatim(self) -> list[dict[str, str]]:
        return [message.to_api() for message in self.verbatim_records]

    recent_turns = verbatim  # lesson 3's name for them (notebooks 02 and 06)

    summary = property(attrgetter("_state.held.summary"))
    current_summary = summary  # lesson 3's name for it (notebooks 02 and 06)
    summary_tokens = property(attrgetter("_state.held.summary_tokens"))
    # the summary message as sent: its heading (or data markers) plus the summary; 0 without one
    summary_block_tokens = property(attrgetter("_state.held.summary_block_tokens"))
    verbatim_tokens = property(attrgetter("_state.verbatim_tokens"))
    # the archive's index of the first message sent verbatim (always even: only whole turns fold)
    verbatim_start = property(attrgetter("_state.verbatim_start"))
    summary_count = property(attrgetter("_state.folds"))
    defences = property(attrgetter("_state.held.defences"))

    @defences.setter
    def defences(self, defences: MemoryDefences | None) -> None:
        """Set (or change) the defences; the request's messages are remade for them."""
        self.replace_history(self.messages, self.verbatim_start, self.summary, self.fold_events, defences)

    @property
    def verbatim_records(self) -> list[Message]:
        """The verbatim part as records, with their token counts (a new list each call)."""
        state = self._state
        return state.log.messages[state.verbatim_start:state.length]

    @property
    def verbatim_messages(self) -> int:
        return self._state.length - self._state.verbatim_start

    @property
    def request_tokens(self) -> int:
        """o200k_base tokens of the request's contents as sent (the chat template adds a few per message)."""
        state = self._current()
        held = state.held
        return (self.system_prompt_tokens + held.pinned_tokens + held.summary_block_tokens + state.verbatim_tokens
                + state.verbatim_extra)

    @property
    def turns_folded(self) -> int:
        """Whole turns no longer sent verbatim (turns 1 to this number)."""
        return self._state.verbatim_start // 2

    @property
    def last_fold(self) -> FoldEvent | None:
        state = self._state
        return state.log.events[state.folds - 1] if state.folds else None

    # ----- the request -----------------------------------------------------------------------------------
    def get_messages_for_api(self) -> list[dict[str, str]]:
        """The request, a new list each call of read-only messages made once: the system prompt (the pinned rules
        after it), the summary block, the verbatim messages (under defences, imitations of memory blocks escaped)."""
        log, length, _, start, _, _, held = self._state if self._state.held.defences is None else self._current()
        summary = held.summary_message
        request: list[dict[str, str]] = [held.system_message] if summary is None else [held.system_message, summary]
        request += log.sent[start:length]  # type: ignore[arg-type]
        return request

    def snapshot(self) -> MemorySnapshot:
        """The numbers a turn line reads: sizes of the request's parts and the folds so far."""
        state = self._current()
        held = state.held
        return MemorySnapshot(
            kind=self.KIND.name, turn=(state.length + 1) // 2, summary=held.summary,
            summary_tokens=held.summary_tokens, summary_block_tokens=held.summary_block_tokens,
            pinned_tokens=held.pinned_tokens, system_prompt_tokens=self.system_prompt_tokens,
            verbatim_tokens=state.verbatim_tokens, verbatim_messages=state.length - state.verbatim_start,
            request_tokens=self.request_tokens, folds=state.folds)

    # ----- adding messages and folding -------------------------------------------------------------------
    def checked_message(self, role: str, content: str, index: int | None = None) -> Message:
        """The message ``role``/``content`` checked as ``add_message`` checks one and counted, as the archive's next
        one (or its ``index``-th); ``SettingError`` for a wrong role or an unstorable text."""
        expected = ROLES[(self._state.length if index is None else index) % 2]
        if role == expected and type(content) is str and (content.isascii() or lone_surrogate_at(content) is None):
            return new_tuple(Message, (role, content, count_tokens(content)))  # the common case, checked in one pass
        if role not in ROLES:
            raise SettingError("role", role, f"role must be 'user' or 'assistant', got {role!r}; the system prompt "
                               "is set once, in the constructor")
        check_text(f"the {role} message's content", content)
        if role == expected:  # a str subclass that is fine
            return Message(role, content, count_tokens(content))
        raise SettingError("role", role, "expected a user message: the last turn is complete, so a new turn "
                           "starts with the user" if role == "assistant" else "expected the assistant's reply: "
                           "the last user message has no reply yet; add the reply first")

    def _append(self, message: Message) -> None:
        """Store ``message`` at the end of the verbatim part, in one assignment of the new state."""
        log, length, folds, start, tokens, extra, held = self._state  # unpacked: read on every message
        messages, sent, extras, _ = log
        if len(messages) > length:  # left by an interrupted change: no state sees it
            log.cut_to(length, folds)
        if held.defences is None:  # the lessons' design: sent as it is
            message_sent, added = Sent(role=message.role, content=message.content), 0
        else:
            message_sent, added = self._sent(message, held)
        messages.append(message)
        sent.append(message_sent)
        extras.append(added)
        self._state = new_tuple(MemoryState,
                                (log, length + 1, folds, start, tokens + message.tokens, extra + added, held))

    def _new_summary(self, old: list[Message], existing: str | None) -> FoldResult | None:
        """What a fold of ``old`` into ``existing`` stores (None: the fold is not made now); this base drops."""
        return DROPPED

    def _fold(self, n_messages: int) -> FoldEvent | None:
        """Fold the oldest ``n_messages`` verbatim messages into a new state, stored in one assignment once the
        fold's work is done (an interrupt or a failure before it leaves the old state); None if not made now."""
        log, length, folds, start, tokens, extra, old_held = self._state
        end = start + n_messages
        old = log.messages[start:end]
        result = self._new_summary(old, old_held.summary)
        if result is None:
            return None
        held = old_held
        if result.summary is not None or held.summary is not None:  # a drop keeps the old held part
            held = self._held(held.defences, result.summary, held)
        event = FoldEvent.of(start // 2 + 1, old, old_held.summary_tokens, held.summary_tokens, result,
                             self.max_summary_tokens)
        if extra:
            extra -= sum(log.extra[start:end])
        new = new_tuple(MemoryState, (log, length, folds + 1, end, tokens - event.message_tokens, extra, held))
        if len(log.events) > folds:
            log.cut_to(length, folds)
        log.events.append(event)
        self._state = new
        return event

    # ----- transactions, settings and saved states -------------------------------------------------------
    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Undo every change made inside the block if it raises: the state value comes back, the shared lists are
        cut to its lengths, and a kind's own fields come back from deep copies (a set changed in place too).
        The record of a fold that failed for good (``fold_waits``) outlives the undone turn."""
        saved = dict(vars(self))
        own = copy.deepcopy({name: value for name, value in saved.items() if name not in self._NOT_COPIED})
        try:
            yield
        except BaseException:
            state = saved["_state"]
            state.log.cut_to(state.length, state.folds)
            kept = {name: vars(self)[name] for name in self._KEPT_ON_ROLLBACK if name in vars(self)}
            vars(self).clear()
            vars(self).update(saved, **own, **kept)
            raise

    def settings(self) -> dict[str, Any]:
        """What the constructor took besides the prompt, summariser and defences, read by name off the first
        signature that names its parameters (a saved state and the attack table remake the memory from these)."""
        for cls in type(self).__mro__:
            params = inspect.signature(cls.__init__).parameters.values()
            if all(p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
                return {p.name: getattr(self, p.name) for p in params if p.name not in _NOT_SETTINGS}
        return {}

    def check_loaded(self) -> None:
        """Refuse a loaded state that breaks this kind's rules (``StateError`` naming the field)."""
        if self.summary is not None:
            raise StateError("summary", f"a {self.KIND.name} never holds a summary; this state has one")

    # ----- public access for saved states and erasure (state.py, erasure.py) ---------------------------------
    def summary_for(self, messages: list[dict[str, str]], existing: str | None) -> FoldResult:
        """What a fold of ``messages`` into ``existing`` would store, computed without changing the memory."""
        return DROPPED

    def replace_history(self, messages: Sequence[Message], verbatim_start: int, summary: str | None,
                        fold_events: list[FoldEvent], defences: MemoryDefences | None) -> None:
        """Store a whole history at once (a loaded state, an erasure), on new lists, in one assignment."""
        self._state = self._rebuilt(messages, verbatim_start, summary, fold_events, defences)
