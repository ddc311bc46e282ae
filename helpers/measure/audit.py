"""The figures (amounts, percentages, ages, durations) and negations ("no debts") a summary states that no user
message does, each said by an assistant reply (advice turned into a "fact") or by no message (invented): a heuristic.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

UNITS = {"k": 1_000, "thousand": 1_000, "l": 100_000, "lakh": 100_000, "lakhs": 100_000, "lac": 100_000,
         "cr": 10_000_000, "crore": 10_000_000, "crores": 10_000_000}
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
                "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20}
_DASH = "-\u2010\u2011\u2012\u2013\u2014"
_CURRENCY = r"₹|rs\.?\s?|inr\s?"
_NUM = r"\d[\d,]*(?:\.\d+)?"
_UNIT = "(?:%|" + "|".join(rf"{word}\b" for word in ("percent", *UNITS)) + ")"
# optional ₹, a number or a range ("15-20", "4 to 5"), an optional unit or %; number words only before a unit (below)
_FIGURE = (rf"(?:(?=\d)|(?P<currency>{_CURRENCY}))(?P<low>{_NUM})(?:\s?(?:[{_DASH}]|to)\s?(?P<high>{_NUM}))?"
           rf"(?:\s?(?P<unit>{_UNIT}))?")
FIGURE = re.compile(_FIGURE, re.IGNORECASE)
_TIME_WORDS = ("month", "year", "week", "day", "lakh", "crore")  # what a number word needs after it
_WORD_NUMBER = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r")\b(?=[\s-]+(?:" + "|".join(_TIME_WORDS) + "))",
                          re.IGNORECASE)
NEGATION = re.compile(r"\b(?:no|never|without|zero|nil)\s+(?:(?:a|an|any|other|outstanding|existing)\s+)?"
                      r"(?P<what>[a-z][a-z-]+)", re.IGNORECASE)
_NEGATION_TEXTS = re.compile(f"({NEGATION.pattern})", re.IGNORECASE)  # findall gives (text, what): no match objects
_STOP = {"the", "a", "an", "to", "be", "is", "are", "and", "or", "of", "for", "in", "more", "longer"}


@dataclass(frozen=True)
class Claim:
    """A statement in the summary that no user message supports: its words, ``"figure"`` or ``"negation"``, and
    ``"assistant reply"`` (FinCoach said it) or ``"no message"``."""

    text: str
    kind: str
    source: str


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

    @classmethod
    def read(cls, text: str) -> Figure:
        """The figure ``text`` writes (all of it a match of ``FIGURE``)."""
        match = FIGURE.match(text)
        numbers = [n.replace(",", "") for n in match.group("low", "high") if n]
        return cls(text.strip(), tuple(map(float, numbers)), UNITS.get((match.group("unit") or "").lower(), 1))


# a figure glued to a letter, digit, comma or dot before it (inside a longer token: matched and left out) or not (kept,
# in the one group)
_ANY_FIGURE = re.sub(r"\(\?P<\w+>", "(?:", _FIGURE)  # its groups left unnamed, findall gives the texts
_FIGURE_TEXTS = re.compile(rf"(?<![^\W_]|[,.])({_ANY_FIGURE})|{_ANY_FIGURE}", re.IGNORECASE)


def figures(text: str, *, distinct: bool = False) -> list[Figure]:
    """The figures in ``text``: amounts in ₹ with k/L/lakh/crore, percentages, ages, durations; with ``distinct``,
    each figure as written once, in the order first written."""
    written, words = [f for f in _FIGURE_TEXTS.findall(text) if f], _WORD_NUMBER.findall(text)
    read = {figure: Figure.read(figure) for figure in dict.fromkeys(written)}  # each text read once
    read |= {word: Figure(word, (float(NUMBER_WORDS[word.lower()]),), 1) for word in dict.fromkeys(words)}
    return list(read.values()) if distinct else [read[figure] for figure in written + words]


def _stem(word: str) -> str:
    return re.sub(r"(?:ies|es|s)$", "", word.lower())


def _said(texts: Iterable[str]) -> tuple[set[float], set[str]]:
    """Every value the figures in ``texts`` stand for, and the stems of what they negate."""
    texts = list(texts)
    return ({value for text in texts for figure in figures(text) for value in figure.values},
            {_stem(m.group("what")) for text in texts for m in NEGATION.finditer(text)})


_RUN, _DIGIT = re.compile(r"[\d,.]*"), re.compile(r"\d")
_CUT_FIGURE = re.compile(rf"(?:{_CURRENCY})?\d(?:[\d,.]*[\d,])?\Z", re.IGNORECASE)
_CURRENCY_ROOM = 5  # the longest currency written before a figure ("inr ", "rs. ") and one more


def cut_figure(summary: str) -> str | None:
    """The figure a summary cut at ``max_tokens`` ends inside (``"... earns ₹1,20,"``), else None: only the run of
    digits, commas and dots the text ends with, and a currency before it, are read."""
    text = summary.rstrip()
    digit = _DIGIT.search(text, len(text) - _RUN.match(text[::-1]).end())  # read backwards: the run is read once
    if digit is None:
        return None
    # the leftmost match starts at the run's first digit or at a currency just before it: only those places are tried
    starts = range(max(0, digit.start() - _CURRENCY_ROOM), digit.start() + 1)
    found = next(filter(None, (_CUT_FIGURE.match(text, at) for at in starts)), None)
    return found and found.group(0)


def audit_summary(summary: str, archive: Sequence[dict[str, str]]) -> list[Claim]:
    """Figures and negations in ``summary`` that no user message in ``archive`` states (a figure the summary
    was cut inside is not one: see ``cut_figure``)."""
    fragment = cut_figure(summary)
    if fragment:
        summary = summary.rstrip()[:-len(fragment)]
    (user_values, user_negated), (reply_values, reply_negated) = (
        _said(m["content"] for m in archive if m["role"] == role) for role in ("user", "assistant"))
    claims = [Claim(figure.text, "figure", "assistant reply" if figure.values & reply_values else "no message")
              for figure in figures(summary, distinct=True)
              if not all(n in user_values or n * figure.scale in user_values for n in figure.numbers)]
    # each text once, with what its last match negates (as a dict of the matches would), stemmed once
    negated = {text: _stem(what) for text, what in dict(_NEGATION_TEXTS.findall(summary)).items()}
    return claims + [Claim(text, "negation", "assistant reply" if what in reply_negated else "no message")
                     for text, what in negated.items() if what not in _STOP and what not in user_negated]
