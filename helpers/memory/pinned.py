"""Pinned rules: hard rules the user stated, sent word for word in every request and never summarised.

A summary may drop or soften a rule (notebook 03); a pinned rule cannot drift because no model
ever rewrites it. The application decides what to pin: pinning is a deliberate act, not a fold.
"""
from __future__ import annotations

from collections.abc import Iterable

from helpers.base.files import lone_surrogate_at

PINNED_HEADING = "PINNED RULES (stated by the user, kept word for word):\n"


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
