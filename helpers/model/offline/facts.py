"""A message's text, its sentences, and the facts they carry: amounts, ages, dates, rules, profile, names."""
from __future__ import annotations

import re
from typing import Any

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[*A-Z₹$0-9])|\n+")


def content_text(content: Any) -> str:
    """Text of a message's content (a string, or the SDK's list of parts)."""
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def split_sentences(text: str) -> list[str]:
    """Sentences of a text, split after . ! ? before a capital/number, and at line breaks."""
    parts = [part.strip() for part in _SENTENCE_END.split(text or "")]
    return [part for part in parts if part]


_MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|december|"
           "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec")
_FACT_PATTERNS: dict[str, tuple[re.Pattern[str], int]] = {
    "rule": (re.compile(r"\b(?:never|always|don['’]?t|do not|must(?: not)?|hard rule|allergic|avoid|under no)\b",
                        re.IGNORECASE), 3),
    "amount": (re.compile(r"[₹$€£]\s?\d|\b(?:rs\.?|inr|usd)\s?\d|"
                          r"\d(?:[\d,]*\d)?(?:\.\d+)?\s*(?:%|percent\b|lakhs?\b|"
                          r"crores?\b|cr\b|k\b|l\b)|\b\d{1,3}(?:,\d{2,3})+\b", re.IGNORECASE), 3),
    "age": (re.compile(r"\b\d{1,3}\s*(?:years?|yrs?)[ -]old\b|\b\d{1,3}-year-old\b|\bI['’]?m \d{2}\b|\bI am \d{2}\b|"
                       r"\baged? \d{2}\b|(?<!\d),\s*\d{2},(?!\d)", re.IGNORECASE), 3),
    "date": (re.compile(r"\b\d+(?:\.\d+)?\s*(?:-|\s)?(?:days?|weeks?|months?|quarters?|years?|yrs?)\b|"
                        r"\b(?:next|this|last|every|each) (?:week|month|quarter|year)\b|\b(?:by|at|until) \d{2,4}\b|"
                        rf"\b(?:{_MONTHS})\b|\b(?:19|20)\d{{2}}\b|\bmatur", re.IGNORECASE), 2),
    "profile": (re.compile(r"\brisk[- ]?(?:averse|profile|appetite|tolerance)|\b(?:conservative|aggressive)\b|"
                           r"\bgoals?\b|\bretire|\bplan(?:s|ning)? to\b|\bwants? to\b|\bI will\b|\bI['’]ll\b|"
                           r"\bdecided\b|\bmy name is\b", re.IGNORECASE), 1),
    # a name needs its capital letter, so this one is case-sensitive: "I'm Chiru", "I am Asha"
    "name": (re.compile(r"\bI['’]?m [A-Z][a-z]+\b|\bI am [A-Z][a-z]+\b"), 1),
}


def fact_kinds(sentence: str) -> list[str]:
    """Which kinds of fact a sentence carries (rule, amount, age, date, profile, name), in that order."""
    return [kind for kind, (pattern, _) in _FACT_PATTERNS.items() if pattern.search(sentence)]


def fact_score(sentence: str, *, rules_first: bool = False) -> int:
    """How much a sentence is worth keeping: 0 (no fact) up to 4 (a stated rule, if the prompt names rules)."""
    kinds = fact_kinds(sentence)
    if not kinds or (sentence.rstrip().endswith("?") and "amount" not in kinds):
        return 0  # a question states nothing, unless it carries an amount ("a ₹2 crore corpus by 55?")
    return 4 if rules_first and "rule" in kinds else max(_FACT_PATTERNS[kind][1] for kind in kinds)
