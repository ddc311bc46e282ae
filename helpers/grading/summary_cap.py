"""Exercise 5.1 (notebook 05): a cap on the summary. The right answer is ``cap`` (a test holds it to what
``SummaryBufferMemory``'s ``max_summary_tokens`` keeps); each named mistake is ``cap`` with one thing changed. The
check's summarisers need no model: they shorten, come back longer, empty or in Hindi; the summaries come with
the spaces and line breaks a model leaves, so "unchanged" means unchanged."""
from __future__ import annotations

import functools
import random
import re
from collections.abc import Callable
from typing import Any, NamedTuple

from helpers.base.bounded import limit_calls
from helpers.base.tokens import count_tokens
from helpers.grading.runner import WRONG, Exercise, Feedback, Mistake, Misuse, checker, drawn, name_of

FACTS = ("Chiru earns ₹1,20,000 a month and spends ₹60,000.", "He is 32 and risk-averse.",
         "He holds an FD of ₹50,000 maturing in 3 months.", "His goal is to retire by 55 with a comfortable corpus.",
         "He asked how PPF and NPS differ for retirement.", "FinCoach suggested ₹25,000 a month into PPF and NPS.",
         "He has no other investments.", "He wants to keep ₹1,80,000 as an emergency fund.",
         "He pays ₹18,500 rent and ₹4,200 for utilities.", "He asked about ELSS under the old tax regime.")
LONG_SUMMARY = " ".join(FACTS[:4])
# LONG_SUMMARY in Hindi: fewer words and fewer characters, more o200k_base tokens (a test checks all three)
HINDI_SUMMARY = ("चिरु की मासिक आय ₹1,20,000 और खर्च ₹60,000 है। वह 32 वर्ष का और जोखिम-विमुख है। उसकी ₹50,000 "
                 "की FD तीन महीने में परिपक्व होगी। लक्ष्य: 55 तक सेवानिवृत्ति।")
_CALLED = ("look at how the memory calls its summariser in the class above: which two things does it hand over?",
           "calls the summariser wrongly")


def _shortener(name: str, shorten: Callable[[str], str]) -> Callable[..., str]:
    """A summariser for the check: shortens ``existing_summary`` when called as ``summarise([], summary)``."""
    def summarise(*args: Any, **kwargs: Any) -> str:
        try:  # the parameters of the memory's summariser, bound here (Python's own TypeError names these insides)
            messages, existing = (lambda messages=None, existing_summary=None: (messages, existing_summary))(
                *args, **kwargs)
        except TypeError:
            messages, existing = args, kwargs
        if messages != [] or not isinstance(existing, str) or not existing:
            given = ", ".join([f"{a!r:.40}" for a in args] + [f"{k}={v!r:.40}" for k, v in kwargs.items()])
            raise Misuse(f"summarise was called as summarise({given}); a summariser takes the new messages, none here, "
                         "and the summary so far, the one to shorten: summarise(messages, existing_summary)", *_CALLED)
        return shorten(existing.strip())
    summarise.__name__ = name
    return summarise


SUMMARISERS = (
    *(_shortener(f"keeps the first {n} words", lambda text, n=n: " ".join(text.split()[:n])) for n in (4, 12, 30)),
    _shortener("drops the last sentence", lambda text: " ".join(re.findall(r"[^.!?]+[.!?]", text)[:-1]) or text),
    _shortener("comes back longer", lambda text: f"{text} In short: all of the above still applies."),
    _shortener("answers in Hindi", lambda text: HINDI_SUMMARY),  # shorter to the eye, more tokens
    _shortener("comes back empty", lambda text: ""))

Kept = NamedTuple("Kept", [("text", str), ("calls", int)])  # a str the answer kept, and its summariser calls


class CapCase(NamedTuple):
    """A summary, the summariser the check hands over, and the cap."""
    summary: str
    summarise: Callable[..., str]
    cap: int | None
    about: str = ""

    def describe(self) -> str:
        return (f"{self.about + ': ' if self.about else ''}a {count_tokens(self.summary)}-token summary of "
                f"{len(self.summary.split())} words, max_summary_tokens={self.cap}, a summariser that "
                f"{self.summarise.__name__}")


def cap(case: CapCase, size: Callable[[str], int] = count_tokens, over: Any = int.__gt__, cap_zero: bool = True,
        check: bool = True, keep_empty: bool = False, compare: Any = count_tokens, keep_new: bool = True,
        unchanged: Callable[[str], str] = str) -> tuple[str, int]:
    """(the summary to keep, summariser calls): the exercise's rule at the defaults; each argument changes one thing."""
    summary, limit = unchanged(case.summary), case.cap
    if limit is None or not (limit or cap_zero) or (check and not over(size(summary), limit)):
        return summary, 0
    new = case.summarise([], case.summary)
    if not (new.strip() or keep_empty) or not keep_new or (compare and compare(new) >= compare(summary)):
        return summary, 1
    return new, 1


def _draw(rng: random.Random, index: int) -> CapCase:
    """A random summary, some with a model's spacing, a random cap and summariser."""
    summary = " ".join(rng.sample(FACTS, rng.randint(2, len(FACTS))))
    summary = rng.choice((summary, summary, summary + "\n", " " + summary, summary.replace(". ", ".  ", 1)))
    n = count_tokens(summary)
    limit = rng.choice((None, 0, n, rng.randint(5, n - 1), rng.randint(n + 1, n + 60)))
    return CapCase(summary, rng.choice(SUMMARISERS), limit, f"random case {index + 1}")


