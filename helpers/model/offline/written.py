"""Replies written for this project to the course's own conversations, read once from ``data/offline_replies/``
(each file ``{"source": "...", "replies": [{"user": "...", "reply": "..."}]}``), matched by the user message
after whitespace normalisation.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from helpers.base.errors import Explained
from helpers.base.paths import DATA_DIR

REPLIES_DIR = DATA_DIR / "offline_replies"


class RepliesFileError(Explained, ValueError):
    """A file of ``data/offline_replies/`` that cannot be read as written replies."""


def normalised(text: str) -> str:
    """The text with every run of whitespace made one space and the ends trimmed: the key replies match by."""
    return " ".join((text or "").split())


def _entries(path: Path) -> list[tuple[str, str]]:
    """The (user, reply) pairs of one replies file, checked for the file format."""
    where = f"data/offline_replies/{path.name}"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise RepliesFileError(f"{where} is not readable JSON ({error}); fix or remove the file.") from None
    replies = data.get("replies") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not isinstance(data.get("source"), str) or not isinstance(replies, list):
        raise RepliesFileError(f'{where} must be {{"source": "...", "replies": [{{"user": "...", "reply": "..."}}]}}.')
    pairs = []
    for number, entry in enumerate(replies, 1):
        if not (isinstance(entry, dict) and isinstance(entry.get("user"), str) and isinstance(entry.get("reply"), str)
                and normalised(entry["user"]) and entry["reply"].strip()):
            raise RepliesFileError(f"{where}, reply {number}: needs a non-empty 'user' and 'reply' text.")
        pairs.append((normalised(entry["user"]), entry["reply"].strip()))
    return pairs


@lru_cache(maxsize=None)
def _written(folder: Path) -> dict[str, str]:
    table: dict[str, tuple[str, str]] = {}  # normalised user text -> (reply, file it came from)
    for path in sorted(folder.glob("*.json")):
        for user, reply in _entries(path):
            if user in table and table[user][0] != reply:
                raise RepliesFileError(
                    f"data/offline_replies/{path.name} and {table[user][1]} give different replies to the user "
                    f"message {user[:60]!r}; keep one of them, so the stand-in stays deterministic.")
            table.setdefault(user, (reply, f"data/offline_replies/{path.name}"))
    return {user: reply for user, (reply, _) in table.items()}


def written_reply(user_message: str, folder: Path | None = None) -> str | None:
    """The reply written for this exact user message (after whitespace normalisation), or None."""
    return _written(Path(folder or REPLIES_DIR)).get(normalised(user_message))
