"""The defences of notebook 06 as one value, checked in one place: ``Defences(placement="data", ...)``.

Every memory kind takes ``defences=``; without it (``None``) the request is exactly the lessons'. Each
field switches one defence on:

* ``placement="data"``: the summary goes in a delimited data block in a user-role message, marked as data,
  with any run of angle brackets inside it spaced out (``placement.py``);
* ``pinned_rules=[...]``: rules sent word for word in every request, in the first system message after the
  system prompt, under every placement (``pinned.py``);
* ``summary_check="report"`` or ``"refuse"``: every new summary is checked for instructions, role markers,
  template tokens and forged headers, every registered kind's heading among them (``summary_check.py``);
  the findings go on the fold event, or the summary is refused and the messages stay verbatim;
* ``redact=True``: emails, phones, PAN, Aadhaar, card and account numbers are hidden from the summariser.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from helpers.base.redaction import redact_messages
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
        for name, check in (("placement", check_placement), ("summary_check", check_mode)):
            try:
                check(getattr(self, name))
            except ValueError as error:
                raise SettingError(name, getattr(self, name), str(error)) from None
        rules = self.pinned_rules
        if not isinstance(rules, (list, tuple)):  # a lone string would be pinned one character at a time
            raise SettingError("pinned_rules", rules, f"pinned_rules must be a list of rules (texts), got "
                               f"{type(rules).__name__} {rules!r:.60}; e.g. pinned_rules=['Never recommend crypto.']")
        try:
            object.__setattr__(self, "pinned_rules", check_rules(rules))
        except ValueError as error:
            raise SettingError("pinned_rules", rules, str(error)) from None
        if not isinstance(self.redact, bool):
            raise SettingError("redact", self.redact, f"redact must be True or False, got {self.redact!r}")

    # ----- the hooks a memory calls ------------------------------------------------------------
    def summary_message(self, heading: str | None, summary: str) -> dict[str, str]:
        """The summary as the request carries it under this placement."""
        return memory_message(heading or "", summary, self.placement)

    def pinned_message(self) -> dict[str, str] | None:
        """The pinned rules' own block, or None when nothing is pinned."""
        return pinned_message(self.pinned_rules, self.placement) if self.pinned_rules else None

    def fold_input(self, messages: list[dict[str, str]]) -> list[dict[str, str]]:
        """What the summariser is given for these messages (redacted copies, when ``redact`` is on)."""
        return redact_messages(messages) if self.redact else messages

    def check(self, summary: str, system_prompt: str = "") -> tuple[str, ...] | None:
        """The summary check's findings as ``"kind: text"`` lines (None when the check is off); orders given
        to the assistant by the name the system prompt gives it count as instructions."""
        if self.summary_check == "off":
            return None
        return check_summary(summary, names=assistant_names(system_prompt)).lines()

    def refuses(self, findings: tuple[str, ...] | None) -> bool:
        """True when the check is set to refuse and found something."""
        return self.summary_check == "refuse" and bool(findings)

    # ----- changing and saving -----------------------------------------------------------------
    def pin(self, *rules: str) -> Defences:
        """These defences with more rules pinned (a new value: a memory's defences are set whole)."""
        return dataclasses.replace(self, pinned_rules=(*self.pinned_rules, *rules))

    def settings(self) -> dict[str, Any]:
        """The defences switched on, as JSON-ready data (those left at their defaults are not listed)."""
        now = {"placement": self.placement, "pinned_rules": list(self.pinned_rules),
               "summary_check": self.summary_check, "redact": self.redact}
        default = Defences()
        return {name: value for name, value in now.items() if value not in (getattr(default, name), [])}

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> Defences:
        """The defences ``settings()`` describes; an unknown name is a ``SettingError`` listing the known ones."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(settings) - known)
        if unknown:
            raise SettingError(unknown[0], settings[unknown[0]], f"unknown defence {unknown[0]!r}; the defences are "
                               f"{', '.join(sorted(known))}")
        values = dict(settings)
        if isinstance(values.get("pinned_rules"), list):
            values["pinned_rules"] = tuple(values["pinned_rules"])
        return cls(**values)


LESSONS_DESIGN = Defences()  # every defence off: the request the lessons send
