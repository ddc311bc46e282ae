"""A summariser for simulations: it writes which turns it has folded, and nothing else."""
from __future__ import annotations

from helpers.memory.types import SettingError

PREFIX = "summary of turns 1 to "


def turn_range_stub(messages: list[dict[str, str]], existing_summary: str | None) -> str:
    """Stand-in summariser for simulations: writes 'summary of turns 1 to k', nothing else."""
    folded_before = 0
    if existing_summary:
        number = existing_summary.removeprefix(PREFIX) if existing_summary.startswith(PREFIX) else ""
        if not number.isdecimal():
            raise SettingError("existing_summary", existing_summary, "turn_range_stub cannot extend a summary it did "
                               f"not write: {existing_summary!r}")
        folded_before = int(number)
    return f"{PREFIX}{folded_before + sum(m['role'] == 'user' for m in messages)}"
