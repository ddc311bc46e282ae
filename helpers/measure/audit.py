"""The figures and negations ("no debts") a summary states that no user message does, each said by an assistant reply
(advice turned into a "fact") or by no message (invented): a heuristic."""
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
_UNIT = "(?:%|" + "|".join(rf"{word}\b" for word in ("percent", *UNITS)) + ")"
# optional ₹, a number or a range ("15-20", "4 to 5"), an optional unit or %; number words only before a unit (below)
FIGURE = re.compile(rf"(?:₹|rs\.?\s?|inr\s?)?(?P<low>{_NUM})(?:\s?(?:[{_DASH}]|to)\s?(?P<high>{_NUM}))?"
                    rf"(?:\s?(?P<unit>{_UNIT}))?", re.IGNORECASE)
_TIME_WORDS = ("month", "year", "week", "day", "lakh", "crore")  # what a number word needs after it
_WORD_NUMBER = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r")\b(?=[\s-]+(?:" + "|".join(_TIME_WORDS) + "))",
                          re.IGNORECASE)
NEGATION = re.compile(r"\b(?:no|never|without|zero|nil)\s+(?:(?:a|an|any|other|outstanding|existing)\s+)?"
                      r"(?P<what>[a-z][a-z-]+)", re.IGNORECASE)
_STOP = {"the", "a", "an", "to", "be", "is", "are", "and", "or", "of", "for", "in", "more", "longer"}
_GLUED = re.compile(r"(?<=[^\W_]|[,.])")  # a figure right after a letter, digit, comma or dot is inside a longer token


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


def figures(text: str) -> list[Figure]:
    """The figures in ``text``: amounts in ₹ with k/L/lakh/crore, percentages, ages, durations."""
    found = [Figure(m.group(), tuple(float(n.replace(",", "")) for n in m.group("low", "high") if n),
                    UNITS.get((m.group("unit") or "").lower(), 1))
             for m in FIGURE.finditer(text) if not _GLUED.match(text, m.start())]
    return found + [Figure(word, (float(NUMBER_WORDS[word.lower()]),), 1) for word in _WORD_NUMBER.findall(text)]


def _stem(word: str) -> str:
    return re.sub(r"(?:ies|es|s)$", "", word.lower())


def _said(texts: list[str]) -> tuple[set[float], set[str]]:
    """Every value the figures in ``texts`` stand for, and the stems of what they negate."""
    return ({value for text in texts for figure in figures(text) for value in figure.values},
            {_stem(m.group("what")) for text in texts for m in NEGATION.finditer(text)})


# a figure the text ends with, written backwards (its last digit or comma, then digits, commas and dots, its first
# digit, a currency): matched at the start of the reversed text, so it is tried at one place only
_CUT_BACKWARDS = re.compile(r"(?:[\d,][\d,.]*)?\d(?:₹|\s?\.?sr|\s?rni)?", re.IGNORECASE)


def cut_figure(summary: str) -> str | None:
    """The figure a summary cut at ``max_tokens`` ends inside (``"... earns ₹1,20,"``), else None."""
    found = _CUT_BACKWARDS.match(summary.rstrip()[::-1])
    return found and found.group()[::-1]


def audit_summary(summary: str, archive: Sequence[dict[str, str]]) -> list[Claim]:
    """Figures and negations in ``summary`` that no user message in ``archive`` states (a figure the summary
    was cut inside is not one: see ``cut_figure``)."""
    fragment = cut_figure(summary)
    if fragment:
        summary = summary.rstrip()[:-len(fragment)]
    (user_values, user_negated), (reply_values, reply_negated) = (
        _said([m["content"] for m in archive if m["role"] == role]) for role in ("user", "assistant"))
    claims = [Claim(figure.text, "figure", "assistant reply" if figure.values & reply_values else "no message")
              for figure in {figure.text: figure for figure in figures(summary)}.values()
              if not all(n in user_values or n * figure.scale in user_values for n in figure.numbers)]
    negated = {m.group(): _stem(m.group("what")) for m in NEGATION.finditer(summary)}  # each text once
    return claims + [Claim(text, "negation", "assistant reply" if what in reply_negated else "no message")
                     for text, what in negated.items() if what not in _STOP and what not in user_negated]
