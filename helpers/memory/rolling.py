"""The part both memories share: the archive, the verbatim suffix, the summary and the fold.

Both keep recent messages word for word and fold older ones into a running summary written by a
``summarise(messages, existing_summary) -> str`` callable. They differ only in *when* they fold
(``SummaryMemory``: after N turns; ``SummaryBufferMemory``: before a token budget would overflow).

Bookkeeping is constant-time per message: each message is counted once, when it is added, and
the verbatim part is a suffix of the append-only archive, tracked by its start index and a
running token total.
"""
from __future__ import annotations

import contextlib
import dataclasses
import inspect
import json
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any, ClassVar

from helpers.base import signing
from helpers.base.files import lone_surrogate_at
from helpers.base.redaction import redact_messages
from helpers.base.tokens import count_tokens
from helpers.memory import erasure
from helpers.memory import pinned as pinned_rules_block
from helpers.memory.erasure import ErasureReport
from helpers.memory.placement import check_placement, memory_message
from helpers.memory.summary_check import check_mode, check_summary
from helpers.memory.types import (
    ROLES,
    CutText,
    FoldEvent,
    MemorySnapshot,
    Message,
    Summariser,
    SummariserError,
    SummaryRefused,
)

STATE_FORMAT_VERSION = 1


def check_count(name: str, value: object, minimum: int, why: str) -> int:
    """``value`` if it is a whole number of at least ``minimum``; else a ``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}: {why}")
    return value


def check_text(name: str, value: object) -> str:
    """``value`` if it is text that can be stored as UTF-8; else a ``ValueError`` naming ``name`` and the fix."""
    if not isinstance(value, str):
        raise ValueError(f"{name} must be text, got {type(value).__name__}")
    if value.isascii():  # the common case, and ASCII holds no surrogate: skip the UTF-8 trial encode
        return value
    position = lone_surrogate_at(value)
    if position is not None:
        raise ValueError(
            f"{name} holds a lone surrogate at character {position} ({value[position]!r}): half of a character "
            "such as an emoji, as escaped JSON like \"\\ud83d\" gives. It cannot be saved, so it is refused "
            "and nothing was stored. Fix the text (e.g. text.encode('utf-16', 'surrogatepass').decode('utf-16') "
            "rejoins a split pair, text.encode('utf-8', 'replace').decode() drops the half) and add it again.")
    return value


def _sentence(text: str) -> str:
    """``text`` ending with a full stop, so another sentence can follow it."""
    text = text.rstrip()
    return text if text.endswith((".", "!", "?")) else text + "."


class RollingSummaryMemory:
    """Archive, verbatim suffix, summary and the one fold both memory classes use."""

    summary_heading: ClassVar[str] = ""
    # The counters a subclass keeps: saved by ``to_dict`` and restored by ``transaction``.
    COUNTERS: ClassVar[tuple[str, ...]] = ("summary_count",)
    # The rest of the mutable state, restored by ``transaction`` (lists are truncated, not copied).
    _SCALARS: ClassVar[tuple[str, ...]] = ("_verbatim_start", "_verbatim_tokens", "_summary", "_summary_tokens",
                                           "_summary_block_tokens", "_pinned", "_pinned_tokens", "_fold_pending")
    # The defences (notebook 06), each off by default so the lessons' requests stay exact.
    DEFENCE_DEFAULTS: ClassVar[dict[str, Any]] = {"placement": "system", "pinned_rules": (), "summary_check": "off",
                                                  "redact": False}

    def __init__(self, system_prompt: str, summarise: Summariser, max_summary_tokens: int | None, *,
                 placement: str = "system", pinned_rules: tuple[str, ...] | list[str] = (),
                 summary_check: str = "off", redact: bool = False) -> None:
        if not isinstance(system_prompt, str):
            raise ValueError(f"system_prompt must be text, got {type(system_prompt).__name__}")
        if not callable(summarise):
            raise ValueError("summarise must be a callable (messages, existing_summary) -> str")
        if max_summary_tokens is not None:
            check_count("max_summary_tokens", max_summary_tokens, 1, "a summary needs room for at least one token")
        check_text("system_prompt", system_prompt)
        self.system_prompt = system_prompt
        self.summarise = summarise
        self.max_summary_tokens = max_summary_tokens
        self.placement = check_placement(placement)  # "system" (the lessons) or "data" (a user-role data block)
        self.summary_check = check_mode(summary_check)  # "off", "report" or "refuse"
        if not isinstance(redact, bool):
            raise ValueError(f"redact must be True or False, got {redact!r}")
        self.redact = redact  # redact personal identifiers in what the summariser is given
        self._pinned: tuple[str, ...] = ()
        self._pinned_tokens = 0
        self.system_prompt_tokens = count_tokens(system_prompt)
        self._heading_tokens = count_tokens(self.summary_heading)
        self._archive: list[Message] = []
        self._verbatim_start = 0
        self._verbatim_tokens = 0
        self._summary: str | None = None
        self._summary_tokens = 0
        self._summary_block_tokens = 0
        self.summary_count = 0
        self.fold_events: list[FoldEvent] = []
        self._fold_pending = False  # a fold failed and waits to be retried (the memory may hold more than usual)
        # The request as it stands: kept up to date on every add and fold, so building it costs
        # nothing per turn (``get_messages_for_api`` copies the list, not the messages).
        self._request: list[dict[str, str]] = [{"role": "system", "content": system_prompt}]
        if not isinstance(pinned_rules, (list, tuple)):  # a lone string would be pinned one character at a time
            raise ValueError(f"pinned_rules must be a list of rules (texts), got {type(pinned_rules).__name__} "
                             f"{pinned_rules!r:.60}; e.g. pinned_rules=['Never recommend crypto.']")
        if pinned_rules:
            self.pin(*pinned_rules)

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
        return self.system_prompt_tokens + self._pinned_tokens + self._summary_block_tokens + self._verbatim_tokens

    # ----- defences (notebook 06) ----------------------------------------------------------------
    @property
    def pinned_rules(self) -> tuple[str, ...]:
        """Rules sent word for word in every request, never summarised."""
        return self._pinned

    def pin(self, *rules: str) -> None:
        """Pin hard rules: each is sent verbatim in every request, right after the system prompt."""
        self._set_pinned(self._pinned + pinned_rules_block.check_rules(rules))

    def _set_pinned(self, rules: tuple[str, ...]) -> None:
        self._pinned = rules
        self._pinned_tokens = count_tokens(self._pinned_message()["content"]) if rules else 0
        self._rebuild_request()

    def _pinned_message(self) -> dict[str, str]:
        return memory_message(pinned_rules_block.PINNED_HEADING, pinned_rules_block.pinned_text(self._pinned),
                              self.placement)

    def _prefix(self) -> list[dict[str, str]]:
        """The request before the verbatim messages: system prompt, pinned rules, summary."""
        prefix = [{"role": "system", "content": self.system_prompt}]
        if self._pinned:
            prefix.append(self._pinned_message())
        if self._summary:
            prefix.append(memory_message(self.summary_heading, self._summary, self.placement))
        return prefix

    def defence_settings(self) -> dict[str, Any]:
        """The defences switched on (those left at their defaults are not listed)."""
        now = {"placement": self.placement, "pinned_rules": list(self._pinned), "summary_check": self.summary_check,
               "redact": self.redact}
        return {name: value for name, value in now.items() if value != self.DEFENCE_DEFAULTS[name]
                and not (name == "pinned_rules" and not value)}

    def forget(self, text: str) -> ErasureReport:
        """Erase every turn that mentions ``text``, remake the summary from what remains; see ``erasure``."""
        return erasure.forget(self, text)

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
        """The request: system prompt, pinned rules and summary if any (as system messages, the lessons'
        placement, or as data blocks with ``placement="data"``), then the verbatim messages.

        A new list each call; the message dicts in it are the memory's own, so copy one before changing it.
        """
        return list(self._request)

    def _rebuild_request(self) -> None:
        request = self._prefix()
        request.extend(m.to_api() for m in self._archive[self._verbatim_start:])
        self._request = request

    def snapshot(self) -> MemorySnapshot:
        """The numbers a turn line reads: sizes of the request's parts and the counters."""
        return MemorySnapshot(
            turn=self.turn_count, summary=self._summary, summary_tokens=self._summary_tokens,
            summary_block_tokens=self._summary_block_tokens, system_prompt_tokens=self.system_prompt_tokens,
            verbatim_tokens=self._verbatim_tokens, verbatim_messages=len(self._archive) - self._verbatim_start,
            request_tokens=self.request_tokens, summary_count=self.summary_count)

    # ----- adding messages ---------------------------------------------------------------------
    def _new_message(self, role: str, content: str) -> Message:
        if role not in ROLES:
            raise ValueError(f"role must be 'user' or 'assistant', got {role!r}; the system prompt is set once, in the constructor")
        check_text("the user message's content" if role == "user" else "the assistant message's content", content)
        expected = ROLES[len(self._archive) % 2]
        if role != expected:
            if expected == "user":
                raise ValueError("expected a user message: the last turn is complete, so a new turn starts with the user")
            raise ValueError("expected the assistant's reply: the last user message has no reply yet; add the reply first")
        return Message(role, content, count_tokens(content))

    def _append(self, message: Message) -> None:
        self._archive.append(message)
        self._verbatim_tokens += message.tokens
        self._request.append({"role": message.role, "content": message.content})

    def _block_tokens(self, summary: str, summary_tokens: int) -> int:
        """Tokens of heading + summary. A heading ending in ':\\n' is a token boundary for o200k_base,
        so the two counts add up, unless the summary starts with '/' (which joins the heading's last
        token); the test suite checks this against a full count. The data placement counts the whole block."""
        if self.placement != "system":
            return count_tokens(memory_message(self.summary_heading, summary, self.placement)["content"])
        if self.summary_heading.endswith(":\n") and not summary.startswith("/"):
            return self._heading_tokens + summary_tokens
        return count_tokens(self.summary_heading + summary)

    def _fold(self, n_messages: int) -> FoldEvent:
        """Fold the oldest ``n_messages`` verbatim messages into the summary with one summariser call.

        On failure nothing changes and ``SummariserError`` is raised.
        """
        start = self._verbatim_start
        old = self._archive[start:start + n_messages]
        to_fold = [m.to_api() for m in old]
        try:
            new_summary = self._call_summariser(redact_messages(to_fold) if self.redact else to_fold, self._summary)
        except SummariserError:
            self._fold_pending = True
            raise
        cut = getattr(new_summary, "cut", False)
        message_tokens = sum(m.tokens for m in old)
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
                    cut = getattr(shorter, "cut", False)
        new_summary = str(new_summary)  # stored as plain text; the cut is kept on the fold event
        findings = check_summary(new_summary) if self.summary_check != "off" else None
        if findings is not None and findings.flagged and self.summary_check == "refuse":
            self._fold_pending = True
            raise SummaryRefused(f"the summary check refused the new summary ({findings.describe()})")
        # Commit: nothing above changed the memory, so a failure before here lost nothing.
        old_summary_tokens = self._summary_tokens
        kept = self._request[len(self._request) - (len(self._archive) - start) + n_messages:]  # after the prefix
        self._summary = new_summary
        self._summary_tokens = new_tokens
        self._summary_block_tokens = self._block_tokens(new_summary, new_tokens)
        self._verbatim_start += n_messages
        self._verbatim_tokens -= message_tokens
        self.summary_count += 1
        self._fold_pending = False
        self._request = [*self._prefix(), *kept]
        event = FoldEvent(first_turn=start // 2 + 1, last_turn=(start + n_messages) // 2, messages_folded=n_messages,
                          message_tokens=message_tokens, old_summary_tokens=old_summary_tokens,
                          summary_tokens=new_tokens, condensed=condensed, over_cap=self.summary_over_cap,
                          cut=cut, check=tuple(f"{kind}: {text}" for kind, text in findings.findings) if findings else ())
        self.fold_events.append(event)
        return event

    def _call_summariser(self, messages: list[dict[str, str]], existing: str | None) -> str:
        what = "condensing the summary" if not messages else f"folding {len(messages)} messages"
        try:
            result = self.summarise(messages, existing)
        except Exception as error:
            raise SummariserError(_sentence(f"the summariser raised {type(error).__name__} while {what}: {error}")) from error
        if not isinstance(result, str):
            raise SummariserError(f"the summariser returned {type(result).__name__} ({str(result)[:60]!r}) while "
                                  f"{what}, not text; a summariser must return the summary as a str.")
        if not result.strip():
            raise SummariserError(f"the summariser returned empty text while {what}; an empty summary is never stored.")
        try:
            check_text("the summary", result)
        except ValueError as error:
            raise SummariserError(f"the summariser's text was refused while {what}: {error}") from error
        stripped = result.strip()
        return CutText(stripped) if getattr(result, "cut", False) else stripped

    @staticmethod
    def _kept_error(error: SummariserError, role: str) -> SummariserError:
        if isinstance(error, SummaryRefused):  # the summariser worked; what it wrote was refused
            return SummaryRefused(
                f"{_sentence(str(error))} Nothing was lost: the {role} message was kept verbatim and added to the "
                "archive, and the summary is unchanged. The fold is tried again on a later message and is refused "
                "again while the turns to fold hold that text: forget() it, or use summary_check='report' to keep "
                "the summary and see the findings on the fold line.")
        return SummariserError(
            f"{_sentence(str(error))} Nothing was lost: the {role} message was kept verbatim and added to "
            "the archive, the summary is unchanged, and the fold will be tried again on a later message. Fix the summariser (or switch to replay/offline mode) and go on."
        )

    # ----- transactions and persistence --------------------------------------------------------
    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Undo every change made inside the block if it raises: a failed model call changes nothing.

        The archive and the fold events only grow, so they are cut back to their old lengths; the
        scalars (``_SCALARS`` and ``COUNTERS``) are put back as they were.
        """
        scalars = {name: getattr(self, name) for name in self._SCALARS + self.COUNTERS}
        archive_length, events_length = len(self._archive), len(self.fold_events)
        try:
            yield
        except BaseException:
            del self._archive[archive_length:]
            del self.fold_events[events_length:]
            for name, value in scalars.items():
                setattr(self, name, value)
            self._rebuild_request()
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
            "counters": {name: getattr(self, name) for name in self.COUNTERS},
            "fold_events": [asdict(event) for event in self.fold_events],
            "fold_pending": self._fold_pending,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], summarise: Summariser) -> RollingSummaryMemory:
        """Rebuild a memory saved by ``to_dict``, checking every field and how they fit together.

        Anything wrong raises ``ValueError`` naming the field; token counts are checked against the text.
        """
        _check_header(data, cls.__name__)
        memory = cls._from_settings(data, summarise)
        memory._load_archive(_field(data, "archive", list))
        memory._load_verbatim_and_summary(data)
        memory._load_counters_and_events(data)
        memory._check_loaded()
        memory._rebuild_request()
        return memory

    @classmethod
    def _from_settings(cls, data: dict[str, Any], summarise: Summariser) -> RollingSummaryMemory:
        settings = _field(data, "settings", dict)
        system_prompt = _field(data, "system_prompt", str)
        try:
            return cls(system_prompt, summarise, **settings)
        except TypeError as error:  # an unknown or missing setting
            raise ValueError(f"settings: {error}; expected the keys {sorted(cls._setting_names())}") from None
        except ValueError as error:
            raise ValueError(f"settings: {error}") from None

    @classmethod
    def _setting_names(cls) -> list[str]:
        return [name for name in inspect.signature(cls.__init__).parameters if name not in ("self", "system_prompt",
                                                                                              "summarise")]

    def _load_archive(self, archive: list[Any]) -> None:
        for index, saved in enumerate(archive):
            where = f"archive[{index}]"
            if not isinstance(saved, dict) or set(saved) != {"role", "content", "tokens"}:
                raise ValueError(f"{where} must be an object with exactly role, content and tokens, got {saved!r:.80}")
            try:
                message = self._new_message(saved["role"], saved["content"])
            except ValueError as error:
                raise ValueError(f"{where}: {error}") from None
            if message.tokens != saved["tokens"] or isinstance(saved["tokens"], bool):
                raise ValueError(f"{where}.tokens: the message counts {message.tokens} tokens, not the "
                                 f"{saved['tokens']!r} saved; the file was edited or made with another tokenizer")
            self._archive.append(message)

    def _load_verbatim_and_summary(self, data: dict[str, Any]) -> None:
        start = _field(data, "verbatim_start", int)
        if not (0 <= start <= len(self._archive) and start % 2 == 0):
            raise ValueError(f"verbatim_start {start} must be an even index within the archive "
                             f"(0 to {len(self._archive)}): only whole turns are folded")
        summary = _field(data, "summary", (str, type(None)))
        if summary is not None and not summary.strip():
            raise ValueError("summary: an empty summary is never stored; use null for no summary")
        if (summary is None) != (start == 0):
            raise ValueError(f"summary and verbatim_start disagree: summary is {'null' if summary is None else 'set'} "
                             f"but verbatim_start is {start}; messages before verbatim_start are sent only through "
                             "the summary, so there is a summary exactly when verbatim_start > 0")
        if summary is not None:
            check_text("summary", summary)
            self._summary = summary
            self._summary_tokens = count_tokens(summary)
            self._summary_block_tokens = self._block_tokens(summary, self._summary_tokens)
        self._verbatim_start = start
        self._verbatim_tokens = sum(m.tokens for m in self._archive[start:])

    def _load_counters_and_events(self, data: dict[str, Any]) -> None:
        counters = _field(data, "counters", dict)
        if set(counters) != set(self.COUNTERS):
            raise ValueError(f"counters must hold exactly {', '.join(self.COUNTERS)}, got {sorted(counters)}")
        for name in self.COUNTERS:
            setattr(self, name, check_count(f"counters.{name}", counters[name], 0, "a count of folds"))
        self.fold_events = [_fold_event(index, saved) for index, saved in
                            enumerate(_field(data, "fold_events", list))]
        self._fold_pending = _field(data, "fold_pending", bool, default=False)
        if self.summary_count != len(self.fold_events):
            raise ValueError(f"counters.summary_count is {self.summary_count} but fold_events holds "
                             f"{len(self.fold_events)} folds; each fold adds one of each")
        self._check_fold_events()

    def _check_fold_events(self) -> None:
        """The fold events must tell the archive's story: consecutive whole turns, from turn 1 to verbatim_start."""
        next_turn, previous_summary_tokens = 1, 0
        for index, event in enumerate(self.fold_events):
            where = f"fold_events[{index}]"
            first, last = 2 * (event.first_turn - 1), 2 * event.last_turn
            if event.first_turn != next_turn or event.last_turn < event.first_turn:
                raise ValueError(f"{where} folds turns {event.first_turn} to {event.last_turn}, but the next fold "
                                 f"must start at turn {next_turn}")
            if event.messages_folded != last - first:
                raise ValueError(f"{where}.messages_folded is {event.messages_folded}, but turns {event.first_turn} "
                                 f"to {event.last_turn} are {last - first} messages")
            if last > len(self._archive) or event.message_tokens != sum(m.tokens for m in self._archive[first:last]):
                raise ValueError(f"{where}.message_tokens ({event.message_tokens}) does not match the archive's "
                                 f"turns {event.first_turn} to {event.last_turn}")
            if event.old_summary_tokens != previous_summary_tokens:
                raise ValueError(f"{where}.old_summary_tokens is {event.old_summary_tokens}, but the fold before "
                                 f"left a summary of {previous_summary_tokens} tokens")
            next_turn, previous_summary_tokens = event.last_turn + 1, event.summary_tokens
        if 2 * (next_turn - 1) != self._verbatim_start:
            raise ValueError(f"fold_events end at turn {next_turn - 1} but verbatim_start {self._verbatim_start} "
                             f"says turns 1 to {self._verbatim_start // 2} were folded")
        if self.fold_events and previous_summary_tokens != self._summary_tokens:
            raise ValueError(f"the last fold event made a summary of {previous_summary_tokens} tokens, but the "
                             f"summary counts {self._summary_tokens}")

    def _check_loaded(self) -> None:
        """Invariants of the subclass's policy (e.g. the fold trigger, the budget); ``ValueError`` if broken."""

    def save(self, path: str | Path) -> Path:
        """Write the state as UTF-8 JSON, atomically: if anything fails, the previous save is left whole."""
        # signed (notebook 06) when a signing key is configured; the state and its signature are written together
        return signing.write_signed(path, self._state_text().encode("utf-8"))

    def _state_text(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=1)

    @classmethod
    def load(cls, path: str | Path, summarise: Summariser) -> RollingSummaryMemory:
        """Read a state written by ``save``; a damaged or inconsistent file raises ``ValueError`` naming the field."""
        path = Path(path)
        if not path.is_file():  # said first: a missing file is not a missing signature
            raise FileNotFoundError(f"there is no saved memory state at {path}: memory.save(path) writes one")
        signing.check_file(path)  # refuses an edited signed file (notebook 06)
        return cls.from_dict(_read_state(path), summarise)


