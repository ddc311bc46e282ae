"""Exercise 3.1 (notebook 03): a rule check that reads the sentence about equity; ``states_rule`` agrees with
``helpers.measure.drift`` (a test checks it). The summaries are made so that each kind of slip shows: rule words
elsewhere, words that are not rule words, capitals, plurals, words that touch punctuation, '!' and '?'."""
from __future__ import annotations

import random
import re
from collections.abc import Callable

from helpers.grading.runner import Exercise, Feedback, Mistake, checker
from helpers.lessons.data import published_run

RULE_WORDS = ("never", "rule", "allergic", "must not", "no equity")  # what the exercise counts as a rule

# Sentences the random summaries are made of: rules about equity, other sentences about equity (with words a
# student may wrongly count as rule words), rules about something else, other facts. The tests check each pool
# against helpers.measure.drift.rule_strength.
EQUITY_RULES = (
    "One hard rule: he is allergic to equity instruments.", "He must never be offered equity funds.",
    "Never suggest equities to him.", "Equity products must not be suggested to him.",
    "He wants no equity in his portfolio.", "Equity funds are against his rules.", "His rules: no equity, no loans.",
    "He is allergic to equity, he says.", "Equities are never an option for him.",
    "He will never hold equity-linked funds.", "NEVER suggest equities.", "Suggesting equity breaks a rule he set.")
EQUITY_OTHER = (
    "He avoids equities, preferring fixed-income.", "He would rather stay out of equity funds.",
    "He prefers fixed deposits to equity.", "He is wary of equities.", "He is not sure about equities yet.",
    "He has no view on equity funds.", "His father did not hold equities.", "He asked what an equity fund is.",
    "He doesn't hold any equity yet.", "He won't decide on equity funds until March.",
    "He dislikes the swings of equities.", "He must decide about equity funds by March.",
    "He always reads about equities, but buys none.", "Equity-linked savings came up once.",
    "He hates losing money, so equity worries him.", "He is against debt, and unsure about equity.",
    "He can't tell an equity fund from a debt fund.", "He stopped his equity SIP last year.",
    "Avoid equity for now, he said.", "He is cautious, so equities are a maybe.", "No decision yet on equity.",
    "He sees equity as risky.", "Stay away from equities this year, he thinks.", "Equity? He has not decided.",
    "He is strict about his budget, unsure about equity.", "Only fixed income this year; equity funds maybe later.")
OTHER_RULES = ("He will never touch his emergency fund.", "His one rule for spending is to save first.",
               "He must not miss a PPF deposit.", "He says he is allergic to loans.")
OTHER_FACTS = ("Chiru earns ₹1,20,000 a month.", "He is 32 and wants to retire by 55.",
               "He holds an FD of ₹50,000 maturing in three months.", "He will open a PPF account this month.")


def sentences(summary: str) -> list[str]:
    """The sentences of a summary (split after . ! or ?)."""
    return [part for part in re.split(r"(?<=[.!?])\s+", summary.strip()) if part]


def states_rule(summary: str, split: Callable = sentences, has: Callable = str.__contains__,
                about: Callable = lambda sentence: "equit" in sentence, fold: Callable = str.lower) -> bool:
    """The exercise's answer at the defaults (a sentence that mentions equity holds one of ``RULE_WORDS``); each
    argument changes one thing."""
    return any(has(fold(s), word) for s in split(summary) if about(fold(s)) for word in RULE_WORDS)


def cases(count: int = 200, seed: int = 7) -> list[str]:
    """The lesson's three summaries, hand-written cases, and ``count`` random summaries from the pools above."""
    lesson = [cycle["summary"] for cycle in published_run(3)["drift_run"]["cycles"]]
    fixed = ["He avoids equities, preferring fixed-income. He will never touch his emergency fund.",
             "Never suggest equities to him. He is 32.", "Equity funds are against his rules.",
             "[offline stand-in summary] User: One hard rule: I am allergic to equity instruments, never suggest them.",
             "He avoids equities! He will never touch his emergency fund.", "Equity? He must not miss a PPF deposit.",
             "He prefers fixed deposits to equity. Never suggest equities to him.",
             "Never suggest equities to him. He is wary of equities.", "He is allergic to equity, he says.",
             "He is not sure about equities yet.", "He has no view on equity funds.", "Never equity.",
             *EQUITY_RULES, *EQUITY_OTHER]  # each sentence alone too: a slip in one shows without a neighbour
    rng, generated = random.Random(seed), []
    for _ in range(count):
        parts = rng.sample(OTHER_RULES + OTHER_FACTS, rng.randint(1, 3))
        parts += [rng.choice(pool) for pool in rng.choice(((), (EQUITY_RULES,), (EQUITY_OTHER,), (EQUITY_OTHER,),
                                                          (EQUITY_RULES, EQUITY_OTHER)))]
        rng.shuffle(parts)
        generated.append(" ".join(p[:-1] + "!" if p.endswith(".") and rng.random() < 0.15 else p for p in parts))
    return [*lesson, *fixed, *generated]


