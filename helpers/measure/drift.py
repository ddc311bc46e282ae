"""Summary drift (lesson 3): size, words against the limit, the lesson's keyword check, and whether a rule
survives *as a rule*: a keyword check cannot tell "never suggest equity" from "prefers to avoid equity", so
``rule_strength`` reads the keyword's sentences for the words that carry a rule's force."""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from helpers.base.text import messages_from_lines, word_count
from helpers.base.tokens import count_tokens
from helpers.memory.types import SettingError, Summariser

# Words that keep the force of the user's rule, and words that turn it into a taste.
RULE_CUES = ("hard rule", "rule", "never", "must not", "must never", "do not", "don't", "does not want",
             "not to suggest", "not suggest", "no equit", "allergic", "forbid", "prohibit", "exclude",
             "refuse", "under no circumstances", "strictly", "only fixed")
PREFERENCE_CUES = ("avoid", "prefer", "rather", "lean", "inclined", "favour", "favor", "likes",
                   "reluctant", "wary", "cautious about", "not keen", "less interested")
_SENTENCE = re.compile(r"(?<=[.!?;])\s+")


def mentions(text: str, keyword: str = "equit") -> bool:
    """The lesson's keyword check: is ``keyword`` anywhere in the text (case-insensitive)?"""
    return keyword.lower() in text.lower()


def _cues(sentence: str, cues: Sequence[str]) -> list[str]:
    lowered = sentence.lower()
    return [cue for cue in cues if re.search(r"\b" + re.escape(cue), lowered)]


def rule_strength(text: str, keyword: str = "equit") -> tuple[str, list[str]]:
    """``("rule" | "preference" | "mentioned" | "absent", cue words found)`` for the keyword's sentences: a rule
    word ("never", "allergic"...), only softer words ("avoids", "prefers"), neither, or no mention."""
    sentences = keyword_sentences(text, keyword)
    if not sentences:
        return "absent", []
    rule = [cue for s in sentences for cue in _cues(s, RULE_CUES)]
    if rule:
        return "rule", sorted(set(rule), key=rule.index)
    preference = [cue for s in sentences for cue in _cues(s, PREFERENCE_CUES)]
    if preference:
        return "preference", sorted(set(preference), key=preference.index)
    return "mentioned", []


def keyword_sentences(text: str, keyword: str = "equit") -> list[str]:
    """The sentences of ``text`` that mention ``keyword``: what a reader checks by eye."""
    return [s.strip() for s in _SENTENCE.split(text) if mentions(s, keyword)]


@dataclass(frozen=True)
class CycleMeasure:
    """One summary cycle measured the lesson's way, plus the rule-or-preference reading."""
    cycle: int
    batch_tokens: int
    summary_tokens: int
    words: int
    word_limit: int
    mentions_keyword: bool
    strength: str
    cues: tuple[str, ...]
    summary: str
    keyword_label: str = "equity"

    @property
    def over_limit(self) -> bool:
        """More words than the prompt allows."""
        return self.words > self.word_limit


def measure(summaries: Sequence[str], batch_tokens: Sequence[int], keyword: str = "equit",
            word_limit: int = 80, keyword_label: str = "equity") -> list[CycleMeasure]:
    """Measure a run's summaries, one per cycle, in the same way for every run."""
    if len(summaries) != len(batch_tokens):
        raise SettingError("batch_tokens", batch_tokens,
                           f"{len(summaries)} summaries but {len(batch_tokens)} batch sizes: give one per summary")
    measures = []
    for cycle, (summary, batch) in enumerate(zip(summaries, batch_tokens), start=1):
        strength, cues = rule_strength(summary, keyword)
        measures.append(CycleMeasure(cycle, batch, count_tokens(summary), word_count(summary), word_limit,
                                     mentions(summary, keyword), strength, tuple(cues), summary, keyword_label))
    return measures


def run_drift(summarise: Summariser, batches: Sequence[Sequence[str]], keyword: str = "equit",
              word_limit: int = 80) -> list[CycleMeasure]:
    """Fold the batches into a rolling summary, one summariser call per batch; measure each cycle."""
    batch_tokens = [count_tokens("\n".join(batch)) for batch in batches]
    summary: str | None = None
    summaries: list[str] = []
    for batch in batches:
        summary = summarise(messages_from_lines(list(batch)), summary)
        summaries.append(summary)
    return measure(summaries, batch_tokens, keyword, word_limit)


def chart_series(cycles: Sequence[CycleMeasure]) -> dict[str, list]:
    """The numbers ``helpers.display.plots.drift_chart`` draws for one run, and how the rule reads per cycle."""
    return {"batch_tokens": [c.batch_tokens for c in cycles], "summary_tokens": [c.summary_tokens for c in cycles],
            "words": [c.words for c in cycles], "strength": [c.strength for c in cycles]}
