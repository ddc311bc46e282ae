"""Auditing a summary against the archive: what does it state that no user message said?

A summary is new text. Two kinds of statement in it can be checked mechanically against the
user's own messages: figures (amounts, percentages, ages, durations) and negations ("no debts").
A figure no user message holds is flagged, and so is a negation whose words no user message
uses; each flag says whether an assistant reply said it (advice turned into a "fact") or no
message at all (invented). This is a heuristic for a reader to follow up, not a verdict.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

UNITS = {"k": 1_000, "thousand": 1_000, "l": 100_000, "lakh": 100_000, "lakhs": 100_000, "lac": 100_000,
         "cr": 10_000_000, "crore": 10_000_000, "crores": 10_000_000}
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
                "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20}
_DASH = "-\u2010\u2011\u2012\u2013\u2014"
_NUM = r"\d[\d,]*(?:\.\d+)?"
# A figure: optional ₹, a number or a range ("15-20", "4 to 5"), an optional unit or %.
FIGURE = re.compile(
    rf"(?=[\d₹ri])(?P<currency>₹|rs\.?\s?|inr\s?)?(?P<low>{_NUM})(?:\s?(?:[{_DASH}]|to)\s?(?P<high>{_NUM}))?"
    rf"(?:\s?(?=[%pklct])(?P<unit>%|percent\b|k\b|l\b|lakhs?\b|lac\b|cr\b|crores?\b|thousand\b))?",
    re.IGNORECASE)
# Number words count only before a unit ("three months"), so "one paragraph" is not a figure.
_WORD_NUMBER = re.compile(r"\b(?=[otfsenw])(" + "|".join(NUMBER_WORDS) + r")\b(?=[\s-]+(?:month|year|week|day|lakh|crore))",
                          re.IGNORECASE)
# "no debts", "no other investments", "without a loan", "never invested".
NEGATION = re.compile(r"(?=[nwz])\b(?:no|never|without|zero|nil)\s+(?:(?:a|an|any|other|outstanding|existing)\s+)?"
                      r"(?P<what>[a-z][a-z-]+)", re.IGNORECASE)
_STOP = {"the", "a", "an", "to", "be", "is", "are", "and", "or", "of", "for", "in", "more", "longer"}


@dataclass(frozen=True)
class Claim:
    """A statement in the summary that no user message supports."""

    text: str  # the words in the summary
    kind: str  # "figure" or "negation"
    source: str  # "assistant reply" (FinCoach said it) or "no message"


@dataclass(frozen=True)
class Figure:
    """A figure as written (``₹15-20 k``), its plain numbers (15, 20) and its unit's scale (1000)."""

    text: str
    numbers: tuple[float, ...]
    scale: float

    @property
    def values(self) -> set[float]:
        """Every value the figure can stand for: the numbers as written and with the unit applied."""
        return set(self.numbers) | {n * self.scale for n in self.numbers}


def _figure(match: re.Match[str]) -> Figure:
    numbers = [match.group("low")] + ([match.group("high")] if match.group("high") else [])
    scale = UNITS.get((match.group("unit") or "").lower(), 1)
    return Figure(match.group(0).strip(), tuple(float(n.replace(",", "")) for n in numbers), scale)


# FIGURE without its groups, in two alternatives: glued to a letter, digit, comma or dot before it (inside a longer
# token: matched, so that the scan goes past it as FIGURE's does, and left out), or not (kept, in the one group)
_PLAIN_FIGURE = re.sub(r"\(\?P<\w+>", "(?:", FIGURE.pattern)
_FIGURE_TEXTS = re.compile(rf"(?<=[^\W_]|[,.])(?:{_PLAIN_FIGURE})|({_PLAIN_FIGURE})", re.IGNORECASE)


