"""Checks of settings and texts shared by the memory classes, each raising a ``ValueError`` that names what to fix."""
from __future__ import annotations

from helpers.base.files import lone_surrogate_at


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
