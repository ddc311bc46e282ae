"""Exercise 5.1 (notebook 05): a cap on the summary. The right answer is what ``SummaryBufferMemory`` keeps; the
check's summarisers need no model: they shorten, come back longer, empty or in Hindi, and allow one call each."""
from __future__ import annotations

import functools
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from helpers.base.bounded import limit_calls
from helpers.base.tokens import count_tokens, filler_text
from helpers.grading.runner import CORRECT, NOT_DONE, WRONG, Exercise, Feedback, Mistake, Misuse, checker
from helpers.memory.summary_buffer import SummaryBufferMemory

START = "there are three situations: no cap, a summary within the cap, a summary over it; write what happens in each"

FACTS = (
    "Chiru earns ₹1,20,000 a month and spends ₹60,000.", "He is 32 and risk-averse.",
    "He holds an FD of ₹50,000 maturing in 3 months.", "His goal is to retire by 55 with a comfortable corpus.",
    "He asked how PPF and NPS differ for retirement.", "FinCoach suggested ₹25,000 a month into PPF and NPS.",
    "He has no other investments.", "He wants to keep ₹1,80,000 as an emergency fund.",
    "He pays ₹18,500 rent and ₹4,200 for utilities.", "He asked about ELSS under the old tax regime.",
)
LONG_SUMMARY = " ".join(FACTS[:4])
# LONG_SUMMARY in Hindi: fewer words and fewer characters, more o200k_base tokens (a test checks all three)
HINDI_SUMMARY = ("चिरु की मासिक आय ₹1,20,000 और खर्च ₹60,000 है। वह 32 वर्ष का और जोखिम-विमुख है। उसकी ₹50,000 "
                 "की FD तीन महीने में परिपक्व होगी। लक्ष्य: 55 तक सेवानिवृत्ति।")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:36] + "...'"


_WRONG_CALL = ("look at how the memory calls its summariser in the class above: which two things does it hand over?",
               "calls the summariser wrongly")


def _summariser_arguments(messages: Any = None, existing_summary: Any = None) -> tuple[Any, Any]:
    """The parameters of a summariser (the memory's): the new messages, then the summary so far."""
    return messages, existing_summary


def _shortener(name: str, shorten: Callable[[str], str]) -> Callable[..., str]:
    """A summariser for the check: shortens ``existing_summary`` when called as ``summarise([], summary)``."""
    def summarise(*args: Any, **kwargs: Any) -> str:
        try:  # bound here: a TypeError of Python's own would name this function's insides
            messages, existing_summary = _summariser_arguments(*args, **kwargs)
        except TypeError:
            given = [_short(a) for a in args] + [f"{key}={_short(value)}" for key, value in kwargs.items()]
            raise Misuse(f"summarise was called as summarise({', '.join(given)}), but a summariser takes the new "
                         "messages and the summary so far, summarise(messages, existing_summary)",
                         *_WRONG_CALL) from None
        if messages != [] or not isinstance(existing_summary, str) or not existing_summary:
            raise Misuse(f"summarise was called with messages={_short(messages)} and existing_summary="
                         f"{_short(existing_summary)}; to shorten a summary there are no new messages, and the "
                         "summary so far is the one to shorten", *_WRONG_CALL)
        return shorten(existing_summary)
    summarise.__name__ = name
    return summarise


def first_words(n: int) -> Callable[..., str]:
    """A summariser that keeps the first ``n`` words."""
    return _shortener(f"keeps the first {n} words", lambda text: " ".join(text.split()[:n]))


DROPS_LAST_SENTENCE = _shortener("drops the last sentence",
                                 lambda text: " ".join(re.findall(r"[^.!?]+[.!?]", text)[:-1]) or text)
COMES_BACK_LONGER = _shortener("comes back longer", lambda text: f"{text} In short: all of the above still applies.")
# a model asked to summarise an Indian user's chat may answer in Hindi: shorter to the eye, more tokens
ANSWERS_IN_HINDI = _shortener("answers in Hindi", lambda text: HINDI_SUMMARY)
COMES_BACK_EMPTY = _shortener("comes back empty", lambda text: "")


@dataclass(frozen=True)
class CapCase:
    """A summary, the summariser the check hands over, and the cap."""

    summary: str
    summarise: Callable[..., str]
    cap: int | None
    about: str

    def describe(self) -> str:
        """The case as a verdict names it."""
        cap = "None (no cap)" if self.cap is None else self.cap
        return (f"{self.about}: a {count_tokens(self.summary)}-token summary of {len(self.summary.split())} words, "
                f"max_summary_tokens={cap}, a summariser that {self.summarise.__name__}")


