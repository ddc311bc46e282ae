"""The one reading of a text that every defence compares with (placeholder: the current readings, gathered here
until the defences are rewritten around it)."""
from __future__ import annotations

import unicodedata

from helpers.memory.placement import readable_form, strip_invisible


def read(text: str) -> str:
    """``text`` as a reader sees it (look-alikes, width, invisible characters, marks, line breaks)."""
    return readable_form(text)


def _normal(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", strip_invisible(text)).casefold().split())


def mentions(content: str, text: str) -> bool:
    """True if ``content`` holds ``text``, whatever the case, spacing, full-width forms or invisible characters."""
    return _normal(text) in _normal(content)
