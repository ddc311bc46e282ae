"""The check cells of lesson 4's exercises (notebooks 04 and 05).

Each check runs the student's function on fixed cases (the lesson's settings and the edges where
wrong answers part from right ones) and on random ones, each call bounded in time and, where a model
would be called, in calls. It compares the answers with what the project's ``SummaryBufferMemory``
does, and when they differ it names the mistake it recognises (or, if none fits, the first message
where the answer and the memory part ways) in words a student knows from the notebook.
"""
from __future__ import annotations

import inspect
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from helpers.base.tokens import count_tokens
from helpers.base.bounded import limit_calls
from helpers.display.exercise import CORRECT, NOT_DONE, WRONG, Feedback, run_answer, show
from helpers.display.reference import lesson4_run_sizes
from helpers.lessons.data import lesson4
from helpers.memory.budget import BudgetResult, analyse_sizes

SECONDS = 2.0  # per call of the student's function: far more than a right answer needs


def message_sizes(user_messages: Sequence[str], reply_tokens: int) -> list[int]:
    """Token counts of the conversation, message by message: user message, reply, user message, ..."""
    return [size for text in user_messages for size in (count_tokens(text), reply_tokens)]


def _with_case(verdict: Feedback, where: str) -> Feedback:
    """A verdict on one case, saying which case it was (a crash or a hang on *which* input)."""
    if verdict.status != WRONG:
        return verdict
    return Feedback(verdict.exercise, verdict.status, f"{verdict.message.rstrip('.')} (on {where}).")


# =====================================================================================================
# Exercise 4.1: at which messages does the buffer overflow?
# =====================================================================================================
@dataclass(frozen=True)
class OverflowCase:
    """Messages of these token sizes (user, reply, user, ...), a budget, messages compressed per overflow."""

    sizes: tuple[int, ...]
    budget: int
    compress: int
    about: str

    def describe(self) -> str:
        shown = list(self.sizes) if len(self.sizes) <= 14 else "[" + ", ".join(map(str, self.sizes[:12])) + ", ...]"
        return f"{self.about}: sizes {shown}, budget {self.budget}, messages_to_compress {self.compress}"


def _fixed_overflow_cases() -> tuple[OverflowCase, ...]:
    turns = lesson4()["budget_analysis"]["user_messages"]
    lesson = message_sizes(turns, 100)
    statement = 480  # notebook 04's pasted bank statement, by o200k_base
    pasted = lesson[:10] + [statement, 100] + lesson[10:]
    return (
        OverflowCase(tuple(lesson), 600, 4, "the lesson's table at 600 tokens (replies of 100)"),
        OverflowCase(tuple(lesson), 1500, 4, "the lesson's table at 1,500 tokens: nothing overflows"),
        OverflowCase(tuple(message_sizes(turns, 150)), 300, 4, "the page's first try-it (replies of 150, 300 tokens)"),
        OverflowCase(tuple(lesson), 600, 2, "the page's second try-it (compress 2, 600 tokens)"),
        OverflowCase(tuple(lesson4_run_sizes()), 600, 4, "the lesson's run in notebook 05, at 600 tokens"),
        OverflowCase(tuple(pasted), 600, 4, "a pasted 480-token bank statement as turn 6, at 600 tokens"),
        OverflowCase((50, 50, 50, 50, 50, 50), 200, 2, "a message that brings the buffer exactly to the budget"),
        OverflowCase((20, 150, 20, 30, 20, 30), 100, 2, "a reply bigger than the budget with its own question"),
        OverflowCase((10, 10, 10, 10, 10, 10, 75, 10, 10, 10, 10, 10), 100, 2,
                     "a long question after short turns, compress 2"),
        OverflowCase((30, 40, 30, 40, 30), 120, 4, "a reply arriving while the buffer holds a whole turn and its question"),
        OverflowCase((10, 60, 10, 20, 10, 60, 10), 100, 4, "an overflow right after an exact fit"),
        OverflowCase((10, 10, 30, 30, 40, 10), 100, 2, "a fold that leaves the buffer and the message exactly at the budget"),
    )