@functools.lru_cache(maxsize=256)
def memory_keeps(case: CapCase) -> str:
    """What the memory keeps with ``max_summary_tokens=case.cap`` when a fold writes ``case.summary`` (0 runs as 1)."""
    def summarise(messages: list, existing: str | None) -> str:
        return case.summarise(messages, existing) if not messages else case.summary

    memory = SummaryBufferMemory("s", summarise, max_buffer_tokens=60, messages_to_compress_on_overflow=2,
                                 max_summary_tokens=case.cap if case.cap != 0 else 1)
    for role in ("user", "assistant", "user"):  # the third message overflows: one fold of the first turn
        memory.add_message(role, filler_text(30))
    return memory.summary or ""


def _fixed_cases() -> tuple[CapCase, ...]:
    tokens, words = count_tokens(LONG_SUMMARY), len(LONG_SUMMARY.split())
    return (
        CapCase(LONG_SUMMARY, first_words(12), tokens + 20, "a summary under the cap"),
        CapCase(LONG_SUMMARY, first_words(12), words - 4, "a summary over the cap"),
        CapCase(LONG_SUMMARY, first_words(12), tokens, "a summary of exactly max_summary_tokens tokens"),
        CapCase(LONG_SUMMARY, first_words(12), (words + tokens) // 2,
                "a summary under the cap in words but over it in tokens (₹ amounts are several tokens each)"),
        CapCase(LONG_SUMMARY, COMES_BACK_LONGER, words - 4, "a 'shorter' summary that came back longer"),
        CapCase(LONG_SUMMARY, COMES_BACK_EMPTY, words - 4, "a summariser that returns nothing"),
        CapCase(LONG_SUMMARY, ANSWERS_IN_HINDI, words - 4,
                "a 'shorter' summary in fewer words and characters, but more tokens"),
        CapCase(LONG_SUMMARY, DROPS_LAST_SENTENCE, None, "no cap at all"),
        CapCase(LONG_SUMMARY, DROPS_LAST_SENTENCE, 10, "a cap even the shorter summary cannot meet"),
        CapCase(LONG_SUMMARY, first_words(12), 0, "a cap of 0 tokens, which every summary is over"),
        CapCase(FACTS[1], first_words(3), 0, "a short summary and a cap of 0"),
    )


def _random_cases(count: int = 60, seed: int = 51) -> tuple[CapCase, ...]:
    rng = random.Random(seed)
    cases = []
    for index in range(count):
        summary = " ".join(rng.sample(FACTS, rng.randint(2, len(FACTS))))
        tokens = count_tokens(summary)
        cap = rng.choice((None, 0, tokens, rng.randint(5, tokens - 1), rng.randint(tokens + 1, tokens + 60)))
        summarise = rng.choice((first_words(rng.randint(4, 30)), DROPS_LAST_SENTENCE, COMES_BACK_LONGER,
                                COMES_BACK_EMPTY, ANSWERS_IN_HINDI))
        cases.append(CapCase(summary, summarise, cap, f"random case {index + 1}"))
    return tuple(cases)


CASES = _fixed_cases() + _random_cases()