def figures(text: str, *, distinct: bool = False) -> list[Figure]:
    """The figures in ``text``: amounts in ₹ with k/L/lakh/crore, percentages, ages, durations; with
    ``distinct``, each figure as written only once, in the order first written (what an audit needs: the
    texts are gathered by the regex engine in one pass, and only the distinct ones are read in Python)."""
    found = []
    if distinct:
        for written in dict.fromkeys(_FIGURE_TEXTS.findall(text)):
            match = FIGURE.match(written) if written else None
            if match:
                found.append(_figure(match))
    else:
        for match in FIGURE.finditer(text):
            before = text[match.start() - 1] if match.start() else " "
            if before.isalnum() or before in ",.":
                continue  # inside a longer token
            found.append(_figure(match))
    for match in _WORD_NUMBER.finditer(text):
        found.append(Figure(match.group(0), (float(NUMBER_WORDS[match.group(0).lower()]),), 1))
    return found


def _values(texts: Sequence[str]) -> set[float]:
    return {value for text in texts for figure in figures(text) for value in figure.values}


def _negated(texts: Sequence[str]) -> set[str]:
    return {_stem(m.group("what")) for text in texts for m in NEGATION.finditer(text)}


def _stem(word: str) -> str:
    return re.sub(r"(?:ies|es|s)$", "", word.lower())


_RUN, _DIGIT = re.compile(r"[\d,.]*"), re.compile(r"\d")
_CUT_FIGURE = re.compile(rf"(?:₹|rs\.?\s?|inr\s?)?\d(?:[\d,.]*[\d,])?\Z", re.IGNORECASE)
_CURRENCY_ROOM = 5  # the longest currency written before a figure ("inr ", "rs. ") and one more


def cut_figure(summary: str) -> str | None:
    """The figure a summary ends inside when it was cut mid-number (``"... earns ₹1,20,"``), else None.

    A summary cut at ``max_tokens`` can stop inside a figure; the fragment is not a figure anyone wrote.
    Only the text's tail can hold it: the run of digits, commas and dots it ends with, and a currency before
    it. The pattern is matched there alone, so the time is that of the tail, not of the text times its digits.
    """
    text = summary.rstrip()
    start = len(text) - _RUN.match(text[::-1]).end()  # read backwards: the run is read once
    digit = _DIGIT.search(text, start)
    if digit is None:
        return None
    digit = digit.start()
    # the leftmost match starts at the run's first digit, or at a currency just before it: try those few
    # places (each match reads the run once), never the search that starts again at every digit
    for at in range(max(0, digit - _CURRENCY_ROOM), digit + 1):
        found = _CUT_FIGURE.match(text, at)
        if found:
            return found.group(0)
    return None


def audit_summary(summary: str, archive: Sequence[dict[str, str]]) -> list[Claim]:
    """Figures and negations in ``summary`` that no user message in ``archive`` states (a figure the summary
    was cut inside is not one: see ``cut_figure``)."""
    fragment = cut_figure(summary)
    if fragment:
        summary = summary.rstrip()[:-len(fragment)]
    users = [m["content"] for m in archive if m["role"] == "user"]
    replies = [m["content"] for m in archive if m["role"] == "assistant"]
    user_values, reply_values = _values(users), _values(replies)
    claims: list[Claim] = []
    for figure in figures(summary, distinct=True):
        if all(n in user_values or n * figure.scale in user_values for n in figure.numbers):
            continue
        source = "assistant reply" if figure.values & reply_values else "no message"
        claims.append(Claim(figure.text, "figure", source))
    user_negated, reply_negated = _negated(users), _negated(replies)
    negations: set[str] = set()
    for match in NEGATION.finditer(summary):
        if match.group(0) in negations:  # each distinct negation judged once (a long summary repeats them)
            continue
        negations.add(match.group(0))
        what = _stem(match.group("what"))
        if what in _STOP or what in user_negated:
            continue
        source = "assistant reply" if what in reply_negated else "no message"
        claims.append(Claim(match.group(0), "negation", source))
    seen: set[tuple[str, str]] = set()
    return [c for c in claims if not ((c.text, c.kind) in seen or seen.add((c.text, c.kind)))]
