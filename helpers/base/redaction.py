"""Redaction of common personal identifiers (email, phone, PAN, Aadhaar, card and account numbers)
before text reaches a summariser, so a summary never stores them.

Patterns catch the usual written forms only; names, addresses and identifiers written in words
pass through. Amounts such as "Rs 1,20,000" are not identifiers and are kept.
"""
from __future__ import annotations

import re

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("EMAIL", re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b")),
    ("PAN", re.compile(r"\b[A-Z]{5}[0-9]{4}[A-Z]\b", re.IGNORECASE)),  # people type it in lower case too
    ("CARD", re.compile(r"\b(?:[0-9]{4}[ -]?){3}[0-9]{1,7}\b")),
    ("ACCOUNT", re.compile(r"(?i)\b(?:account|a/c|acct)(?: number| no\.?)?[: ]*[0-9]{9,18}\b")),
    ("AADHAAR", re.compile(r"\b[2-9][0-9]{3}[ -]?[0-9]{4}[ -]?[0-9]{4}\b")),
    ("PHONE", re.compile(r"(?<![\w,])(?:\+91[ -]?|0)?[6-9][0-9]{4}[ -]?[0-9]{5}\b|\+[1-9][0-9]{0,2}[ -]?(?:[0-9][ -]?){6,12}[0-9]\b")),
)


def redact(text: str) -> str:
    """``text`` with each identifier replaced by ``[EMAIL]``, ``[PHONE]``, ``[PAN]`` and so on."""
    for label, pattern in _PATTERNS:
        text = pattern.sub(f"[{label}]", text)
    return text


def redact_messages(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """Copies of the messages with their contents redacted (the originals are not changed)."""
    return [{**message, "content": redact(message["content"])} for message in messages]