def _problem(case: CapCase, answer: Any, calls: int) -> Mistake | None:
    """The mistake one answer shows on ``case`` (None if it is right)."""
    tokens, words = count_tokens(case.summary), len(case.summary.split())
    within = case.cap is not None and tokens <= case.cap
    if answer is None:
        return Mistake("no return", None, "cap_summary returned None: did you forget `return`?",
                       "a print shows a value, but only return hands it back to the caller")
    if not isinstance(answer, str):
        return Mistake("wrong type", None, f"cap_summary returned {_short(answer)}, not the summary to keep (a str)",
                       "return one of the two texts, the old summary or the new one")
    if case.cap is None and calls:
        return Mistake("calls with no cap", None, "max_summary_tokens is None (no cap), yet summarise was called",
                       "what is there to shorten when there is no cap?")
    if case.cap is None:
        return None if answer == case.summary else Mistake(
            "changes with no cap", None, "max_summary_tokens is None (no cap), yet the summary changed",
            "with no cap the summary stays as it is")
    if within and calls and case.cap == tokens:
        return Mistake("at the cap is over", None, f"the summary has exactly {tokens} tokens and the cap is "
                       f"{case.cap}: that is within the cap, yet summarise was called",
                       "compare the two sides of your test when they are equal: is a summary of exactly the cap "
                       "over it?")
    if within and calls:
        return Mistake("calls within the cap", None, f"the summary has {tokens} tokens, within the cap of {case.cap}, "
                       "yet summarise was called",
                       "a summary within the cap costs no model call: when do you need one?")
    if not within and not calls:
        if case.cap == 0 and answer == case.summary:
            return Mistake("a cap of 0 is no cap", None, f"with max_summary_tokens=0 your function kept the {tokens}-"
                           "token summary without a call: a cap of 0 is a cap (every summary is over it), not 'no cap'",
                           "which values of max_summary_tokens mean 'no cap'? Test for exactly those: 0 is a number, "
                           "not None")
        if answer != case.summary:
            return Mistake("cuts the text", None, "summarise was never called, yet the summary changed: a summary over "
                           "the cap is shortened by one summariser call, not cut by hand (a cut can stop mid-sentence "
                           "or drop a figure)", "the summariser writes the shorter version; you choose")
        if words <= case.cap:
            return Mistake("counts words", None, f"the summary has {words} words but {tokens} tokens, over the cap of "
                           f"{case.cap}, and summarise was not called", "the cap is in tokens: how does the notebook "
                           "count tokens? (a ₹ amount is one word, several tokens)")
        return Mistake("never calls", None, f"the summary has {tokens} tokens, over the cap of {case.cap}, but "
                       "summarise was not called", "what does your function do when the summary is over the cap?")
    expected = memory_keeps(case)
    if answer == expected:
        return None
    shorter = case.summarise([], case.summary).strip()
    if not shorter and not answer.strip():
        return Mistake("keeps an empty summary", None, "the summariser returned an empty text and yours kept it: an "
                       "empty summary would lose every earlier turn",
                       "when the new text is empty, what is left to keep?")
    if shorter and count_tokens(shorter) >= tokens and answer.strip() == shorter:
        looks_shorter = len(shorter) < len(case.summary) and len(shorter.split()) < words
        return Mistake("keeps the longer one", None, f"the 'shorter' summary came back with {count_tokens(shorter)} "
                       f"tokens, more than the {tokens} it replaces, and yours kept it"
                       + (" (it has fewer characters and words, but more tokens)" if looks_shorter else ""),
                       "a summariser can fail to shorten: compare the two texts the way the cap counts them")
    if answer == case.summary:
        return Mistake("keeps the long one", None, f"the summariser returned a shorter summary "
                       f"({count_tokens(shorter)} tokens against {tokens}) and yours kept the long one",
                       "after the call you hold two texts: which one does the cap want?")
    return Mistake("another text", None, f"yours returned {answer[:60]!r}..., the memory keeps {expected[:60]!r}...",
                   "return one of the two texts as they are, the old summary or the summariser's")


CHECK = Exercise("5.1", CASES, lambda case: (case.summary, limit_calls(case.summarise, 1, "summarise"), case.cap),
                 "write the body of cap_summary", START)


def grade_summary_cap(cap_summary: Callable[[str, Callable, int | None], str]) -> Feedback:
    """Exercise 5.1: ``cap_summary(summary, summarise, max_summary_tokens)`` must keep what the memory's
    ``max_summary_tokens`` keeps, calling ``summarise`` at most once, only over the cap."""
    wrong: list[tuple[CapCase, Mistake]] = []
    for case, (_, summarise, _), result in CHECK.runs(cap_summary):
        if isinstance(result, Feedback) and result.status == NOT_DONE:
            return result
        if isinstance(result, Feedback):
            if summarise.calls > 1:
                return Feedback(CHECK.number, WRONG, (
                    f"summarise was called a second time, so the check stopped it (on {case.describe()}). Each call "
                    "is a model call, and a summariser cannot always get under the cap: calling it until the "
                    "summary fits can go on for ever."),
                    "one call, and its answer kept in a variable: what does the cap ask you to do with it?",
                    "calls more than once")
            if case.cap is None and "TypeError" in result.message:
                return Feedback(CHECK.number, WRONG, f"{result.message.rstrip('.')} with max_summary_tokens=None. "
                                "None means no cap.", "what must happen before a comparison with max_summary_tokens, "
                                "when it can be None?", "forgets None")
            return result.on(case.describe())
        problem = _problem(case, result, summarise.calls)
        if problem is not None:
            wrong.append((case, problem))
    if not wrong:
        return Feedback(CHECK.number, CORRECT, (
            f"all {len(CASES)} cases keep what the memory's max_summary_tokens keeps: a summary within the cap "
            "untouched (no call), one call over it, the shorter text kept, never an empty or a longer one."))
    case, mistake = wrong[0]  # the hand-made cases come first: each shows one edge
    return mistake.verdict(CHECK.number, f"{len(wrong)} of {len(CASES)} cases differ. The first: {case.describe()}.")


check_summary_cap = checker(grade_summary_cap, "check_summary_cap", "cap_summary")
