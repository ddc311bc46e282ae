"""Checks of settings and texts shared by the memory kinds, each raising an error that names what to fix."""
from __future__ import annotations

from helpers.base.errors import Explained
from helpers.base.files import lone_surrogate_at
from helpers.memory.types import SettingError


class UnstorableText(Explained, ValueError):
    """Text that cannot be stored as UTF-8 (a lone surrogate); ``what`` names it, ``position`` is the character."""

    def __init__(self, what: str, position: int, message: str) -> None:
        super().__init__(message)
        self.what, self.position = what, position


def check_count(name: str, value: object, minimum: int, why: str) -> int:
    """``value`` if it is a whole number of at least ``minimum``; else a ``SettingError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise SettingError(name, value, f"{name} must be a whole number, got {value!r}")
    if value < minimum:
        raise SettingError(name, value, f"{name} must be at least {minimum}, got {value}: {why}")
    return value


def check_text(name: str, value: object, limit: int | None = None, setting: str = "") -> str:
    """``value`` if it is text of at most ``limit`` characters (the limit named ``setting``) that can be stored as
    UTF-8; else an error naming ``name`` and the fix. The length is checked first, before anything reads the text."""
    if not isinstance(value, str):
        raise SettingError(name, value, f"{name} must be text, got {type(value).__name__}")
    if limit is not None and len(value) > limit:
        raise SettingError(setting, len(value), (
            f"{name} is {len(value):,} characters, more than the {limit:,} it may hold ({setting}); it was not "
            f"stored and nothing changed. Shorten it, or raise {setting} if texts this long are meant"))
    if not value.isascii() and (position := lone_surrogate_at(value)) is not None:
        raise UnstorableText(name, position, (
            f"{name} holds a lone surrogate at character {position} ({value[position]!r}): half of a character "
            "such as an emoji, as escaped JSON like \"\\ud83d\" gives. It cannot be saved, so it is refused "
            "and nothing was stored. Fix the text (e.g. text.encode('utf-16', 'surrogatepass').decode('utf-16') "
            "rejoins a split pair, text.encode('utf-8', 'replace').decode() drops the half) and add it again."))
    return value

