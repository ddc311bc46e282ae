"""Reading a request: is it a summariser request, and what do its sections hold."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from helpers.base.text import stated_word_limit
from helpers.memory.pinned import PINNED_HEADING
from helpers.memory.registry import headings

# A section heading of the summariser's user message: "MESSAGES TO SUMMARISE:",
# "EXISTING SUMMARY (from previous turns):", "SUMMARY TO SHORTEN:" (two or more capitalised words).
_HEADING = re.compile(r"^([A-Z][A-Z'-]*(?: [A-Z][A-Z'-]*)+)(?: \([^)\n]*\))?:[ \t]*$", re.MULTILINE)
_ROLE_LINE = re.compile(r"^(USER|ASSISTANT|SYSTEM|User|Assistant|System):[ \t]?(.*)$")
_INSTRUCTION = re.compile(r"\n\s*\n(?=(?:Produce|Write|Shorten|Return|Summari[sz]e|Keep|Merge|Update|Condense)\b)")


def content_text(content: Any) -> str:
    """Text of a message's content (a string, or the SDK's list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def is_summariser_request(messages: list[dict[str, Any]]) -> bool:
    """A summariser request: a system prompt about summarising and a user message with sections."""
    if len(messages) < 2 or messages[0].get("role") != "system" or messages[-1].get("role") != "user":
        return False
    system = content_text(messages[0].get("content"))
    return bool(re.search(r"summari[sz]", system, re.IGNORECASE)) and bool(
        _HEADING.search(content_text(messages[-1].get("content"))))


@dataclass(frozen=True)
class SummariserInput:
    """What a summariser request holds: the existing summary, the messages to fold, the limit."""

    existing_summary: str | None
    messages: list[tuple[str, str]]  # (role, content)
    word_limit: int | None
    names_hard_rules: bool


def parse_summariser_request(messages: list[dict[str, Any]]) -> SummariserInput:
    """Split a summariser request into its sections (works with both lessons' templates)."""
    system = content_text(messages[0].get("content"))
    user = content_text(messages[-1].get("content"))
    limits = [limit for limit in (stated_word_limit(system), stated_word_limit(user)) if limit]
    headings = list(_HEADING.finditer(user))
    existing_parts: list[str] = []
    turns: list[tuple[str, str]] = []
    for index, heading in enumerate(headings):
        end = headings[index + 1].start() if index + 1 < len(headings) else len(user)
        body = user[heading.end():end]
        instruction = _INSTRUCTION.search(body)
        if instruction:
            body = body[:instruction.start()]
        body = body.strip("\n")
        name = heading.group(1)
        structured = _json_section(body)  # structured input (notebook 06): a JSON string or list
        if name.startswith("EXISTING") or "SHORTEN" in name or name.startswith("CURRENT SUMMARY"):
            existing_parts.append(structured.strip() if isinstance(structured, str) else body.strip())
        elif isinstance(structured, list):
            turns.extend((str(m.get("role", "user")), str(m.get("content", "")))
                         for m in structured if isinstance(m, dict))
        else:
            turns.extend(_parse_turn_lines(body))
    existing = "\n".join(part for part in existing_parts if part) or None
    return SummariserInput(existing, turns, min(limits) if limits else None,
                           bool(re.search(r"hard rules?", system, re.IGNORECASE)))


def _json_section(body: str) -> Any:
    """The section's body decoded, if it is a JSON string or list (structured input); else None."""
    text = body.strip()
    if not text.startswith(("[", '"')):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _parse_turn_lines(text: str) -> list[tuple[str, str]]:
    turns: list[tuple[str, str]] = []
    for line in text.splitlines():
        match = _ROLE_LINE.match(line)
        if match:
            turns.append((match.group(1).lower(), match.group(2)))
        elif turns:
            role, content = turns[-1]
            turns[-1] = (role, f"{content}\n{line}")
        elif line.strip():
            turns.append(("user", line))
    return [(role, content.strip()) for role, content in turns]


def _memory_headings() -> tuple[str, ...]:
    """The headings a memory message opens with: every kind's summary heading (registry) and the pinned rules'."""
    return (*headings(), PINNED_HEADING)


def merged_memory(text: str) -> str | None:
    """The memory part of a system prompt that a request adaptation merged into it (``LLM_SYSTEM_MESSAGES=merge``):
    the text from the first memory heading on, or None when there is none."""
    found = [text.find(heading) for heading in _memory_headings() if heading in text]
    return text[min(found):] if found else None


def drop_heading(text: str) -> str:
    """A memory message without the heading its memory kind gives it (``KIND.heading``, from the registry)."""
    for heading in _memory_headings():
        if text.startswith(heading):
            return text[len(heading):]
    return text
