"""The stand-in's summariser: a summariser request read into its sections (both lessons' templates, and the
structured JSON input), and an extractive summary of fact sentences copied word for word within the word limit."""
from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass
from typing import Any

from helpers.base.text import stated_word_limit, word_count
from helpers.model.offline.facts import content_text, fact_score, split_sentences
from helpers.model.offline.markers import SUMMARY_MARKER, is_stand_in_text, strip_marker

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
    system, user = content_text(messages[0].get("content")), content_text(messages[-1].get("content"))
    limits = [limit for limit in (stated_word_limit(system), stated_word_limit(user)) if limit]
    headings = list(_HEADING.finditer(user))
    existing_parts: list[str] = []
    turns: list[tuple[str, str]] = []
    for heading, following in zip(headings, [*headings[1:], None]):
        body = user[heading.end():following.start() if following else len(user)]
        body = _INSTRUCTION.split(body, 1)[0].strip("\n")
        name, structured = heading.group(1), _json_section(body)  # structured input (notebook 06): JSON
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
    try:
        return json.loads(text) if text.startswith(("[", '"')) else None
    except ValueError:
        return None


def _parse_turn_lines(text: str) -> list[tuple[str, str]]:
    turns: list[tuple[str, str]] = []
    for line in text.splitlines():
        match = _ROLE_LINE.match(line)
        if match:
            turns.append((match.group(1).lower(), match.group(2)))
        elif turns:
            turns[-1] = (turns[-1][0], f"{turns[-1][1]}\n{line}")
        elif line.strip():
            turns.append(("user", line))
    return [(role, content.strip()) for role, content in turns]


@dataclass(frozen=True)
class _Sentence:
    label: str | None  # "User", "Assistant", or None (a summary sentence with no speaker)
    text: str
    score: int
    position: int


def summary_sentences(summary: str) -> list[tuple[str | None, str]]:
    """Sentences of an existing summary with their speaker labels ("User: ...", "Assistant: ...")."""
    parts = _LABELLED.split(strip_marker(summary))  # the text before any label, then label and text by turns
    pieces = [(None, parts[0]), *zip(parts[1::2], parts[2::2])]
    return [(label, sentence) for label, text in pieces for sentence in split_sentences(text)]


def _render(sentences: list[_Sentence]) -> str:
    parts: list[str] = [SUMMARY_MARKER]
    previous: str | None = "\0"
    for sentence in sentences:
        if sentence.label and sentence.label != previous:
            parts.append(f"{sentence.label}:")
        parts.append(sentence.text)
        previous = sentence.label
    return " ".join(parts)


def _fewest_drops_within(candidates: list[_Sentence], word_limit: int) -> list[_Sentence]:
    """The candidates left after dropping, lowest score first (newest of equals first), until the summary fits
    ``word_limit`` words or one sentence is left; a drop never adds words, so the fewest are found by bisection."""
    order = sorted(range(len(candidates)), key=lambda i: (candidates[i].score, -candidates[i].position))
    rank = {index: step for step, index in enumerate(order)}  # the drop step at which each sentence goes

    def after(drops: int) -> list[_Sentence]:
        return [sentence for index, sentence in enumerate(candidates) if rank[index] >= drops]

    # dropping all but one is the last stop, taken when no fewer drops fit
    drops = bisect.bisect_left(range(max(len(candidates) - 1, 0)), True,
                               key=lambda drops: word_count(_render(after(drops))) <= word_limit)
    return after(drops)


def extractive_summary(existing_summary: str | None, messages: list[tuple[str, str]], *,
                       word_limit: int | None, rules_first: bool = False) -> str:
    """The fact sentences of the old summary and the new messages (not the stand-in's own replies), with their
    speaker, within the word limit: the lowest score goes first, the newest of equals first, a rule ties with amounts
    unless the prompt names hard rules (``rules_first``). Marker and labels count as words."""
    candidates: list[_Sentence] = []
    seen: set[str] = set()

    def add(label: str | None, text: str, floor: int = 0) -> None:
        key = re.sub(r"\s+", " ", text.lower()).strip()
        score = max(fact_score(text, rules_first=rules_first), floor)
        if score and key not in seen:
            seen.add(key)
            candidates.append(_Sentence(label, text, score, len(candidates)))

    for label, text in summary_sentences(existing_summary or ""):
        add(label, text, floor=1)  # already chosen once: keep unless the limit needs the room
    for role, content in messages:
        if not (role == "assistant" and is_stand_in_text(content)):
            for text in split_sentences(content):
                add(role.title(), text)  # "User", "Assistant", "System"
    kept = candidates if word_limit is None else _fewest_drops_within(candidates, word_limit)
    if kept and word_limit is not None and word_count(_render(kept)) > word_limit:  # one sentence is too long: cut it
        only = kept[0]
        room = max(1, word_limit - word_count(_render([_Sentence(only.label, "", 0, 0)])))
        kept = [_Sentence(only.label, " ".join(only.text.split()[:room]) + "…", only.score, 0)]
    return _render(kept) if kept else f"{SUMMARY_MARKER} No facts stated yet."


def summary_reply(messages: list[dict[str, Any]]) -> str:
    """The stand-in's answer to a summariser request: the extractive summary of what it holds."""
    parsed = parse_summariser_request(messages)
    return extractive_summary(parsed.existing_summary, parsed.messages, word_limit=parsed.word_limit,
                              rules_first=parsed.names_hard_rules)
