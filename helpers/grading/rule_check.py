"""Exercise 3.1 (notebook 03): a rule check that reads the sentence about equity; ``states_rule`` agrees with
``helpers.measure.drift`` (a test checks it); each named mistake is a small function, tried with either split."""
from __future__ import annotations

import dataclasses
import functools
import random
import re
from collections.abc import Callable, Sequence

from helpers.grading.runner import WRONG, Exercise, Feedback, Mistake, checker
from helpers.lessons.data import published_run

START = "split the summary into sentences and print them first; then pick the ones about equity"
RULE_WORDS = ("never", "rule", "allergic", "must not", "no equity")  # what the exercise counts as a rule
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_full_stops = functools.partial(str.split, sep=".")  # the split that misses sentences ending in '!' or '?'

# Sentences the random summaries are made of. Each pool is what its name says, by the exercise's definition
# and by helpers.measure.drift.rule_strength alike (the tests check both).
EQUITY_RULES = ("One hard rule: he is allergic to equity instruments.", "He must never be offered equity funds.",
                "Never suggest equities to him.", "Equity products must not be suggested to him.",
                "He wants no equity in his portfolio.")
EQUITY_PREFERENCES = ("He avoids equities, preferring fixed-income.", "He would rather stay out of equity funds.",
                      "He prefers fixed deposits to equity.", "He is wary of equities.")
EQUITY_MENTIONS = ("He is not sure about equities yet.", "He has no view on equity funds.",
                   "His father did not hold equities.", "He asked what an equity fund is.")
OTHER_RULES = ("He will never touch his emergency fund.", "His one rule for spending is to save first.",
               "He must not miss a PPF deposit.", "He says he is allergic to loans.")
OTHER_FACTS = ("Chiru earns ₹1,20,000 a month.", "He is 32 and wants to retire by 55.",
               "He holds an FD of ₹50,000 maturing in three months.", "He will open a PPF account this month.")


def sentences(summary: str) -> list[str]:
    """The sentences of a summary (split after . ! or ?)."""
    return [part for part in _SENTENCE.split(summary.strip()) if part]


def _rule_in(summary: str, split: Callable[[str], list[str]], words: Sequence[str] = RULE_WORDS,
             about: str = "equit", lower: bool = True) -> bool:
    fold = str.lower if lower else str
    return any(word in fold(sentence) for sentence in split(summary) if about in fold(sentence) for word in words)


def states_rule(summary: str) -> bool:
    """The exercise's answer: a sentence that mentions equity holds one of ``RULE_WORDS``."""
    return _rule_in(summary, sentences)


def cases(count: int = 200, seed: int = 7) -> list[str]:
    """The lesson's three summaries, hand-written cases, and ``count`` random summaries from the pools above."""
    lesson = [cycle["summary"] for cycle in published_run(3)["drift_run"]["cycles"]]
    fixed = ["He avoids equities, preferring fixed-income. He will never touch his emergency fund.",
             "Never suggest equities to him. He is 32.",
             "Chiru earns ₹1,20,000 a month and is risk-averse. His one rule for spending is to save first.",
             "[offline stand-in summary] User: One hard rule: I am allergic to equity instruments, never suggest them.",
             # where splitting at '.' only, reading one sentence about equity, needing all of them, cutting at
             # commas or adding a negation word gives another answer than reading every sentence
             "He avoids equities! He will never touch his emergency fund.",
             "Does he want equities? He must not miss a PPF deposit.",
             "He prefers fixed deposits to equity. Never suggest equities to him.",
             "Never suggest equities to him. He is wary of equities.",
             "Equity funds are out for him, never to be suggested.",
             "He is not sure about equities yet.", "He has no view on equity funds.", "Never equity."]
    rng = random.Random(seed)
    generated = []
    for _ in range(count):
        pool = rng.choice((EQUITY_RULES, EQUITY_PREFERENCES, EQUITY_MENTIONS, ()))
        parts = rng.sample(OTHER_RULES + OTHER_FACTS, rng.randint(1, 3)) + ([rng.choice(pool)] if pool else [])
        rng.shuffle(parts)
        generated.append(" ".join(parts))
    return [*lesson, *fixed, *generated]


CASES = tuple(cases())