CASES = tuple(cases())


def _tokens(sentence: str, word: str) -> bool:
    return word in sentence.split()


def _m(name: str, rule: Callable[[str], bool], says: str, hint: str, strict: bool = False) -> Mistake:
    return Mistake(name, rule, says, hint, strict)


MISTAKES = (  # each rule takes the summary; never the code of the right answer
    _m("the keyword check", lambda s: "equit" in s.lower(), "that is the lesson's keyword check: it says True for "
       "\"He avoids equities, preferring fixed-income.\", where the rule has become a preference", "what must a "
       "sentence about equity hold to still be a rule?", strict=True),
    _m("only '.' ends a sentence", lambda s: states_rule(s, lambda text: text.split(".")), "you split only at '.': a "
       "sentence ending in '!' or '?' runs into the next, and its neighbour's rule word counts for it",
       "which marks end a sentence?"),
    _m("the first sentence about equity only",
       lambda s: next((states_rule(x) for x in sentences(s) if "equit" in x.lower()), False),
       "you read only the first sentence about equity; the rule can be stated in a later one",
       "what does your check do after the first sentence that mentions equity?"),
    _m("every sentence about equity", lambda s: bool(xs := [x for x in sentences(s) if "equit" in x.lower()])
       and all(states_rule(x) for x in xs), "you want every sentence about equity to hold a rule word; one is enough",
       "one sentence states the rule, another mentions equity in passing: is the rule still kept?"),
    _m("'equity' misses 'equities'", lambda s: states_rule(s, about=lambda x: "equity" in x), "\"Never suggest "
       "equities\" does not contain 'equity': the word changes in the plural", "which letters do 'equity' and "
       "'equities' share?"),
    _m("equity only as a whole word", lambda s: states_rule(s, about=lambda x: _tokens(x, "equity")), "you find "
       "equity only as a word on its own between spaces: in 'equity,' or 'equity-linked' or 'equities' the letters "
       "touch other characters", "is 'equity,' (with its comma) a word of the split?"),
    _m("rule words only as whole words", lambda s: states_rule(s, has=_tokens), "you find the rule words only as "
       "whole words: 'rules' holds 'rule', and 'must not' is two words", "does 'Equity funds are against his rules.' "
       "hold a rule word? Look for the letters, not for a word"),
    _m("upper and lower case", lambda s: states_rule(s, fold=str), "your check misses words written with capitals: "
       "'Never' starts a sentence with a capital N, and 'Equity' can too", "how do you compare texts whatever their "
       "case?"),
    _m("rule words anywhere", lambda s: "equit" in s.lower() and any(word in s.lower() for word in RULE_WORDS),
       "you look for the rule words anywhere in the summary: in \"He avoids equities, preferring fixed-income. He "
       "will never touch his emergency fund.\" the 'never' is about his emergency fund", "which sentences may hold "
       "the rule word?"),
    _m("a word that is not a rule word", lambda s: any("equit" in x.lower() for x in sentences(s)), "your check "
       "counts a sentence about equity as a rule although it holds none of RULE_WORDS: a word of your own is in "
       "your list, or your check reads 'no', 'not' or another word as a rule", "print RULE_WORDS and compare with "
       "the words your check looks for"),
)


def _why(summary: str) -> str:
    about = [sentence for sentence in sentences(summary) if "equit" in sentence.lower()]
    holding = [(sentence, word) for sentence in about for word in RULE_WORDS if word in sentence.lower()]
    if holding:
        return f"its sentence {holding[0][0]!r} holds {holding[0][1]!r}"
    return f"its sentence about equity, {about[0]!r}, holds none of the rule words" if about else \
        "no sentence of it mentions equity"


CHECK = Exercise(
    "3.1", CASES, lambda summary: (summary,), (states_rule,), "write the body of rule_kept", "split the summary into "
    "sentences and print them first; then pick the ones about equity", MISTAKES, "print the sentences your check "
    "finds in the smallest summary, and which of them it reads as being about equity", "summaries", wanted=(
        lambda answer: type(answer).__name__ in ("bool", "bool_"), "True or False"),
    example=lambda summary, mine: f"for {summary!r} you say {mine}, but {_why(summary)}.", key=len,
    correct=lambda _: f"all {len(CASES)} summaries right, the lesson's among them: True for cycles 1 and 2, False "
    "for cycle 3 ('avoids ... preferring'). Your check sees the drift the keyword check misses.")


def grade_rule_check(rule_kept: Callable[[str], bool]) -> Feedback:
    """Exercise 3.1: ``rule_kept(summary)`` is True only where a sentence about equity still states the rule."""
    return CHECK.grade(rule_kept, repr)


check_rule_check = checker(grade_rule_check, "rule_kept")