_TOKENS, _WORDS = count_tokens(LONG_SUMMARY), len(LONG_SUMMARY.split())
_TWELVE, _DROPS, _LONGER, _HINDI, _EMPTY = SUMMARISERS[1], *SUMMARISERS[3:]
CASES = drawn([  # hand-made cases, each at one edge, then 60 random ones
    *(CapCase(LONG_SUMMARY, *case) for case in (
        (_TWELVE, _TOKENS + 20, "a summary under the cap"), (_TWELVE, _WORDS - 4, "a summary over the cap"),
        (_TWELVE, _TOKENS, "a summary of exactly max_summary_tokens tokens"),
        (_TWELVE, (_WORDS + _TOKENS) // 2, "under the cap in words but over it in tokens (a ₹ amount is several)"),
        (_LONGER, _WORDS - 4, "a 'shorter' summary that came back longer"), (_EMPTY, _WORDS - 4, "an empty answer"),
        (_HINDI, _WORDS - 4, "a 'shorter' summary in fewer words and characters, but more tokens"),
        (_DROPS, None, "no cap at all"), (_DROPS, 10, "a cap even the shorter summary cannot meet"),
        (_TWELVE, 0, "a cap of 0 tokens, which every summary is over"))),
    CapCase(FACTS[1], SUMMARISERS[0], 0, "a short summary and a cap of 0"),
    CapCase(LONG_SUMMARY + "\n", _TWELVE, None, "a model's summary, its line break kept"),
    CapCase(" " + FACTS[0] + "  " + FACTS[1], _DROPS, 200, "a summary within the cap, spaced as it came"),
], 60, 51, _draw)


def _m(name: str, says: str, hint: str, **changed: Any) -> Mistake:
    return Mistake(name, functools.partial(cap, **changed), says, hint, strict=False)


MISTAKES = (
    _m("changes the summary", "a summary within the cap (or with no cap, or kept because the new one is no shorter) "
       "comes back unchanged, character for character: yours changed its spaces or line breaks", "what does "
       "returning the summary 'unchanged' leave out: strip, split or join?", unchanged=str.strip),
    _m("at the cap is over", "a summary of exactly max_summary_tokens tokens is within the cap, yet summarise was "
       "called", "compare the two sides of your test when they are equal", over=int.__ge__),
    _m("a cap of 0 is no cap", "with max_summary_tokens=0 your function kept the summary without a call: a cap of 0 "
       "is a cap (every summary is over it), not 'no cap'", "which value means 'no cap'? 0 is a number, not None",
       cap_zero=False),
    _m("counts words", "the cap is in tokens, and your test counts words: a ₹ amount is one word and several tokens",
       "how does the notebook count tokens?", size=lambda text: len(text.split())),
    _m("counts characters", "the cap is in tokens, and your test counts characters", "how does the notebook count "
       "tokens?", size=len),
    _m("calls within the cap", "summarise was called for a summary within the cap", "a summary within the cap costs "
       "no model call: when do you need one?", check=False),
    _m("keeps an empty summary", "the summariser returned an empty text and yours kept it: an empty summary would lose "
       "every earlier turn", "when the new text is empty, what is left to keep?", keep_empty=True),
    _m("keeps fewer characters", "yours kept the text with fewer characters, which can have more tokens (Hindi "
       "does)", "a summariser can fail to shorten: compare the two texts the way the cap counts them", compare=len),
    _m("keeps the longer one", "the 'shorter' summary came back with more tokens than the one it replaces, and yours "
       "kept it", "a summariser can fail to shorten: compare the two texts the way the cap counts them",
       compare=None),
    _m("keeps the long one", "the summariser returned a shorter summary and yours kept the long one", "after the call "
       "you hold two texts: which one does the cap want?", keep_new=False),
)


def _example(case: CapCase, answer: tuple[str, int]) -> str:
    said = [f"{text!r:.70} after {n} call{'s' if n != 1 else ''}" for text, n in (answer, cap(case))]
    return f"{case.describe()}. You return {said[0]}; the cap keeps {said[1]}."


CHECK = Exercise(
    "5.1", CASES, lambda case: (case,), (cap,), "write the body of cap_summary", "there are three situations: no cap, "
    "a summary within the cap, a summary over it; write what happens in each", MISTAKES, "play the case above by "
    "hand: is the summary over the cap, how many calls, and which text is kept?", example=_example,
    wanted=(lambda answer: type(answer) is Kept, "the summary to keep (a str)"),
    correct=lambda _: f"all {len(CASES)} cases keep what the memory's max_summary_tokens keeps: a summary within the "
    "cap unchanged (no call), one call over it, the shorter text kept, never an empty or a longer one.")


def grade_summary_cap(cap_summary: Callable[[str, Callable, int | None], str]) -> Feedback:
    """Exercise 5.1: ``cap_summary(summary, summarise, max_summary_tokens)`` keeps what the memory's
    ``max_summary_tokens`` keeps, calling ``summarise`` at most once, only over the cap."""
    def answer(case: CapCase) -> tuple[Any, int]:
        summarise = limit_calls(case.summarise, 1, "summarise")
        kept = cap_summary(case.summary, summarise, case.cap)
        return Kept(kept, summarise.calls) if isinstance(kept, str) else kept  # type: ignore[attr-defined]
    answer.__name__ = name_of(cap_summary, "cap_summary")
    verdict = CHECK.grade(answer, CapCase.describe)
    if verdict.mistake == "raises" and "TypeError" in verdict.message and "max_summary_tokens=None" in verdict.message:
        return Feedback("5.1", WRONG, f"{verdict.message.rstrip('.')}. None means no cap.", "what must happen before "
                        "a comparison with max_summary_tokens, when it can be None?", "forgets None")
    return verdict


check_summary_cap = checker(grade_summary_cap, "cap_summary")