def _random_overflow_cases(count: int = 40, seed: int = 41) -> tuple[OverflowCase, ...]:
    """Conversations of short, medium and long messages; a third of the budgets equal the size of a first
    few messages, so a message that fits the budget exactly comes up often."""
    rng = random.Random(seed)
    cases = []
    for index in range(count):
        sizes = [rng.choice((rng.randint(1, 30), rng.randint(40, 160), rng.randint(200, 450)))
                 for _ in range(rng.randint(4, 22))]
        compress = rng.choice((2, 4, 6))
        kind = index % 3
        budget = (sum(sizes[:rng.randint(2, len(sizes))]) if kind == 0 else
                  rng.randint(60, 400) if kind == 1 else rng.randint(300, 1200))
        cases.append(OverflowCase(tuple(sizes), budget, compress, f"random case {index + 1}"))
    return tuple(cases)


OVERFLOW_CASES: tuple[OverflowCase, ...] = _fixed_overflow_cases() + _random_overflow_cases()


def memory_overflows_at(case: OverflowCase) -> list[int]:
    """What ``SummaryBufferMemory`` does with the case: the numbers of the messages whose storing overflowed."""
    return list(analyse_sizes(case.sizes, case.budget, case.compress).overflows_at)


def overflow_rule(sizes: Sequence[int], budget: int, compress: int, *, extra_turns: bool = True,
                  count_empty: bool = False, strict: bool = False, strict_extra: bool = False, test_after: bool = False,
                  whole_turns: bool = True, per_turn: bool = False, first_number: int = 1,
                  turn_numbers: bool = False, remove: bool = True, include_new: bool = True,
                  fixed_compress: int | None = None) -> list[int]:
    """The memory's rule on a list of sizes, and (with a setting changed) each mistake the check knows.

    The defaults are the memory's rule (a test keeps them equal to ``SummaryBufferMemory``). Each
    keyword turns one part of it wrong, the way a student might write it.
    """
    buffer: list[int] = []
    found: list[int] = []
    compress = fixed_compress or compress
    for number, size in enumerate(sizes, start=1):
        if test_after:
            buffer.append(size)
        incoming = 0 if test_after or not include_new else size
        over = sum(buffer) + incoming >= budget + (0 if strict else 1)
        if over:
            whole = len(buffer) // 2 * 2 if whole_turns else len(buffer)
            n = min(compress, whole)
            folds = 1
            while extra_turns and n < whole and sum(buffer[n:]) + incoming >= budget + (0 if strict_extra else 1):
                n += 2
                folds += 1
            if n or count_empty:
                label = (number + 1) // 2 if turn_numbers else number - 1 + first_number
                found += [label] * (folds if per_turn and n else 1)
                if remove:
                    buffer = buffer[n:]
        if not test_after:
            buffer.append(size)
    return found


@dataclass(frozen=True)
class Mistake:
    """A wrong rule the check recognises: how it is computed, what it is, and the hint for it."""

    name: str
    settings: dict[str, Any]
    says: str


PAGE_STOPS = ("it stops after messages_to_compress messages; when that frees too little room for a long message, "
              "the memory folds more whole turns until the message fits, in the same overflow (one summariser "
              "call).")
PAGE_COUNTS_EMPTY = ("it counts an overflow when the buffer holds no whole turn to fold (only the question of the "
                     "reply that is arriving); the memory then folds nothing, calls no summariser, counts no "
                     "overflow, and stores the message over the budget.")
AT_THE_BUDGET = ("You overflow when the buffer plus the message *reaches* the budget. A message that brings the "
                 "buffer exactly to max_buffer_tokens still fits: overflow only when the sum would pass it (>, not >=).")
