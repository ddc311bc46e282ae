"""A summariser for simulations: it writes which turns it has folded, and nothing else."""
from __future__ import annotations

import re

from helpers.memory.types import SettingError


def turn_range_stub(messages: list[dict[str, str]], existing_summary: str | None) -> str:
    """Stand-in summariser for simulations: writes 'summary of turns 1 to k', nothing else."""
    folded_before = 0
    if existing_summary:
        match = re.fullmatch(r"summary of turns 1 to (\d+)", existing_summary)
        if not match:
            raise SettingError("existing_summary", existing_summary, "turn_range_stub cannot extend a summary it did "
                               f"not write: {existing_summary!r}")
        folded_before = int(match.group(1))
    folded_now = sum(1 for message in messages if message["role"] == "user")
    return f"summary of turns 1 to {folded_before + folded_now}"
