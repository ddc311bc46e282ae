"""A chat request as the model receives it, message by message: role, size and text (a memory's or a
summariser's)."""
from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence

from helpers.base.tokens import count_tokens


def request_text(messages: Sequence[Mapping[str, str]], *, known: Mapping[str, str] | None = None,
                 width: int = 100, first_line_over: int | None = None) -> str:
    """One block per message: ``[n] role (tokens)`` then its text, indented and wrapped. ``known`` maps a text
    already shown (the system prompt) to a label printed instead; a message of more than ``first_line_over``
    tokens is shown by its first line and "[...]"."""
    known = known or {}
    blocks = []
    for number, message in enumerate(messages, start=1):
        content = message["content"]
        tokens = count_tokens(content)
        head = f"[{number}] {message['role']} ({tokens} tokens)"
        if content in known:
            blocks.append(f"{head}: {known[content]}")
            continue
        if first_line_over is not None and tokens > first_line_over:
            first = content.strip().split("\n", 1)[0]
            content = first if first == content.strip() else f"{first} [...]"
        lines = []
        for paragraph in content.split("\n"):
            wrapped = textwrap.wrap(paragraph, width - 4, break_long_words=False, break_on_hyphens=False)
            lines.extend(wrapped or [""])
        blocks.append(head + "\n" + "\n".join("    " + line if line else "" for line in lines))
    return "\n".join(blocks)