OVERFLOW_MISTAKES: tuple[Mistake, ...] = (
    Mistake("the page's analyse()", {"extra_turns": False, "count_empty": True},
            "Your rule is the page's analyse(), written for any sizes: right on every setting the page tries, "
            f"but it differs from the memory in two places. (1) {PAGE_STOPS[0].upper()}{PAGE_STOPS[1:]} "
            f"(2) {PAGE_COUNTS_EMPTY[0].upper()}{PAGE_COUNTS_EMPTY[1:]}"),
    Mistake("no extra turns", {"extra_turns": False},
            f"Your rule is the page's: {PAGE_STOPS}"),
    Mistake("counts a fold of nothing", {"count_empty": True},
            f"Your rule does what the page's analyse() does here: {PAGE_COUNTS_EMPTY}"),
    Mistake(">= instead of >", {"strict": True, "strict_extra": True}, AT_THE_BUDGET),
    Mistake(">= in the overflow test", {"strict": True}, AT_THE_BUDGET),
    Mistake(">= while folding more", {"strict_extra": True},
            "You fold more turns while the buffer plus the message *reaches* the budget. Once it equals "
            "max_buffer_tokens the message fits, so stop folding: fold more only while the sum would pass it "
            "(>, not >=)."),
    Mistake("test after storing", {"test_after": True},
            "You store the message first and test afterwards. The memory tests *before* storing: would the buffer "
            "plus this message pass the budget? If so it folds the oldest turns, then stores the message."),
    Mistake("test without the new message", {"include_new": False},
            "You test the buffer alone. The test is whether the buffer *plus the message about to be stored* "
            "would pass the budget."),
    Mistake("not whole turns", {"whole_turns": False},
            "You fold messages one by one, so a question can leave without its reply. When a reply arrives, its "
            "question is the last message in the buffer and must stay: fold at most len(buffer) // 2 * 2 "
            "messages (whole turns only)."),
    Mistake("each extra turn counted", {"per_turn": True},
            "You count each extra turn folded as another overflow. All the turns folded before one message are "
            "one overflow: one summariser call."),
    Mistake("numbered from 0", {"first_number": 0},
            "Your numbers are one lower than the memory's: number the messages from 1 (the first user message "
            "is message 1, its reply message 2), as enumerate(sizes, start=1) does."),
    Mistake("turn numbers", {"turn_numbers": True},
            "You give turn numbers; the exercise asks for message numbers: reply 3 is message 6, question 4 is "
            "message 7."),
    Mistake("folded messages kept", {"remove": False},
            "You count the overflow but keep the folded messages in the buffer. They leave it (they are in the "
            "summary now): buffer = buffer[n:]."),
    Mistake("compress ignored", {"fixed_compress": 4},
            "You always fold 4 messages: use the messages_to_compress argument (the page's second try-it sets it "
            "to 2)."),
)


def _first_difference(case: OverflowCase, answer: list[int], expected: list[int]) -> str:
    """What the memory does at the first message where the answer and the memory part ways."""
    number = min(set(answer) ^ set(expected)) if set(answer) != set(expected) else None
    if number is None:  # same numbers, different list: duplicates or order
        return (f"the memory overflows at messages {expected}, your function returned {answer}: each message that "
                "overflows appears once, in order")
    steps = analyse_sizes(case.sizes, case.budget, case.compress).steps
    step = steps[number - 1]
    before = step.would_reach - step.message_tokens
    what = ("user message" if step.role == "user" else "reply") + f" {step.turn}"
    if step.overflow:
        happened = (f"{before} + {step.message_tokens} = {step.would_reach} > {case.budget}, so it overflows: the "
                    f"memory folds the oldest {step.messages_folded} messages, then stores it")
    elif step.would_reach > case.budget:
        happened = (f"{before} + {step.message_tokens} = {step.would_reach} > {case.budget}, but the buffer holds no "
                    "whole turn to fold (only this reply's question), so nothing is folded and it is no overflow")
    else:
        happened = f"{before} + {step.message_tokens} = {step.would_reach} <= {case.budget}: it fits, no overflow"
    yours = "an overflow there" if number in answer else "none there"
    return (f"message {number} ({what}, {step.message_tokens} tokens) meets a buffer of {before} tokens: {happened}; "
            f"your answer has {yours}")


