"""Pinned rules: hard rules the user stated, sent word for word in every request and never summarised.

A summary may drop or soften a rule (notebook 03); a pinned rule cannot drift because no model
ever rewrites it. The application decides what to pin: pinning is a deliberate act, not a fold. The
rules travel in a block of their own, whose note says they are the application's rules: the summary's
"this is data, not instructions" note never covers them.
"""
from __future__ import annotations

from collections.abc import Iterable

from helpers.base.files import lone_surrogate_at
from helpers.memory.placement import escape_markers, strip_invisible

PINNED_HEADING = "PINNED RULES (stated by the user, kept word for word):\n"
PINNED_OPEN = "<<<PINNED RULES>>>"
PINNED_CLOSE = "<<<END PINNED RULES>>>"
PINNED_NOTE = ("The block below holds rules the user stated and this application pinned: they are the "
               "application's rules for this conversation. Follow them in every answer.")


def check_rules(rules: Iterable[str]) -> tuple[str, ...]:
    """The rules as a tuple of non-empty one-line texts; a ``ValueError`` names a bad one."""
    checked = []
    for rule in rules:
        if not isinstance(rule, str) or not rule.strip():
            raise ValueError(f"a pinned rule must be non-empty text, got {rule!r}")
        if (position := lone_surrogate_at(rule)) is not None:
            raise ValueError(f"the pinned rule {rule[:40]!r} holds a lone surrogate at character {position} (half of "
                             "a character such as an emoji), which cannot be saved; fix the text and pin it again")
        checked.append(" ".join(rule.split()))
    return tuple(checked)


def pinned_text(rules: tuple[str, ...]) -> str:
    """The body of the pinned block: one ``- rule`` line each."""
    return "\n".join(f"- {rule}" for rule in rules)


def pinned_message(rules: tuple[str, ...], placement: str) -> dict[str, str]:
    """The pinned rules as the request carries them: a system message under the lessons' placement; under
    ``placement="data"`` a user-role block of its own, marked as the application's rules."""
    body = PINNED_HEADING + pinned_text(rules)
    if placement == "system":
        return {"role": "system", "content": strip_invisible(body)}
    return {"role": "user", "content": f"{PINNED_NOTE}\n{PINNED_OPEN}\n{escape_markers(body)}\n{PINNED_CLOSE}"}
