"""The stand-in's summariser: a summariser request read into its sections (both lessons' templates, and the
structured JSON input), and an extractive summary of fact sentences copied word for word within the word limit."""
from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from helpers.base.text import stated_word_limit, word_count
from helpers.model.offline.facts import content_text, fact_score, split_sentences
from helpers.model.offline.markers import MARKER, SUMMARY_MARKER

# A section heading of the summariser's user message: "MESSAGES TO SUMMARISE:",
# "EXISTING SUMMARY (from previous turns):", "SUMMARY TO SHORTEN:" (two or more capitalised words).
_HEADING = re.compile(r"^([A-Z][A-Z'-]*(?: [A-Z][A-Z'-]*)+)(?: \([^)\n]*\))?:[ \t]*$", re.MULTILINE)
_ROLE_LINE = re.compile(r"^(USER|ASSISTANT|SYSTEM|User|Assistant|System):[ \t]?(.*)$")
_INSTRUCTION = re.compile(r"\n\s*\n(?=(?:Produce|Write|Shorten|Return|Summari[sz]e|Keep|Merge|Update|Condense)\b)")
_LABELLED = re.compile(r"(?:^|(?<=\s))(User|Assistant|System):\s")


def is_summariser_request(messages: list[dict[str, Any]]) -> bool:
    """A summariser request: a system prompt about summarising and a user message with sections."""
    if len(messages) < 2 or messages[0].get("role") != "system" or messages[-1].get("role") != "user":
        return False
    return bool(re.search(r"summari[sz]", content_text(messages[0].get("content")), re.IGNORECASE)) and bool(
        _HEADING.search(content_text(messages[-1].get("content"))))


class _Sentence(NamedTuple):
    label: str | None  # "User", "Assistant", or None (a summary sentence with no speaker)
    text: str
    score: int
    position: int


def summary_sentences(summary: str) -> list[tuple[str | None, str]]:
    """Sentences of an existing summary with their speaker labels ("User: ...", "Assistant: ...")."""
    text = (summary or "").strip()  # without the stand-in's marker, so markers never pile up in a summary
    text = next((text[len(marker):].strip() for marker in (SUMMARY_MARKER, MARKER) if text.startswith(marker)), text)
    parts = _LABELLED.split(text)  # the text before any label, then label and text by turns
    return [(label, sentence) for label, text in [(None, parts[0]), *zip(parts[1::2], parts[2::2])]
            for sentence in split_sentences(text)]


def _render(sentences: list[_Sentence]) -> str:
    parts, previous = [SUMMARY_MARKER], "\0"
    for sentence in sentences:
        if sentence.label and sentence.label != previous:
            parts.append(f"{sentence.label}:")
        parts.append(sentence.text)
        previous = sentence.label
    return " ".join(parts)


def extractive_summary(existing_summary: str | None, messages: list[tuple[str, str]], *,
                       word_limit: int | None, rules_first: bool = False) -> str:
    """The fact sentences of the old summary and the new messages (not the stand-in's own replies), with their
    speaker, within the word limit: the lowest score goes first, the newest of equals first, a rule ties with amounts
    unless the prompt names hard rules (``rules_first``). Marker and labels count as words."""
    kept: list[_Sentence] = []
    seen: set[str] = set()

    def add(label: str | None, text: str, floor: int = 0) -> None:
        key, score = re.sub(r"\s+", " ", text.lower()).strip(), max(fact_score(text, rules_first=rules_first), floor)
        if score and key not in seen:
            seen.add(key)
            kept.append(_Sentence(label, text, score, len(kept)))

    for label, text in summary_sentences(existing_summary or ""):
        add(label, text, floor=1)  # already chosen once: keep unless the limit needs the room
    for role, content in messages:
        if not (role == "assistant" and content.lstrip().startswith((MARKER, SUMMARY_MARKER))):  # its own words
            for text in split_sentences(content):
                add(role.title(), text)  # "User", "Assistant", "System"
    while word_limit is not None and len(kept) > 1 and word_count(_render(kept)) > word_limit:
        kept.remove(min(kept, key=lambda s: (s.score, -s.position)))
    if kept and word_limit is not None and word_count(_render(kept)) > word_limit:  # one sentence is too long: cut it
        room = max(1, word_limit - word_count(_render([kept[0]._replace(text="")])))
        kept = [kept[0]._replace(text=" ".join(kept[0].text.split()[:room]) + "…")]
    return _render(kept) if kept else f"{SUMMARY_MARKER} No facts stated yet."


def summary_reply(messages: list[dict[str, Any]]) -> str:
    """The stand-in's answer to a summariser request (both lessons' templates, and the structured JSON input): the
    extractive summary of what its sections hold, within the word limit either message states."""
    system, user = content_text(messages[0].get("content")), content_text(messages[-1].get("content"))
    limits = [limit for limit in (stated_word_limit(system), stated_word_limit(user)) if limit is not None]
    headings = list(_HEADING.finditer(user))
    existing: list[str] = []
    turns: list[tuple[str, str]] = []
    for heading, following in zip(headings, [*headings[1:], None]):
        body = _INSTRUCTION.split(user[heading.end():following.start() if following else len(user)], 1)[0].strip("\n")
        try:  # structured input (notebook 06): a JSON string or list
            structured = json.loads(body.strip()) if body.strip().startswith(("[", '"')) else None
        except ValueError:
            structured = None
        name = heading.group(1)
        if name.startswith("EXISTING") or "SHORTEN" in name or name.startswith("CURRENT SUMMARY"):
            existing.append(structured.strip() if isinstance(structured, str) else body.strip())
        elif isinstance(structured, list):
            turns += [(str(m.get("role", "user")), str(m.get("content", ""))) for m in structured
                      if isinstance(m, dict)]
        else:
            lines: list[tuple[str, str]] = []
            for line in body.splitlines():
                if match := _ROLE_LINE.match(line):
                    lines.append((match.group(1).lower(), match.group(2)))
                elif lines:
                    lines[-1] = (lines[-1][0], f"{lines[-1][1]}\n{line}")
                elif line.strip():
                    lines.append(("user", line))
            turns += [(role, content.strip()) for role, content in lines]
    return extractive_summary("\n".join(part for part in existing if part) or None, turns,
                              word_limit=min(limits) if limits else None,
                              rules_first=bool(re.search(r"hard rules?", system, re.IGNORECASE)))