def _as_numbers(answer: Any) -> list[int] | str:
    """The answer as a list of ints, or what is wrong with its type."""
    if isinstance(answer, bool) or isinstance(answer, int):
        return (f"your function returned {answer!r}, a number; return the *list* of message numbers that overflow "
                "(the lesson's run gives [6, 8, 10]), not how many there are")
    if answer is None:
        return "your function returned None: end it with return and the list of message numbers"
    if not isinstance(answer, (list, tuple)) or not all(isinstance(n, int) and not isinstance(n, bool) for n in answer):
        return f"your function returned {answer!r}; return a list of whole numbers such as [6, 8, 10]"
    return list(answer)


def check_overflows_at(overflows_at: Callable[[list[int], int, int], list[int]]) -> Feedback:
    """Exercise 4.1: ``overflows_at(sizes, budget, messages_to_compress)`` must give the message numbers
    (1 = the first) whose storing makes ``SummaryBufferMemory`` overflow. Prints the verdict."""
    answers: list[list[int]] = []
    for case in OVERFLOW_CASES:
        result = run_answer("4.1", overflows_at, list(case.sizes), case.budget, case.compress, seconds=SECONDS,
                            todo="write the body of overflows_at")
        if isinstance(result, Feedback):
            return show(_with_case(result, case.describe()))
        numbers = _as_numbers(result)
        if isinstance(numbers, str):
            return show(Feedback("4.1", WRONG, f"{numbers} (on {case.describe()})."))
        answers.append(numbers)
    expected = [memory_overflows_at(case) for case in OVERFLOW_CASES]
    wrong = [i for i, (a, e) in enumerate(zip(answers, expected)) if a != e]
    if not wrong:
        return show(Feedback("4.1", CORRECT, (
            f"all {len(OVERFLOW_CASES)} cases give the memory's overflows: the lesson's table, both try-its, the "
            "lesson's run (messages 6, 8 and 10: storing replies 3, 4 and 5), a pasted document, the exact fit, "
            "a reply too big to fit, and random conversations.")))
    first = OVERFLOW_CASES[wrong[0]]
    example = (f"For example, {first.describe()}: the memory overflows at {expected[wrong[0]]}, yours at "
               f"{answers[wrong[0]]}.")
    head = f"{len(wrong)} of {len(OVERFLOW_CASES)} cases differ."
    for mistake in OVERFLOW_MISTAKES:
        if all(overflow_rule(case.sizes, case.budget, case.compress, **mistake.settings) == answer
               for case, answer in zip(OVERFLOW_CASES, answers)):
            return show(Feedback("4.1", WRONG, f"{head} {mistake.says} {example}"))
    where = _first_difference(first, answers[wrong[0]], expected[wrong[0]])
    return show(Feedback("4.1", WRONG, (
        f"{head} {example} Where it starts: {where}. The rule, in order: before storing a message, would the "
        "buffer plus it pass the budget? Then fold the oldest messages_to_compress messages, whole turns only, "
        "and more whole turns while it still would not fit: one overflow. Then store it.")))


# =====================================================================================================
# Exercise 5.1: a cap on the summary
# =====================================================================================================
FACTS = (
    "Chiru earns ₹1,20,000 a month and spends ₹60,000.", "He is 32 and risk-averse.",
    "He holds an FD of ₹50,000 maturing in 3 months.", "His goal is to retire by 55 with a comfortable corpus.",
    "He asked how PPF and NPS differ for retirement.", "FinCoach suggested ₹25,000 a month into PPF and NPS.",
    "He has no other investments.", "He wants to keep ₹1,80,000 as an emergency fund.",
    "He pays ₹18,500 rent and ₹4,200 for utilities.", "He asked about ELSS under the old tax regime.",
)
LONG_SUMMARY = " ".join(FACTS[:4])


