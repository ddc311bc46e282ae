"""Auditing a summary against the archive: the figures (amounts, percentages, ages, durations) and negations
("no debts") it states that no user message does, each said by an assistant reply (advice turned into a "fact")
or by no message (invented). A heuristic for a reader to follow up, not a verdict.
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
_WORD_NUMBER = re.compile(r"\b(?=[otfsenw])(" + "|".join(NUMBER_WORDS) + r")\b"
                          r"(?=[\s-]+(?:month|year|week|day|lakh|crore))", re.IGNORECASE)
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


# FIGURE without its groups, glued to a letter, digit, comma or dot before it (inside a longer token: matched and left
# out) or not (kept, in the one group): the regex engine gathers the texts, Python reads each distinct one once
_PLAIN_FIGURE = re.sub(r"\(\?P<\w+>", "(?:", FIGURE.pattern)
_FIGURE_TEXTS = re.compile(rf"(?<=[^\W_]|[,.])(?:{_PLAIN_FIGURE})|({_PLAIN_FIGURE})", re.IGNORECASE)


def figures(text: str, *, distinct: bool = False) -> list[Figure]:
    """The figures in ``text``: amounts in ₹ with k/L/lakh/crore, percentages, ages, durations; with ``distinct``,
    each figure as written once, in the order first written."""
    written = _FIGURE_TEXTS.findall(text)
    read = {figure: _figure(FIGURE.match(figure)) for figure in dict.fromkeys(written) if figure}  # each text once
    found = list(read.values()) if distinct else [read[figure] for figure in written if figure]
    words = _WORD_NUMBER.findall(text)
    return found + [Figure(word, (float(NUMBER_WORDS[word.lower()]),), 1)
                    for word in (dict.fromkeys(words) if distinct else words)]


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
    """The figure a summary cut at ``max_tokens`` ends inside (``"... earns ₹1,20,"``), else None: only the run of
    digits, commas and dots the text ends with, and a currency before it, are read."""
    text = summary.rstrip()
    start = len(text) - _RUN.match(text[::-1]).end()  # read backwards: the run is read once
    digit = _DIGIT.search(text, start)
    if digit is None:
        return None
    digit = digit.start()
    # the leftmost match starts at the run's first digit or at a currency just before it: only those places are tried
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
        what = _stem(match.group("what"))
        if match.group(0) in negations or what in _STOP or what in user_negated:
            continue
        negations.add(match.group(0))
        claims.append(Claim(match.group(0), "negation", "assistant reply" if what in reply_negated else "no message"))
    return claims