def _read_state(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} is not a saved memory state (not UTF-8 JSON: {error})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} is not a saved memory state: it holds a {type(data).__name__}, not an object")
    return data


def _check_header(data: Any, kind: str) -> None:
    if not isinstance(data, dict):
        raise ValueError(f"a saved state is an object (dict), got {type(data).__name__}")
    if data.get("kind") != kind or data.get("format") != STATE_FORMAT_VERSION or isinstance(data.get("format"), bool):
        raise ValueError(f"this state was saved by {data.get('kind')!r} (format {data.get('format')!r}); "
                         f"load it with that class: {kind}.from_dict expects format {STATE_FORMAT_VERSION}")


_MISSING = object()


def _field(data: dict[str, Any], name: str, kind: type | tuple[type, ...], default: Any = _MISSING) -> Any:
    """``data[name]`` if present and of type ``kind`` (a bool is never taken for an int); else ``ValueError``."""
    if name not in data:
        if default is not _MISSING:
            return default
        raise ValueError(f"the saved state has no {name!r} field")
    value = data[name]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = " or ".join("null" if k is type(None) else k.__name__ for k in kinds)
        raise ValueError(f"{name} must be {names}, got {type(value).__name__} {value!r:.60}")
    return value


def _fold_event(index: int, saved: Any) -> FoldEvent:
    where = f"fold_events[{index}]"
    if not isinstance(saved, dict):
        raise ValueError(f"{where} must be an object, got {type(saved).__name__}")
    fields = FoldEvent.__dataclass_fields__
    unknown = set(saved) - set(fields)
    missing = {name for name, f in fields.items() if f.default is dataclasses.MISSING} - set(saved)
    if unknown or missing:
        raise ValueError(f"{where}: unknown fields {sorted(unknown)}, missing fields {sorted(missing)}")
    for name, value in saved.items():
        if name == "check":  # what the summary check found (notebook 06): a list of texts
            if not isinstance(value, (list, tuple)) or not all(isinstance(item, str) for item in value):
                raise ValueError(f"{where}.check must be a list of texts, got {value!r:.60}")
        elif fields[name].type == "bool":
            if not isinstance(value, bool):
                raise ValueError(f"{where}.{name} must be true or false, got {value!r}")
        else:
            check_count(f"{where}.{name}", value, 1 if name in ("first_turn", "last_turn", "messages_folded") else 0,
                        "counts in a fold event are whole numbers")
    return FoldEvent(**{**saved, "check": tuple(saved.get("check", ()))})