def _sentences(text: str) -> list[str]:
    return re.findall(r"[^.!?]+[.!?]", text)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:36] + "...'"


class WrongCall(ValueError):
    """The student called the summariser with arguments a shortening call does not take."""


def _summariser_shape(messages: Any = None, existing_summary: Any = None) -> None:
    """The parameters of a summariser (the memory's): the new messages, then the summary so far."""


def _shortener(name: str, shorten: Callable[[str], str]) -> Callable[..., str]:
    """A summariser for the check: shortens ``existing_summary`` when called as ``summarise([], summary)``."""
    def summarise(*args: Any, **kwargs: Any) -> str:
        try:  # bound by hand: a TypeError of Python's own would name this function's insides
            bound = inspect.signature(_summariser_shape).bind(*args, **kwargs)
        except TypeError:
            given = [_short(a) for a in args] + [f"{key}={_short(value)}" for key, value in kwargs.items()]
            raise WrongCall(f"summarise was called as summarise({', '.join(given)}), but it takes the new messages and "
                            "the summary so far, summarise(messages, existing_summary): call summarise([], summary)")
        messages, existing_summary = bound.args + (None,) * (2 - len(bound.args))
        if messages != [] or not isinstance(existing_summary, str) or not existing_summary:
            raise WrongCall(
                f"summarise was called with messages={_short(messages)} and existing_summary={_short(existing_summary)}. To "
                "shorten a summary there are no new messages: call summarise([], summary)")
        return shorten(existing_summary)
    summarise.__name__ = name
    return summarise


def first_words(n: int) -> Callable[..., str]:
    return _shortener(f"keeps the first {n} words", lambda text: " ".join(text.split()[:n]))


def drops_last_sentence() -> Callable[..., str]:
    return _shortener("drops the last sentence", lambda text: " ".join(_sentences(text)[:-1]) or text)


def comes_back_longer() -> Callable[..., str]:
    return _shortener("comes back longer", lambda text: f"{text} In short: all of the above still applies.")


# LONG_SUMMARY in Hindi: fewer words and fewer characters, more o200k_base tokens (a test checks all three)
HINDI_SUMMARY = ("चिरु की मासिक आय ₹1,20,000 और खर्च ₹60,000 है। वह 32 वर्ष का और जोखिम-विमुख है। उसकी ₹50,000 "
                 "की FD तीन महीने में परिपक्व होगी। लक्ष्य: 55 तक सेवानिवृत्ति।")


def answers_in_hindi() -> Callable[..., str]:
    """A model asked to summarise an Indian user's chat may answer in Hindi: shorter to the eye, more tokens."""
    return _shortener("answers in Hindi", lambda text: HINDI_SUMMARY)


def comes_back_empty() -> Callable[..., str]:
    return _shortener("comes back empty", lambda text: "")


@dataclass(frozen=True)
class CapCase:
    """A summary, the summariser the check hands over, and the cap."""

    summary: str
    summarise: Callable[..., str]
    cap: int | None
    about: str

    def describe(self) -> str:
        cap = "None (no cap)" if self.cap is None else self.cap
        return (f"{self.about}: a {count_tokens(self.summary)}-token summary of {len(self.summary.split())} words, "
                f"max_summary_tokens={cap}, a summariser that {self.summarise.__name__}")


def reference_cap(summary: str, summarise: Callable[[list, str | None], str], max_summary_tokens: int | None) -> str:
    """What ``SummaryBufferMemory(max_summary_tokens=...)`` does with a new summary: over the cap, ask
    the summariser once for a shorter one and keep whichever has fewer tokens (never an empty one)."""
    if max_summary_tokens is None or count_tokens(summary) <= max_summary_tokens:
        return summary
    shorter = summarise([], summary).strip()
    return shorter if shorter and count_tokens(shorter) < count_tokens(summary) else summary


