"""The stand-in's extractive summariser: fact sentences copied word for word, within the word limit."""
from __future__ import annotations

import re
from dataclasses import dataclass

from helpers.base.text import word_count
from helpers.model.offline.facts import fact_score, split_sentences
from helpers.model.offline.markers import SUMMARY_MARKER, is_stand_in_text, strip_marker

LABELS = {"user": "User", "assistant": "Assistant", "system": "System"}


@dataclass(frozen=True)
class _Sentence:
    label: str | None  # "User", "Assistant", or None (a summary sentence with no speaker)
    text: str
    score: int
    position: int


_LABELLED = re.compile(r"(?:^|(?<=\s))(User|Assistant|System):\s")


def summary_sentences(summary: str) -> list[tuple[str | None, str]]:
    """Sentences of an existing summary with their speaker labels ("User: ...", "Assistant: ...")."""
    summary = strip_marker(summary)
    pieces: list[tuple[str | None, str]] = []
    cuts = list(_LABELLED.finditer(summary))
    if not cuts or cuts[0].start() > 0:
        head = summary[:cuts[0].start()] if cuts else summary
        pieces.append((None, head))
    for index, cut in enumerate(cuts):
        end = cuts[index + 1].start() if index + 1 < len(cuts) else len(summary)
        pieces.append((cut.group(1), summary[cut.end():end]))
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
    ``word_limit`` words or one sentence is left; a drop never adds words, so the fewest are found by bisection.
    """
    order = sorted(range(len(candidates)), key=lambda i: (candidates[i].score, -candidates[i].position))
    rank = {index: step for step, index in enumerate(order)}  # the drop step at which each sentence goes

    def after(drops: int) -> list[_Sentence]:
        return [sentence for index, sentence in enumerate(candidates) if rank[index] >= drops]

    low, high = 0, max(len(candidates) - 1, 0)  # dropping ``high`` leaves one sentence: the loop's last stop
    while low < high:
        middle = (low + high) // 2
        if word_count(_render(after(middle))) <= word_limit:
            high = middle
        else:
            low = middle + 1
    return after(low)


def extractive_summary(existing_summary: str | None, messages: list[tuple[str, str]], *,
                       word_limit: int | None, rules_first: bool = False) -> str:
    """The fact sentences of the old summary and the new messages, copied with their speaker, within the word limit.

    The stand-in's own replies are skipped (they only quote the request). Over the limit the lowest-scoring sentence
    goes first, the newest of equals first, so older facts last longest; a stated rule ties with amounts unless the
    prompt names hard rules (``rules_first``). Marker and labels count as words; under 8 words cannot always be met.
    """
    candidates: list[_Sentence] = []
    seen: set[str] = set()

    def add(label: str | None, text: str, floor: int = 0) -> None:
        key = re.sub(r"\s+", " ", text.lower()).strip()
        score = max(fact_score(text, rules_first=rules_first), floor)
        if score and key not in seen:
            seen.add(key)
            candidates.append(_Sentence(label, text, score, len(candidates)))

    if existing_summary:
        for label, text in summary_sentences(existing_summary):
            add(label, text, floor=1)  # already chosen once: keep unless the limit needs the room
    for role, content in messages:
        if role == "assistant" and is_stand_in_text(content):
            continue
        for text in split_sentences(content):
            add(LABELS.get(role, role.title()), text)

    kept = list(candidates)
    if word_limit is not None:
        kept = _fewest_drops_within(candidates, word_limit)
        if kept and word_count(_render(kept)) > word_limit:  # one sentence alone is too long: cut it
            only = kept[0]
            room = max(1, word_limit - word_count(_render([_Sentence(only.label, "", 0, 0)])))
            kept = [_Sentence(only.label, " ".join(only.text.split()[:room]) + "…", only.score, 0)]
    if not kept:
        return f"{SUMMARY_MARKER} No facts stated yet."
    return _render(kept)
