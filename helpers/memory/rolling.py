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
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from helpers.base import signing
from helpers.base.redaction import redact_messages
from helpers.base.tokens import count_tokens
from helpers.memory import erasure, state
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
from helpers.memory.validation import check_count, check_text


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
        return state.state_of(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any], summarise: Summariser) -> RollingSummaryMemory:
        """Rebuild a memory saved by ``to_dict``, checking every field and how they fit (``helpers.memory.state``)."""
        return state.from_state(cls, data, summarise)

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
        return cls.from_dict(state.read_state_file(path), summarise)
