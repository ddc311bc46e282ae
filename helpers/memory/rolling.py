"""What every memory kind shares, in plain attributes: the archive, the verbatim part, the request and the fold (a
drop here). A change works out what it stores, then stores it with plain assignments, so an interrupt lands before or
after it (docs/architecture.md)."""
from __future__ import annotations

import contextlib
import copy
import functools
import inspect
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from helpers.base.tokens import count_tokens
from helpers.memory.registry import headings
from helpers.memory.types import (ROLES, FoldEvent, FoldResult, MemoryDefences, MemoryKind, MemorySnapshot, Message,
                                  SettingError, StateError, check_text)

DROPPED = FoldResult(None, False, False, None)  # what a fold that keeps nothing stores
_NOT_SETTINGS = frozenset({"self", "system_prompt", "summarise", "defences"})  # what settings() leaves out
_IMMUTABLE = (str, int, float, type(None), tuple, frozenset)
_heading_tokens = functools.lru_cache(maxsize=64)(count_tokens)  # a kind's heading, counted once a process


def _splits_after(heading: str, summary: str) -> bool:
    """True when o200k_base's pre-tokenizer always cuts ``heading + summary`` after the heading (so the message's
    count is the two counts added): the heading ends in a line break, the summary starts with no space, break or /."""
    return heading.endswith("\n") and summary[:1] not in ("", "/") and not summary[:1].isspace()


def quoted_headings(heading: str | None) -> tuple[str, ...]:
    """The headings whose copies quoting defences quote: the memory's own and every registered kind's."""
    return tuple(dict.fromkeys(h for h in (heading, *headings()) if h))


def summary_message(memory: Any) -> dict[str, str] | None:
    """``memory``'s summary as sent under its defences (None without a summary)."""
    heading, summary, defences = memory.KIND.heading or "", memory.summary, memory.defences
    if summary is None or defences is None:
        return None if summary is None else {"role": "system", "content": heading + summary}
    return defences.summary_message(heading, summary, quoted_headings(memory.KIND.heading))


def sent_texts(memory: Any) -> list[str]:
    """Each verbatim message's text as sent (under defences that quote, copies of a memory's blocks quoted)."""
    defences, kinds = memory.defences, quoted_headings(memory.KIND.heading)
    return [defences.sent_text(m.content, kinds) if defences else m.content for m in memory.verbatim_records]


@contextlib.contextmanager
def rolled_back(memory: Any) -> Iterator[None]:
    """Undo every change made to ``memory`` inside the block if it raises: the archive and fold events cut back to
    their lengths, other attributes put back (a kind's own mutable ones from deep copies); ``fold_waits`` stays."""
    fields = vars(memory)
    saved = dict(fields)
    lengths = {name: len(saved[name]) for name in ("_messages", "fold_events")}  # never copied: a turn costs the same
    own = copy.deepcopy({name: value for name, value in saved.items() if name not in lengths
                         and name not in ("summarise", "_defences") and not isinstance(value, _IMMUTABLE)})
    try:
        yield
    except BaseException:
        kept = {"_doomed": fields["_doomed"]} if "_doomed" in fields else {}  # a fact about the server, not the turn
        for name, length in lengths.items():
            del saved[name][length:]
        fields.clear()
        fields.update(saved, **own, **kept)
        raise