def _fixed_cap_cases() -> tuple[CapCase, ...]:
    tokens, words = count_tokens(LONG_SUMMARY), len(LONG_SUMMARY.split())
    return (
        CapCase(LONG_SUMMARY, first_words(12), tokens + 20, "a summary under the cap"),
        CapCase(LONG_SUMMARY, first_words(12), words - 4, "a summary over the cap"),
        CapCase(LONG_SUMMARY, first_words(12), tokens, "a summary of exactly max_summary_tokens tokens"),
        CapCase(LONG_SUMMARY, first_words(12), (words + tokens) // 2,
                "a summary under the cap in words but over it in tokens (₹ amounts are several tokens each)"),
        CapCase(LONG_SUMMARY, comes_back_longer(), words - 4, "a 'shorter' summary that came back longer"),
        CapCase(LONG_SUMMARY, comes_back_empty(), words - 4, "a summariser that returns nothing"),
        CapCase(LONG_SUMMARY, answers_in_hindi(), words - 4,
                "a 'shorter' summary in fewer words and characters, but more tokens"),
        CapCase(LONG_SUMMARY, drops_last_sentence(), None, "no cap at all"),
        CapCase(LONG_SUMMARY, drops_last_sentence(), 10, "a cap even the shorter summary cannot meet"),
    )


def _random_cap_cases(count: int = 30, seed: int = 51) -> tuple[CapCase, ...]:
    rng = random.Random(seed)
    cases = []
    for index in range(count):
        summary = " ".join(rng.sample(FACTS, rng.randint(2, len(FACTS))))
        tokens = count_tokens(summary)
        cap = rng.choice((None, tokens, rng.randint(5, tokens - 1), rng.randint(tokens + 1, tokens + 60)))
        summarise = rng.choice((first_words(rng.randint(4, 30)), drops_last_sentence(), comes_back_longer(),
                                comes_back_empty()))
        cases.append(CapCase(summary, summarise, cap, f"random case {index + 1}"))
    return tuple(cases)


CAP_CASES: tuple[CapCase, ...] = _fixed_cap_cases() + _random_cap_cases()


def _cap_verdict(case: CapCase, answer: Any, calls: int) -> str | None:
    """What is wrong with one answer (None: right), in the words of the mistake it shows."""
    tokens = count_tokens(case.summary)
    within = case.cap is None or tokens <= case.cap
    if not isinstance(answer, str):
        return (f"cap_summary returned {answer!r}; it must return the summary to keep, a str" if answer is not None
                else "cap_summary returned None: end it with return and the summary to keep")
    expected = reference_cap(case.summary, case.summarise, case.cap)
    if within and calls:
        if case.cap == tokens:
            return (f"the summary has exactly {tokens} tokens, the cap is {case.cap}: that is within the cap (<=, "
                    "not <), so it is kept as it is, with no summariser call")
        if case.cap is None:
            return "max_summary_tokens is None (no cap), yet summarise was called: with no cap there is nothing to do"
        return (f"the summary has {tokens} tokens, within the cap of {case.cap}, yet summarise was called: a summary "
                "within max_summary_tokens is kept as it is and costs no model call")
    if not within and not calls:
        if answer != case.summary:
            return ("summarise was never called, yet the summary changed: shorten it with one call, "
                    "summarise([], summary), rather than cutting the text yourself (a cut can stop mid-sentence "
                    "or drop a figure)")
        if len(case.summary.split()) <= (case.cap or 0):
            return (f"the summary has {len(case.summary.split())} words but {tokens} tokens, over the cap of "
                    f"{case.cap}: count tokens with count(summary), not words (a ₹ amount is one word and "
                    "several tokens)")
        return f"the summary has {tokens} tokens, over the cap of {case.cap}, but summarise was not called"
    if answer == expected:
        return None
    shorter = case.summarise([], case.summary).strip()
    if not shorter and answer == "":
        return ("the summariser returned an empty text and yours kept it: an empty summary would lose every earlier "
                "turn. Keep the old summary when the new one is empty")
    if shorter and count_tokens(shorter) >= tokens and answer.strip() == shorter:
        looks_shorter = len(shorter) < len(case.summary) and len(shorter.split()) < len(case.summary.split())
        return (f"the 'shorter' summary came back with {count_tokens(shorter)} tokens, more than the {tokens} it "
                "replaces, and yours kept it" + (
                    " (it has fewer characters and words, but more tokens: compare count(text), not len)"
                    if looks_shorter else "") + ": keep whichever of the two has fewer tokens")
    if answer == case.summary:
        return (f"the summariser returned a shorter summary ({count_tokens(shorter)} tokens against {tokens}), "
                "and yours kept the long one: keep whichever of the two has fewer tokens")
    return f"yours returned {answer[:60]!r}..., the memory keeps {expected[:60]!r}..."


