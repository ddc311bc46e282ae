"""Summary drift (lesson 3): size, words, the lesson's keyword check, and whether a rule survives *as a rule* (a
keyword cannot tell "never suggest equity" from "prefers to avoid equity": ``rule_strength`` reads its sentences)."""
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


def keyword_sentences(text: str, keyword: str = "equit") -> list[str]:
    """The sentences of ``text`` that mention ``keyword``: what a reader checks by eye."""
    return [s.strip() for s in _SENTENCE.split(text) if keyword.lower() in s.lower()]


def rule_strength(text: str, keyword: str = "equit") -> tuple[str, list[str]]:
    """``("rule" | "preference" | "mentioned" | "absent", cue words found)`` for the keyword's sentences: a rule
    word ("never", "allergic"...), only softer words ("avoids", "prefers"), neither, or no mention."""
    sentences = [s.lower() for s in keyword_sentences(text, keyword)]
    for strength, cues in (("rule", RULE_CUES), ("preference", PREFERENCE_CUES)):
        if found := [cue for s in sentences for cue in cues if re.search(r"\b" + re.escape(cue), s)]:
            return strength, list(dict.fromkeys(found))
    return ("mentioned" if sentences else "absent"), []


@dataclass(frozen=True)
class CycleMeasure:
    """One summary cycle measured the lesson's way, plus the rule-or-preference reading."""
    cycle: int
    batch_tokens: int
    summary_tokens: int
    words: int
    word_limit: int | None
    mentions_keyword: bool
    strength: str
    summary: str

    @property
    def over_limit(self) -> bool:
        """More words than the prompt allows (False when the prompt states no limit)."""
        return self.word_limit is not None and self.words > self.word_limit


def measure(summaries: Sequence[str], batch_tokens: Sequence[int], word_limit: int | None = 80) -> list[CycleMeasure]:
    """Measure a run's summaries, one per cycle, in the same way for every run (the lesson's included)."""
    if len(summaries) != len(batch_tokens):
        raise SettingError("batch_tokens", batch_tokens,
                           f"{len(summaries)} summaries but {len(batch_tokens)} batch sizes: give one per summary")
    return [CycleMeasure(cycle, batch, count_tokens(summary), word_count(summary), word_limit,
                         "equit" in summary.lower(), rule_strength(summary)[0], summary)  # the lesson's keyword check
            for cycle, (summary, batch) in enumerate(zip(summaries, batch_tokens), start=1)]


def run_drift(summarise: Summariser, batches: Sequence[Sequence[str]], word_limit: int | None = 80
              ) -> list[CycleMeasure]:
    """Fold the batches (``"USER: ..."`` lines) into a rolling summary, one summariser call per batch; measure each."""
    summaries: list[str] = []
    for batch in batches:
        summaries.append(summarise(messages_from_lines(list(batch)), summaries[-1] if summaries else None))
    return measure(summaries, [count_tokens("\n".join(batch)) for batch in batches], word_limit)