class RollingMemory:
    """Archive, verbatim part, request and the one fold that every memory kind uses; a fold drops."""

    KIND: ClassVar[MemoryKind]
    max_message_chars = 100_000  # the longest message or system prompt stored (the course's longest: 1,816)
    summarise: Any = None  # a kind that drops has no summariser (generic code reads None) ...
    max_summary_tokens: int | None = None  # ... and no summary to cap

    def __init__(self, system_prompt: str, *, defences: MemoryDefences | None = None) -> None:
        check_text("system_prompt", system_prompt, self.max_message_chars, "max_message_chars")
        self.system_prompt, self.system_prompt_tokens = system_prompt, count_tokens(system_prompt)
        self._counted = ("", 0)  # the summary's message as sent and its tokens, counted once for each text
        self.replace_history([], 0, None, [], defences)

    @classmethod
    def create(cls, system_prompt: str, summarise: Any, settings: dict[str, Any],
               defences: MemoryDefences | None = None) -> RollingMemory:
        """A memory of this kind from its ``settings()``; ``summarise`` is passed only if the kind takes one."""
        given = {"summarise": summarise} if "summarise" in inspect.signature(cls).parameters else {}
        return cls(system_prompt, defences=defences, **given, **settings)

    def settings(self) -> dict[str, Any]:
        """What the constructor took besides the prompt, summariser and defences (saved states and the attack table
        remake the memory from these), read off the first signature that names its parameters."""
        for cls in type(self).__mro__:
            params = inspect.signature(cls.__init__).parameters.values()
            if all(p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
                return {p.name: getattr(self, p.name) for p in params if p.name not in _NOT_SETTINGS}
        return {}

    messages = property(lambda self: tuple(self._messages), doc="Every message added, as Message records.")
    archive = property(lambda self: [m.to_api() for m in self._messages], doc="Every message added, as dicts.")
    verbatim_records = property(lambda self: self._messages[self.verbatim_start:], doc="The verbatim part.")
    verbatim = property(lambda self: [m.to_api() for m in self.verbatim_records], doc="The verbatim part, as dicts.")
    recent_turns = verbatim  # lesson 3's name for them (notebooks 02 and 06)
    current_summary = property(lambda self: self.summary)  # lesson 3's name for it
    verbatim_messages = property(lambda self: len(self._messages) - self.verbatim_start)
    turns_folded = property(lambda self: self.verbatim_start // 2, doc="Turns 1 to this are no longer verbatim.")
    summary_count = property(lambda self: len(self.fold_events))
    last_fold = property(lambda self: self.fold_events[-1] if self.fold_events else None)

    transaction = rolled_back  # undo every change made inside the block if it raises
    defences = property(lambda self: self._defences, lambda self, defences: self.replace_history(
        self._messages, self.verbatim_start, self.summary, self.fold_events, defences), doc="Set: the request remade.")

    def _system_text(self) -> str:
        return self._defences.system_text(self.system_prompt) if self._defences else self.system_prompt

    def get_messages_for_api(self) -> list[dict[str, str]]:
        """The request, new dicts each call: the system prompt (and pinned rules), the summary, the verbatim part."""
        summary = summary_message(self)
        return [{"role": "system", "content": self._system_text()}, *([summary] if summary else []),
                *({"role": m.role, "content": text} for m, text in zip(self.verbatim_records, sent_texts(self)))]

    @property
    def summary_block_tokens(self) -> int:
        """Tokens of the summary's message as sent (0 without one), counted once for each text it takes (the
        heading's count added to the summary's where that is exact)."""
        message, heading = summary_message(self), self.KIND.heading or ""
        if message is not None and message["content"] != self._counted[0]:
            exact = message["content"] == heading + self.summary and _splits_after(heading, self.summary)
            self._counted = (message["content"], _heading_tokens(heading) + self.summary_tokens if exact else
                             count_tokens(message["content"]))
        return 0 if message is None else self._counted[1]

    @property
    def pinned_tokens(self) -> int:
        """The tokens the pinned rules add to the first system message (0 without pinned rules)."""
        system = self._system_text()
        return count_tokens(system) - self.system_prompt_tokens if system != self.system_prompt else 0

    @property
    def request_tokens(self) -> int:
        """o200k_base tokens of the request's contents as sent (the chat template adds a few per message)."""
        quoting = sum(count_tokens(text) - m.tokens for m, text in zip(self.verbatim_records, sent_texts(self))
                      if text != m.content)
        return (self.system_prompt_tokens + self.pinned_tokens + self.summary_block_tokens + self.verbatim_tokens
                + quoting)

    def snapshot(self) -> MemorySnapshot:
        """The numbers a turn line reads: sizes of the request's parts and the folds so far."""
        return MemorySnapshot(
            kind=self.KIND.name, turn=(len(self._messages) + 1) // 2, summary=self.summary,
            summary_tokens=self.summary_tokens, summary_block_tokens=self.summary_block_tokens,
            pinned_tokens=self.pinned_tokens, system_prompt_tokens=self.system_prompt_tokens,
            verbatim_tokens=self.verbatim_tokens, verbatim_messages=self.verbatim_messages,
            request_tokens=self.request_tokens, folds=len(self.fold_events))

    def checked_message(self, role: str, content: str, index: int | None = None) -> Message:
        """The message checked as ``add_message`` checks one (its length before anything reads it) and counted, as
        the archive's next one (or its ``index``-th); ``SettingError`` for a wrong role or a text it cannot store."""
        if role not in ROLES:
            raise SettingError("role", role, f"role must be 'user' or 'assistant', got {role!r}; the system prompt "
                               "is set once, in the constructor")
        check_text(f"the {role} message's content", content, self.max_message_chars, "max_message_chars")
        if role != ROLES[(len(self._messages) if index is None else index) % 2]:
            raise SettingError("role", role, "expected a user message: the last turn is complete, so a new turn "
                               "starts with the user" if role == "assistant" else "expected the assistant's reply: "
                               "the last user message has no reply yet; add the reply first")
        return Message(role, content, count_tokens(content))

    def _store(self, message: Message) -> None:
        """Add ``message`` at the end of the verbatim part."""
        self._messages.append(message)
        self.verbatim_tokens += message.tokens

    def _new_summary(self, folded: list[Message], existing: str | None) -> FoldResult | None:
        """What a fold of ``folded`` into ``existing`` stores (None: the fold is not made now); this base drops."""
        return DROPPED

    def _fold(self, n_messages: int) -> FoldEvent | None:
        """Fold the oldest ``n_messages`` verbatim messages (whole turns); None if the fold is not made now."""
        start, end = self.verbatim_start, self.verbatim_start + n_messages
        folded = self._messages[start:end]
        result = self._new_summary(folded, self.summary)
        if result is None:
            return None
        summary, tokens = self.summary, self.summary_tokens
        if result.summary is not None:  # a drop keeps them
            summary, tokens = result.summary, count_tokens(result.summary)
        event = FoldEvent.of(start // 2 + 1, folded, self.summary_tokens, tokens, result, self.max_summary_tokens)
        verbatim_tokens = self.verbatim_tokens - event.message_tokens
        self.verbatim_start, self.verbatim_tokens, self.summary, self.summary_tokens = end, verbatim_tokens, summary, \
            tokens
        self.fold_events.append(event)
        return event

    def replace_history(self, messages: Sequence[Message], verbatim_start: int, summary: str | None,
                        fold_events: Sequence[FoldEvent], defences: MemoryDefences | None) -> None:
        """Store a whole history at once (a new memory, a loaded state, an erasure, other defences)."""
        messages, events = list(messages), list(fold_events)
        summary_tokens = count_tokens(summary) if summary is not None else 0
        verbatim_tokens = sum(m.tokens for m in messages[verbatim_start:])
        self._messages, self.fold_events, self.verbatim_start, self._defences = messages, events, verbatim_start, \
            defences
        self.summary, self.summary_tokens, self.verbatim_tokens = summary, summary_tokens, verbatim_tokens

    def summary_for(self, messages: list[dict[str, str]], existing: str | None) -> FoldResult:
        """What a fold of ``messages`` into ``existing`` would store, computed without changing the memory."""
        return DROPPED

    def check_loaded(self) -> None:
        """Refuse a loaded state that breaks this kind's rules (``StateError`` naming the field)."""
        if self.summary is not None:
            raise StateError("summary", f"a {self.KIND.name} never holds a summary; this state has one")
