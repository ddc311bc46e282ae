"""The check cells of lesson 4's exercises (notebooks 04 and 05): run the student's function on fixed
cases and compare it with what the project's ``SummaryBufferMemory`` does, then print the verdict.

A function whose body is still ``return ...`` gives "not done yet"; a function that raises or
disagrees gives "not yet" with the first cases it got wrong.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from helpers.base.tokens import count_tokens
from helpers.display.exercise import WRONG, Feedback, feedback
from helpers.memory.budget import analyse_budget

# (reply tokens, max_buffer_tokens, messages compressed per overflow): the lesson's table, both of its
# "try it" settings, and one-token replies ("ok") at 43 tokens, where a folded turn can free less room
# than the next user message needs, so a second turn must go in the same overflow.
OVERFLOW_CASES: tuple[tuple[int, int, int], ...] = (
    (100, 300, 4), (100, 600, 4), (100, 800, 4), (100, 1500, 4), (150, 300, 4), (150, 1500, 4),
    (100, 600, 2), (1, 43, 2))


def message_sizes(user_messages: Sequence[str], reply_tokens: int) -> list[int]:
    """Token counts of the conversation, message by message: user message, reply, user message, ..."""
    sizes: list[int] = []
    for text in user_messages:
        sizes += [count_tokens(text), reply_tokens]
    return sizes


def _raised(exercise: str, error: Exception, hint: str) -> Feedback:
    verdict = Feedback(exercise, WRONG, f"your function raised {type(error).__name__}: {error}. {hint}")
    print(verdict)
    return verdict


def check_overflow_rule(count_overflows: Callable[[list[int], int, int], int],
                        user_messages: Sequence[str]) -> Feedback:
    """Exercise 4.1: ``count_overflows(sizes, budget, compress)`` must count the overflows the memory makes."""
    hint = ("Check the order: test whether the buffer plus the new message would pass the budget *before* "
            "adding it; fold whole turns only (never a question without its reply); fold more turns while "
            "the message still does not fit.")
    got, expected = [], []
    for reply, budget, compress in OVERFLOW_CASES:
        try:
            answer = count_overflows(message_sizes(user_messages, reply), budget, compress)
        except Exception as error:  # a student's code may raise anything; say what it was
            return _raised("4.1", error, hint)
        if answer is Ellipsis:
            return feedback("4.1", ..., None, right="", hint=hint, todo="write the body of count_overflows")
        got.append(answer)
        expected.append(analyse_budget(user_messages, budget, reply, compress).overflows)

    def explain(answers: list[int]) -> str:
        wrong = [f"replies {r}, budget {b}, compress {c}: yours {a}, the memory's {e}"
                 for (r, b, c), a, e in zip(OVERFLOW_CASES, answers, expected) if a != e]
        return f"{len(wrong)} of {len(OVERFLOW_CASES)} cases differ ({'; '.join(wrong[:3])})"

    return feedback("4.1", got, expected, right=f"all {len(OVERFLOW_CASES)} settings give the memory's overflows, "
                    "the lesson's table and both of its 'try it' figures included.", hint=hint, explain=explain)


def reference_cap(summary: str, summarise: Callable[[list, str | None], str], max_summary_tokens: int | None) -> str:
    """What ``SummaryBufferMemory(max_summary_tokens=...)`` does with a new summary: over the cap, ask
    the summariser once for a shorter one and keep whichever has fewer tokens."""
    if max_summary_tokens is None or count_tokens(summary) <= max_summary_tokens:
        return summary
    shorter = summarise([], summary).strip()
    return shorter if shorter and count_tokens(shorter) < count_tokens(summary) else summary


LONG_SUMMARY = ("Chiru earns ₹1,20,000 a month and spends ₹60,000. He is 32, risk-averse, and holds an FD of "
                "₹50,000 maturing in 3 months. His goal is to retire by 55 with a comfortable corpus.")


def _first_words(n: int) -> Callable[[list, str | None], str]:
    def shorten(messages: list, existing: str | None) -> str:
        return " ".join((existing or "").split()[:n])
    return shorten


def _longer(messages: list, existing: str | None) -> str:
    return f"{existing} In short: see above."


# (summary, summariser used to shorten, cap, what the case is about)
CAP_CASES = (
    (LONG_SUMMARY, _first_words(12), 100, "a summary under the cap is kept as it is"),
    (LONG_SUMMARY, _first_words(12), 30, "a summary over the cap is shortened once"),
    (LONG_SUMMARY, _longer, 30, "a 'shorter' summary that came back longer is not used"),
    (LONG_SUMMARY, _first_words(12), None, "no cap: nothing to do"),
)


def check_summary_cap(cap_summary: Callable[[str, Callable, int | None], str]) -> Feedback:
    """Exercise 5.1: ``cap_summary(summary, summarise, max_summary_tokens)`` must do what the hardened class does."""
    hint = ("Count the summary with count_tokens; only when it is over max_summary_tokens call "
            "summarise([], summary) once, and keep the new text only if it has fewer tokens.")
    got, expected = [], []
    for summary, shorten, cap, _ in CAP_CASES:
        try:
            answer = cap_summary(summary, shorten, cap)
        except Exception as error:  # a student's code may raise anything; say what it was
            return _raised("5.1", error, hint)
        if answer is Ellipsis:
            return feedback("5.1", ..., None, right="", hint=hint, todo="write the body of cap_summary")
        got.append(answer)
        expected.append(reference_cap(summary, shorten, cap))

    def explain(answers: list[str]) -> str:
        wrong = [why for (_, _, _, why), a, e in zip(CAP_CASES, answers, expected) if a != e]
        return f"{len(wrong)} of {len(CAP_CASES)} cases differ: {'; '.join(wrong)}"

    return feedback("5.1", got, expected, right=f"all {len(CAP_CASES)} cases match the hardened class's "
                    "max_summary_tokens.", hint=hint, explain=explain)
