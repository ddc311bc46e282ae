"""Summary memory (lesson 3) and summary buffer memory (lesson 4), one implementation each.

Both keep recent messages word for word and fold older ones into a running summary written by a
``summarise(messages, existing_summary) -> str`` callable: an LLM call, the offline stand-in, or
``turn_range_stub`` in simulations. The schedule and budget analyses drive these same classes.

Bookkeeping is constant-time per message: each message is counted once, when it is added, and
the verbatim part is a suffix of the append-only archive, tracked by its start index and a
running token total.
"""
from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

from helpers.tokens import count_tokens

Summariser = Callable[[list[dict[str, str]], "str | None"], str]

ROLES = ("user", "assistant")
STATE_FORMAT_VERSION = 1


class SummariserError(RuntimeError):
    """The summariser raised or returned empty text; the memory kept every message and will retry."""


@dataclass(frozen=True)
class Message:
    """One chat message with its o200k_base token count, counted once when it was added."""

    role: str
    content: str
    tokens: int

    def to_api(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class FoldEvent:
    """What one summariser call did: which turns it folded and the tokens in and out."""

    first_turn: int
    last_turn: int
    messages_folded: int
    message_tokens: int
    old_summary_tokens: int
    summary_tokens: int
    condensed: bool = False  # the summary passed max_summary_tokens and was summarised again
    over_cap: bool = False  # still over max_summary_tokens after that (reported, never cut)

    @property
    def tokens_in(self) -> int:
        """Tokens handed to the summariser: the folded messages plus the old summary."""
        return self.message_tokens + self.old_summary_tokens


def turn_range_stub(messages: list[dict[str, str]], existing_summary: str | None) -> str:
    """Stand-in summariser for simulations: writes 'summary of turns 1 to k', nothing else."""
    folded_before = 0
    if existing_summary:
        match = re.fullmatch(r"summary of turns 1 to (\d+)", existing_summary)
        if not match:
            raise ValueError(f"turn_range_stub cannot extend a summary it did not write: {existing_summary!r}")
        folded_before = int(match.group(1))
    folded_now = sum(1 for message in messages if message["role"] == "user")
    return f"summary of turns 1 to {folded_before + folded_now}"


def _check_count(name: str, value: object, minimum: int, why: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}: {why}")
    return value


class _RollingSummaryMemory:
    """What both memories share: the archive, the verbatim suffix, the summary and the fold."""

    summary_heading: ClassVar[str] = ""

    def __init__(self, system_prompt: str, summarise: Summariser, max_summary_tokens: int | None) -> None:
        if not isinstance(system_prompt, str):
            raise ValueError(f"system_prompt must be text, got {type(system_prompt).__name__}")
        if not callable(summarise):
            raise ValueError("summarise must be a callable (messages, existing_summary) -> str")
        if max_summary_tokens is not None:
            _check_count("max_summary_tokens", max_summary_tokens, 1, "a summary needs room for at least one token")
        self.system_prompt = system_prompt
        self.summarise = summarise
        self.max_summary_tokens = max_summary_tokens
        self.system_prompt_tokens = count_tokens(system_prompt)
        self._archive: list[Message] = []
        self._verbatim_start = 0
        self._verbatim_tokens = 0
        self._summary: str | None = None
        self._summary_tokens = 0
        self._summary_block_tokens = 0
        self.summary_count = 0
        self.fold_events: list[FoldEvent] = []

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
    def summary_tokens(self) -> int:
        return self._summary_tokens

    @property
    def summary_block_tokens(self) -> int:
        """Tokens of the second system message: the heading plus the summary (0 without a summary)."""
        return self._summary_block_tokens

    @property
    def verbatim_tokens(self) -> int:
        return self._verbatim_tokens

    @property
    def request_tokens(self) -> int:
        """o200k_base tokens of the request's contents (the chat template adds a few per message)."""
        return self.system_prompt_tokens + self._summary_block_tokens + self._verbatim_tokens

    @property
    def turns_folded(self) -> int:
        """Whole turns now inside the summary (turns 1 to this number)."""
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

    def get_messages_for_api(self) -> list[dict[str, str]]:
        """The request: system prompt, the summary as a second system message if any, the verbatim messages."""
        messages = [{"role": "system", "content": self.system_prompt}]
        if self._summary:
            messages.append({"role": "system", "content": self.summary_heading + self._summary})
        return messages + self.verbatim

    # ----- adding messages ---------------------------------------------------------------------
    def _new_message(self, role: str, content: str) -> Message:
        if role not in ROLES:
            raise ValueError(f"role must be 'user' or 'assistant', got {role!r}; the system prompt is set once, in the constructor")
        if not isinstance(content, str):
            raise ValueError(f"content must be text, got {type(content).__name__}")
        expected = ROLES[len(self._archive) % 2]
        if role != expected:
            if expected == "user":
                raise ValueError("expected a user message: the last turn is complete, so a new turn starts with the user")
            raise ValueError("expected the assistant's reply: the last user message has no reply yet; add the reply first")
        return Message(role, content, count_tokens(content))

    def _append(self, message: Message) -> None:
        self._archive.append(message)
        self._verbatim_tokens += message.tokens

    def _fold(self, n_messages: int) -> FoldEvent:
        """Fold the oldest ``n_messages`` verbatim messages into the summary with one summariser call.

        On failure nothing changes and ``SummariserError`` is raised.
        """
        start = self._verbatim_start
        old = self._archive[start:start + n_messages]
        new_summary = self._call_summariser([m.to_api() for m in old], self._summary)
        event_fields = dict(
            first_turn=start // 2 + 1,
            last_turn=(start + n_messages) // 2,
            messages_folded=n_messages,
            message_tokens=sum(m.tokens for m in old),
            old_summary_tokens=self._summary_tokens,
        )
        new_tokens = count_tokens(new_summary)
        condensed = False
        if self.max_summary_tokens is not None and new_tokens > self.max_summary_tokens:
            try:
                shorter = self._call_summariser([], new_summary)
            except SummariserError:
                shorter = None  # the fold itself worked; the cap is reported as missed below
            if shorter is not None:
                shorter_tokens = count_tokens(shorter)
                if shorter_tokens < new_tokens:
                    new_summary, new_tokens, condensed = shorter, shorter_tokens, True
        # Commit: nothing above changed the memory, so a failure before here lost nothing.
        self._summary = new_summary
        self._summary_tokens = new_tokens
        self._summary_block_tokens = count_tokens(self.summary_heading + new_summary)
        self._verbatim_start += n_messages
        self._verbatim_tokens -= event_fields["message_tokens"]
        self.summary_count += 1
        event = FoldEvent(**event_fields, summary_tokens=new_tokens, condensed=condensed,
                          over_cap=self.summary_over_cap)
        self.fold_events.append(event)
        return event

    def _call_summariser(self, messages: list[dict[str, str]], existing: str | None) -> str:
        what = "condensing the summary" if not messages else f"folding {len(messages)} messages"
        try:
            result = self.summarise(messages, existing)
        except Exception as error:
            raise SummariserError(f"the summariser raised {type(error).__name__} while {what}: {error}") from error
        if not isinstance(result, str) or not result.strip():
            raise SummariserError(f"the summariser returned empty text while {what}; an empty summary is never stored")
        return result.strip()

    @staticmethod
    def _kept_error(error: SummariserError, role: str) -> SummariserError:
        return SummariserError(
            f"{error} Nothing was lost: the {role} message was kept verbatim, the summary and the archive "
            "are unchanged, and the fold will be tried again on a later message. Fix the summariser "
            "(or switch to replay/offline mode) and go on."
        )

    # ----- transactions and persistence --------------------------------------------------------
    def _state(self) -> tuple[Any, ...]:
        return (len(self._archive), self._verbatim_start, self._verbatim_tokens, self._summary,
                self._summary_tokens, self._summary_block_tokens, self.summary_count, len(self.fold_events),
                *self._extra_state())

    def _extra_state(self) -> tuple[Any, ...]:
        return ()

    def _restore_extra_state(self, extra: tuple[Any, ...]) -> None:
        pass

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Undo every change made inside the block if it raises: a failed model call changes nothing."""
        state = self._state()
        try:
            yield
        except BaseException:
            (archive_length, self._verbatim_start, self._verbatim_tokens, self._summary, self._summary_tokens,
             self._summary_block_tokens, self.summary_count, events_length, *extra) = state
            del self._archive[archive_length:]
            del self.fold_events[events_length:]
            self._restore_extra_state(tuple(extra))
            raise

    def settings(self) -> dict[str, Any]:
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        """Everything the memory holds, as JSON-ready data (the summariser itself is not saved)."""
        return {
            "format": STATE_FORMAT_VERSION,
            "kind": type(self).__name__,
            "settings": self.settings(),
            "system_prompt": self.system_prompt,
            "summary": self._summary,
            "archive": [{"role": m.role, "content": m.content, "tokens": m.tokens} for m in self._archive],
            "verbatim_start": self._verbatim_start,
            "counters": {"summary_count": self.summary_count, **dict(zip(self._extra_names(), self._extra_state()))},
            "fold_events": [asdict(event) for event in self.fold_events],
        }

    def _extra_names(self) -> tuple[str, ...]:
        return ()

    @classmethod
    def from_dict(cls, data: dict[str, Any], summarise: Summariser) -> _RollingSummaryMemory:
        """Rebuild a memory saved by ``to_dict``; token counts are checked against the text."""
        if data.get("kind") != cls.__name__ or data.get("format") != STATE_FORMAT_VERSION:
            raise ValueError(f"this state was saved by {data.get('kind')!r} (format {data.get('format')!r}); "
                             f"load it with that class: {cls.__name__}.from_dict expects format {STATE_FORMAT_VERSION}")
        memory = cls(data["system_prompt"], summarise, **data["settings"])
        for index, saved in enumerate(data["archive"]):
            message = memory._new_message(saved["role"], saved["content"])
            if message.tokens != saved["tokens"]:
                raise ValueError(f"message {index + 1} of the saved archive counts {message.tokens} tokens, "
                                 f"not the {saved['tokens']} saved; the file was edited or made with another tokenizer")
            memory._archive.append(message)
        start = data["verbatim_start"]
        if not (0 <= start <= len(memory._archive) and start % 2 == 0):
            raise ValueError(f"verbatim_start {start} must be an even index within the archive")
        memory._verbatim_start = start
        memory._verbatim_tokens = sum(m.tokens for m in memory._archive[start:])
        if data["summary"] is not None:
            memory._summary = data["summary"]
            memory._summary_tokens = count_tokens(data["summary"])
            memory._summary_block_tokens = count_tokens(memory.summary_heading + data["summary"])
        counters = dict(data["counters"])
        memory.summary_count = counters.pop("summary_count")
        memory._restore_extra_state(tuple(counters[name] for name in memory._extra_names()))
        memory.fold_events = [FoldEvent(**event) for event in data["fold_events"]]
        return memory

    def save(self, path: str | Path) -> Path:
        """Write the state as UTF-8 JSON and return the path."""
        path = Path(path)
        path.write_text(json.dumps(self.to_dict(), ensure_ascii=False, indent=1), encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | Path, summarise: Summariser) -> _RollingSummaryMemory:
        """Read a state written by ``save``."""
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")), summarise)


class SummaryMemory(_RollingSummaryMemory):
    """Lesson 3: after an assistant reply, once ``max_turns_before_summary`` turns are held verbatim,
    every turn but the last ``turns_to_keep_verbatim`` is folded into the summary."""

    summary_heading: ClassVar[str] = "CONVERSATION SUMMARY (earlier turns):\n"

    def __init__(self, system_prompt: str, summarise: Summariser, max_turns_before_summary: int = 4,
                 turns_to_keep_verbatim: int = 2, max_summary_tokens: int | None = None) -> None:
        _check_count("max_turns_before_summary", max_turns_before_summary, 1,
                     "the summary is triggered once this many turns are held verbatim")
        _check_count("turns_to_keep_verbatim", turns_to_keep_verbatim, 1,
                     "the request needs the latest turn word for word")
        if turns_to_keep_verbatim >= max_turns_before_summary:
            raise ValueError(
                f"turns_to_keep_verbatim ({turns_to_keep_verbatim}) must be smaller than max_turns_before_summary "
                f"({max_turns_before_summary}): otherwise a summary cycle has no turn to fold")
        super().__init__(system_prompt, summarise, max_summary_tokens)
        self.max_turns_before_summary = max_turns_before_summary
        self.turns_to_keep_verbatim = turns_to_keep_verbatim

    def settings(self) -> dict[str, Any]:
        return {"max_turns_before_summary": self.max_turns_before_summary,
                "turns_to_keep_verbatim": self.turns_to_keep_verbatim,
                "max_summary_tokens": self.max_summary_tokens}

    def add_message(self, role: str, content: str) -> None:
        """Store the message; after a reply, fold the oldest turns once the threshold is reached.

        Raises ``SummariserError`` if that fold fails: the message is kept and the fold is retried
        after the next reply.
        """
        message = self._new_message(role, content)
        self._append(message)
        verbatim_turns = (len(self._archive) - self._verbatim_start) // 2
        if role == "assistant" and verbatim_turns >= self.max_turns_before_summary:
            try:
                self._fold(2 * (verbatim_turns - self.turns_to_keep_verbatim))
            except SummariserError as error:
                raise self._kept_error(error, role) from error


class SummaryBufferMemory(_RollingSummaryMemory):
    """Lesson 4: the verbatim buffer is capped in tokens; before a message would pass the cap, the
    oldest whole turns (at least ``messages_to_compress_on_overflow`` messages, more if the new
    message still would not fit) are merged into the summary by one summariser call.

    A turn bigger than the whole budget is never cut or lost: everything older is folded, the turn
    stays verbatim, and ``over_budget`` reports it until the next overflow folds it.
    """

    summary_heading: ClassVar[str] = "CONVERSATION MEMORY (earlier turns, compressed):\n"

    def __init__(self, system_prompt: str, summarise: Summariser, max_buffer_tokens: int = 600,
                 messages_to_compress_on_overflow: int = 4, max_summary_tokens: int | None = None) -> None:
        _check_count("max_buffer_tokens", max_buffer_tokens, 1, "the buffer needs room for at least one token")
        _check_count("messages_to_compress_on_overflow", messages_to_compress_on_overflow, 2,
                     "only whole user/assistant pairs leave the buffer, so an overflow compresses at least 2")
        if messages_to_compress_on_overflow % 2:
            raise ValueError(
                f"messages_to_compress_on_overflow must be even, got {messages_to_compress_on_overflow}: "
                "only whole user/assistant pairs leave the buffer")
        super().__init__(system_prompt, summarise, max_summary_tokens)
        self.max_buffer_tokens = max_buffer_tokens
        self.messages_to_compress_on_overflow = messages_to_compress_on_overflow
        self.overflow_count = 0

    def settings(self) -> dict[str, Any]:
        return {"max_buffer_tokens": self.max_buffer_tokens,
                "messages_to_compress_on_overflow": self.messages_to_compress_on_overflow,
                "max_summary_tokens": self.max_summary_tokens}

    def _extra_state(self) -> tuple[Any, ...]:
        return (self.overflow_count,)

    def _extra_names(self) -> tuple[str, ...]:
        return ("overflow_count",)

    def _restore_extra_state(self, extra: tuple[Any, ...]) -> None:
        (self.overflow_count,) = extra

    @property
    def buffer(self) -> list[dict[str, str]]:
        """The recent messages, word for word (same as ``verbatim``)."""
        return self.verbatim

    @property
    def buffer_tokens(self) -> int:
        return self._verbatim_tokens

    @property
    def over_budget(self) -> bool:
        """True when the buffer is over its budget: a turn too big to fit alone, or a failed fold."""
        return self._verbatim_tokens > self.max_buffer_tokens

    def messages_to_fold(self, incoming_tokens: int) -> int:
        """How many of the oldest buffered messages an overflow folds before adding ``incoming_tokens``.

        0 means no overflow. Whole turns only; a reply's own question is never folded before it.
        """
        if self._verbatim_tokens + incoming_tokens <= self.max_buffer_tokens:
            return 0
        buffered = self._archive[self._verbatim_start:]
        whole = len(buffered) // 2 * 2
        n = min(self.messages_to_compress_on_overflow, whole)
        remaining = self._verbatim_tokens - sum(m.tokens for m in buffered[:n])
        while n < whole and remaining + incoming_tokens > self.max_buffer_tokens:
            remaining -= buffered[n].tokens + buffered[n + 1].tokens
            n += 2
        return n

    def add_message(self, role: str, content: str) -> None:
        """Fold the oldest turns first if this message would pass the budget, then store it.

        Raises ``SummariserError`` if that fold fails: the message is still stored (the buffer is
        over budget for now) and the fold is retried on the next message.
        """
        message = self._new_message(role, content)
        n = self.messages_to_fold(message.tokens)
        failure = None
        if n:
            try:
                self._fold(n)
                self.overflow_count += 1
            except SummariserError as error:
                failure = error
        self._append(message)
        if failure is not None:
            raise self._kept_error(failure, role) from failure
