"""The defences of notebook 06 as one value, ``Defences(placement="data", pinned_rules=[...], summary_check="report",
redact=True)``; each field switches one defence on. The memory calls only the hooks below and passes the registered
kinds' headings in as ``headings`` (this module never reads the registry)."""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from helpers.base.errors import SettingError
from helpers.base.files import lone_surrogate_at
from helpers.base.reading import escape_markers, read, spans_written
from helpers.base.redaction import redact_messages
from helpers.memory.blocks import (DATA_CLOSE, DATA_NOTE, DATA_OPEN, PINNED_CLOSE, PINNED_HEADING, PINNED_NOTE,
                                   PINNED_OPEN, copies)
from helpers.memory.summary_check import assistant_names, check_summary


def quote_copies(text: str, headings: Iterable[str] = ()) -> str:
    """``text`` with bracket runs spaced out and every copy of a memory block's heading, note or marker words (any
    case, spacing or look-alikes) rewritten as a visible quote (its reading, ``_`` for spaces)."""
    text = escape_markers(text)
    pieces, at = [], 0
    for start, end in spans_written(text, [m.span() for m in copies(tuple(headings)).finditer(read(text).lower())]):
        pieces += [text[at:start], "_".join(read(text[start:end]).split())]
        at = end
    return "".join(pieces) + text[at:]


@dataclass(frozen=True)
class Defences:
    """Which defences a memory uses; ``Defences()`` switches none on and sends the lessons' request."""

    placement: str = "system"
    pinned_rules: tuple[str, ...] = ()
    summary_check: str = "off"
    redact: bool = False

    def __post_init__(self) -> None:
        if self.placement not in ("system", "data"):
            raise SettingError("placement", self.placement, "placement must be 'system' (the lessons' second system "
                               f"message) or 'data' (a data block in a user-role message), got {self.placement!r}")
        if self.summary_check not in ("off", "report", "refuse"):
            raise SettingError("summary_check", self.summary_check, "summary_check must be 'off', 'report' "
                               "(findings on the fold event) or 'refuse' (a flagged summary is not stored; the "
                               f"messages stay verbatim), got {self.summary_check!r}")
        rules = self.pinned_rules
        if not isinstance(rules, (list, tuple)):  # a lone string would be pinned one character at a time
            raise SettingError("pinned_rules", rules, f"pinned_rules must be a list of rules (texts), got "
                               f"{type(rules).__name__} {rules!r:.60}; e.g. pinned_rules=['Never recommend crypto.']")
        for rule in rules:
            if not isinstance(rule, str) or not rule.strip():
                raise SettingError("pinned_rules", rules, f"a pinned rule must be non-empty text, got {rule!r}")
            if (position := lone_surrogate_at(rule)) is not None:
                raise SettingError("pinned_rules", rules, f"the pinned rule {rule[:40]!r} holds a lone surrogate at "
                                   f"character {position} (half of a character such as an emoji), which cannot be "
                                   "saved; fix the text and pin it again")
        object.__setattr__(self, "pinned_rules", tuple(" ".join(rule.split()) for rule in rules))
        if not isinstance(self.redact, bool):
            raise SettingError("redact", self.redact, f"redact must be True or False, got {self.redact!r}")

    @property
    def quoting(self) -> bool:
        """Whether text that copies a memory block is quoted: with any defence on, not at the defaults."""
        return self != Defences()

    def system_text(self, system_prompt: str) -> str:
        """The first system message: the system prompt, then the pinned rules, word for word and never summarised
        (notebook 03), in the one message every chat format keeps, whatever the placement."""
        if not self.pinned_rules:
            return system_prompt
        body = escape_markers(PINNED_HEADING + "\n".join(f"- {rule}" for rule in self.pinned_rules))
        return f"{system_prompt}\n\n{PINNED_NOTE}\n{PINNED_OPEN}\n{body}\n{PINNED_CLOSE}"

    def sent_text(self, content: str, headings: Iterable[str] = ()) -> str:
        """A verbatim message's text as sent (quoted where it copies a memory block, when ``quoting``)."""
        return quote_copies(content, headings) if self.quoting else content

    def summary_message(self, heading: str | None, summary: str, headings: Iterable[str] = ()) -> dict[str, str]:
        """The summary under the placement: the lessons' second system message, or a data block nothing can close."""
        body = (heading or "") + self.sent_text(summary, headings)
        if self.placement == "system":
            return {"role": "system", "content": body}
        return {"role": "user", "content": f"{DATA_NOTE}\n{DATA_OPEN}\n{escape_markers(body)}\n{DATA_CLOSE}"}

    def fold_input(self, messages: list[dict[str, str]]) -> list[dict[str, str]]:
        """What the summariser is given for these messages (redacted copies, when ``redact`` is on)."""
        return redact_messages(messages) if self.redact else messages

    def check(self, summary: str, system_prompt: str = "", headings: Iterable[str] = ()) -> tuple[str, ...] | None:
        """The check's findings as ``"kind: text"`` lines (None when off); orders to the assistant by its name too."""
        if self.summary_check == "off":
            return None
        return check_summary(summary, names=assistant_names(system_prompt), headings=headings).lines()

    def refuses(self, findings: tuple[str, ...] | None) -> bool:
        """True when the check is set to refuse and found something."""
        return self.summary_check == "refuse" and bool(findings)

    def settings(self) -> dict[str, Any]:
        """The defences switched on, as JSON-ready data (those left at their defaults are not listed)."""
        return {field.name: list(value) if isinstance(value, tuple) else value for field in dataclasses.fields(self)
                if (value := getattr(self, field.name)) != field.default}

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> Defences:
        """The defences ``settings()`` describes; an unknown name is a ``SettingError`` listing the known ones."""
        known = {f.name for f in dataclasses.fields(cls)}
        if unknown := sorted(set(settings) - known):
            raise SettingError(unknown[0], settings[unknown[0]], f"unknown defence {unknown[0]!r}; the defences are "
                               f"{', '.join(sorted(known))}")
        return cls(**settings)