def _wrong_call_returned(cap_summary: Callable[..., Any]) -> Callable[..., Any]:
    """``cap_summary`` returning the ``WrongCall`` its summariser raised, so the check says what was wrong with
    the call in its own words (not as an error named after the check's code)."""
    def attempt(*args: Any) -> Any:
        try:
            return cap_summary(*args)
        except WrongCall as wrong:
            return wrong
    attempt.__name__ = getattr(cap_summary, "__name__", "cap_summary")
    return attempt


def check_summary_cap(cap_summary: Callable[[str, Callable, int | None], str]) -> Feedback:
    """Exercise 5.1: ``cap_summary(summary, summarise, max_summary_tokens)`` must keep the summary the
    hardened class keeps, calling ``summarise`` once at most, only when it is over the cap. Prints the verdict."""
    wrong: list[tuple[CapCase, str]] = []
    for case in CAP_CASES:
        summarise = limit_calls(case.summarise, 1, "summarise")
        result = run_answer("5.1", _wrong_call_returned(cap_summary), case.summary, summarise, case.cap,
                            seconds=SECONDS, todo="write the body of cap_summary")
        if isinstance(result, WrongCall):
            return show(Feedback("5.1", WRONG, f"{result} (on {case.describe()})."))
        if isinstance(result, Feedback):
            if result.status == NOT_DONE:
                return show(result)
            if summarise.calls > 1:
                return show(Feedback("5.1", WRONG, (
                    f"summarise was called a second time, so the check stopped it (on {case.describe()}). Each "
                    "call is a model call; a loop that summarises until the summary fits can go on forever when the "
                    "summariser cannot get under the cap. Call summarise([], summary) once, keep it in a variable, "
                    "keep whichever text has fewer tokens, and stop.")))
            if case.cap is None and "TypeError" in result.message:
                return show(Feedback("5.1", WRONG, (
                    f"{result.message.rstrip('.')} with max_summary_tokens=None. None means no cap: return the "
                    "summary as it is (test `max_summary_tokens is None` first).")))
            return show(_with_case(result, case.describe()))
        problem = _cap_verdict(case, result, summarise.calls)
        if problem is not None:
            wrong.append((case, problem))
    if not wrong:
        return show(Feedback("5.1", CORRECT, (
            f"all {len(CAP_CASES)} cases keep what the memory's max_summary_tokens keeps: a summary within the cap "
            "untouched (no call), one call over it, the shorter text kept, never an empty or a longer one.")))
    case, problem = wrong[0]
    return show(Feedback("5.1", WRONG, f"{len(wrong)} of {len(CAP_CASES)} cases differ. On {case.describe()}: "
                                       f"{problem}."))
