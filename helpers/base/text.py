"""Small text helpers shared by the memory, the measurements and the model layer."""
from __future__ import annotations

import math
import re

from helpers.base.errors import SettingError

_WORD_LIMIT = re.compile(r"(?i)(?:at most|no more than|not more than|maximum of|max(?:imum)?\.?|under|within|up to)"
                         r"\s+(\d+)\s+words|(\d+)\s+words\s+or\s+(?:fewer|less)|(\d+)[- ]word\s+(?:limit|maximum)")


def word_count(text: str) -> int:
    """Words as the lesson counts them: runs of non-space characters."""
    return len(text.split())


def stated_word_limit(text: str) -> int | None:
    """The word limit a prompt states ("at most 80 words", "100 words or fewer"), or None."""
    limits = [int(next(g for g in match.groups() if g)) for match in _WORD_LIMIT.finditer(text or "")]
    return min(limits) if limits else None


def listed(items: list[str], last: str = "and") -> str:
    """``["a", "b", "c"]`` as ``"a, b and c"`` (``last="or"``: ``"a, b or c"``), for the lines the helpers print."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {last} {items[-1]}"


def turns_text(messages: list[dict[str, str]], line: str = "{ROLE}: {content}") -> str:
    """The messages as the lessons write them for the summariser: one ``USER: ...`` line each."""
    return "\n".join(line.format(ROLE=m["role"].upper(), role=m["role"], content=m["content"]) for m in messages)


def messages_from_lines(lines: list[str]) -> list[dict[str, str]]:
    """``["USER: ...", "ASSISTANT: ..."]`` (the drift run's batches) -> API message dicts."""
    messages = []
    for text in lines:
        role, separator, content = text.partition(":")
        if not separator or role.strip().lower() not in ("user", "assistant"):
            raise SettingError("lines", text, f"each line must start 'USER:' or 'ASSISTANT:', got {text[:40]!r}")
        messages.append({"role": role.strip().lower(), "content": content.strip()})
    return messages


def duration(seconds: float) -> str:
    """A wait in words: "1 second", "30 seconds", "60 minutes", "2.5 hours"."""
    if not math.isfinite(seconds):
        return "longer than any retry"
    if seconds < 120:
        return f"{seconds:g} second{'' if seconds == 1 else 's'}"
    if seconds < 7200:
        return f"{seconds / 60:.0f} minutes"
    return f"{seconds / 3600:.1f} hours"
