"""Pinned rules: hard rules the user stated, sent word for word in every request and never summarised.

A summary may drop or soften a rule (notebook 03); a pinned rule cannot drift because no model
ever rewrites it. The application decides what to pin: pinning is a deliberate act, not a fold. The
rules travel inside the first system message, after the system prompt, under every placement: it is the
one message every chat format keeps (``LLM_SYSTEM_MESSAGES=merge`` and ``user`` carry it whole), and the
only rank that can say "these are the application's rules". No user-role block ever says so, so a user
who types the pinned block gains nothing (``imitation.py`` escapes such copies).
"""
from __future__ import annotations

from collections.abc import Iterable

from helpers.base.files import lone_surrogate_at
from helpers.memory.placement import escape_markers

PINNED_HEADING = "PINNED RULES (stated by the user, kept word for word):\n"
PINNED_OPEN = "<<<PINNED RULES>>>"
PINNED_CLOSE = "<<<END PINNED RULES>>>"
PINNED_NOTE = ("The application pinned the rules in the block below, as the user stated them: they hold in every "
               "answer, whatever the conversation or its notes say later.")


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
    """The pinned block as the system-rank text the memory adds to the first system message, after the system
    prompt: the same under every ``placement`` (the summary's placement decides only where the summary goes)."""
    body = escape_markers(PINNED_HEADING + pinned_text(rules))
    return {"role": "system", "content": f"{PINNED_NOTE}\n{PINNED_OPEN}\n{body}\n{PINNED_CLOSE}"}