MISTAKES = (  # each rule takes the summary and the answer's sentence split; never the code of the right answer
    Mistake("the keyword check", lambda s, split: "equit" in s.lower(),
            "that is the lesson's keyword check: it says True for \"He avoids equities, preferring fixed-income.\", "
            "where the rule has become a preference", "what must a sentence about equity hold to still be a rule?"),
    Mistake("rule words anywhere", lambda s, split: any(word in s.lower() for word in RULE_WORDS),
            "you look for the rule words anywhere in the summary: in \"He avoids equities, preferring fixed-income. "
            "He will never touch his emergency fund.\" the 'never' is about his emergency fund",
            "which sentences may hold the rule word?"),
    Mistake("upper and lower case", lambda s, split: _rule_in(s, split, lower=False),
            "your check misses \"Never suggest equities to him.\": it starts with a capital N, and 'Equity' can too",
            "how do you compare texts whatever their case?"),
    Mistake("'equity' misses 'equities'", lambda s, split: _rule_in(s, split, about="equity"),
            "\"He avoids equities\" and \"Never suggest equities\" do not contain 'equity': the word changes",
            "which letters do 'equity' and 'equities' share?"),
    Mistake("a negation word added", lambda s, split: _rule_in(s, split, RULE_WORDS + ("not",)),
            "your check calls \"He is not sure about equities yet.\" a rule: a 'not' alone is no rule (the rule "
            "words are the ones in RULE_WORDS)", "print RULE_WORDS and compare with the words your check looks for"),
    Mistake("a negation word added ('no')", lambda s, split: _rule_in(s, split, RULE_WORDS + ("no",)),
            "your check calls \"He has no view on equity funds.\" a rule: a 'no' alone is no rule (the rule words "
            "are the ones in RULE_WORDS)", "print RULE_WORDS and compare with the words your check looks for"),
    Mistake("only '.' ends a sentence", lambda s, split: _rule_in(s, _full_stops),
            "you split only at '.': in \"He avoids equities! He will never touch his emergency fund.\" the '!' ends "
            "the sentence about equity, and the 'never' is in the next one", "which marks end a sentence?"),
)


def _one_argument(split: Callable[[str], list[str]]) -> tuple[Mistake, ...]:
    """``MISTAKES`` as rules of the summary alone, each tried with ``split`` (the '.'-only one says so)."""
    also = "; and you split only at '.', so a sentence ending in '!' or '?' runs into the next"
    return tuple(dataclasses.replace(m, rule=functools.partial(m.rule, split=split), says=m.says + (
        also if split is _full_stops and m.name != "only '.' ends a sentence" else "")) for m in MISTAKES)


def _why(summary: str) -> str:
    about = [sentence for sentence in sentences(summary) if "equit" in sentence.lower()]
    holding = [(sentence, word) for sentence in about for word in RULE_WORDS if word in sentence.lower()]
    if holding:
        return f"its sentence {holding[0][0]!r} holds {holding[0][1]!r}"
    return f"its sentence about equity, {about[0]!r}, holds none of the rule words" if about else \
        "no sentence of it mentions equity"


def _not_a_bool(summary: str, _: tuple, answer: object) -> Feedback | None:
    return None if isinstance(answer, bool) else Feedback(CHECK.number, WRONG, (
        f"rule_kept returned {answer!r} for {summary[:60]!r}, not True or False"
        + (": did you forget `return`?" if answer is None else ".")),
        "a test such as `word in sentence` is already True or False", "not a bool")


CHECK = Exercise("3.1", CASES, lambda summary: (summary,), "write the body of rule_kept", START,
                 _one_argument(sentences) + _one_argument(_full_stops), (
                     "print the sentences your check finds in the smallest summary, and which of them it reads as "
                     "being about equity"), "summaries")


def grade_rule_check(rule_kept: Callable[[str], bool]) -> Feedback:
    """Exercise 3.1: ``rule_kept(summary)`` is True only where a sentence about equity still states the rule."""
    answers = CHECK.answers(rule_kept, _not_a_bool)
    return answers if isinstance(answers, Feedback) else CHECK.compare(answers, states_rule, (
        f"all {len(CASES)} summaries right, the lesson's among them: True for cycles 1 and 2, False for cycle 3 "
        "('avoids ... preferring'). Your check sees the drift the keyword check misses."),
        lambda summary, mine: f"for {summary!r} you say {mine}, but {_why(summary)}.", len)


check_rule_check = checker(grade_rule_check, "check_rule_check", "rule_kept")
