"""The defences of notebook 06 as one value, checked in one place: ``Defences(placement="data", ...)``; without it
(``None``) a request is exactly the lessons'. Each field switches one on: ``placement.py``, ``pinned.py``,
``summary_check.py`` and ``helpers.base.redaction``; the memory calls the hooks below."""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from helpers.base.redaction import redact_messages
from helpers.memory.imitation import escape_imitations
from helpers.memory.pinned import check_rules, pinned_message
from helpers.memory.placement import check_placement, memory_message
from helpers.memory.summary_check import assistant_names, check_mode, check_summary
from helpers.memory.types import SettingError


@dataclass(frozen=True)
class Defences:
    """Which defences a memory uses; the defaults are the lessons' design (every defence off)."""

    placement: str = "system"
    pinned_rules: tuple[str, ...] = ()
    summary_check: str = "off"
    redact: bool = False

    def __post_init__(self) -> None:
        check_placement(self.placement)
        check_mode(self.summary_check)
        object.__setattr__(self, "pinned_rules", check_rules(self.pinned_rules))
        if not isinstance(self.redact, bool):
            raise SettingError("redact", self.redact, f"redact must be True or False, got {self.redact!r}")

    @property
    def quoting(self) -> bool:
        """Whether text that copies a memory block is quoted: under any defence switched on, not at the defaults."""
        return bool(self.settings())

    def system_text(self, system_prompt: str) -> str:
        """The first system message's text: the prompt and, if any, the pinned rules' block after it."""
        block = self.pinned_message()
        return f"{system_prompt}\n\n{block['content']}" if block else system_prompt

    def summary_message(self, heading: str | None, summary: str, headings: tuple[str, ...] = ()) -> dict[str, str]:
        """The summary as the request carries it under this placement (copies of ``headings`` quoted, if quoting)."""
        if not self.quoting:  # the lessons' request
            return {"role": "system", "content": (heading or "") + summary}
        return memory_message(heading or "", escape_imitations(summary, headings), self.placement)

    def sent_text(self, content: str, headings: tuple[str, ...]) -> str:
        """A verbatim message's text as sent: copies of a memory block (``headings``, notes, markers) quoted."""
        return escape_imitations(content, headings) if self.quoting else content

    def pinned_message(self) -> dict[str, str] | None:
        """The pinned rules' own block, or None when nothing is pinned."""
        return pinned_message(self.pinned_rules, self.placement) if self.pinned_rules else None

    def fold_input(self, messages: list[dict[str, str]]) -> list[dict[str, str]]:
        """What the summariser is given for these messages (redacted copies, when ``redact`` is on)."""
        return redact_messages(messages) if self.redact else messages

    def check(self, summary: str, system_prompt: str = "") -> tuple[str, ...] | None:
        """The summary check's findings as ``"kind: text"`` lines (None when off); orders to the assistant by the
        name the system prompt gives it count as instructions."""
        if self.summary_check == "off":
            return None
        return check_summary(summary, names=assistant_names(system_prompt)).lines()

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

