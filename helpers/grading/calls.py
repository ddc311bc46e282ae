"""Exercise 1.1 (notebook 01): predict the summariser calls. The right answer is what ``SummaryMemory`` does; each
named mistake is a formula a student writes by mistake. Any whole number passes (a NumPy integer too)."""
from __future__ import annotations

import math
import numbers
import random
from collections.abc import Callable

from helpers.grading.runner import Exercise, Feedback, Mistake, checker, drawn
from helpers.memory.schedule import summary_schedule

Setting = tuple[int, int, int]  # (total_turns, max_turns_before_summary, turns_to_keep_verbatim)


def _draw(rng: random.Random, index: int) -> Setting:
    threshold = rng.randint(2, 12)
    return rng.randint(1, 60), threshold, rng.randint(1, threshold - 1)


_LESSON = [(10, 4, 2), (10, 4, 3), (10, 6, 2), (20, 5, 2), (11, 4, 2), (1, 10, 8)]
# the lesson's settings, every small one (1 to 8 turns, thresholds 2 to 5), and 60 random ones
CASES = drawn(_LESSON + [(t, n, k) for t in range(1, 9) for n in range(2, 6) for k in range(1, n)
                         if (t, n, k) not in _LESSON], 60, 3, _draw)


def memory_calls(case: Setting) -> int:
    """The summariser calls ``SummaryMemory`` makes in ``case``'s turns (its schedule runs the class itself)."""
    return summary_schedule(*case).calls


def setting(case: Setting) -> str:
    return f"{case[0]} turn{'s' if case[0] != 1 else ''}, summarise after {case[1]}, keep {case[2]}"


_FIRST = "when does the very first call come?"
MISTAKES = tuple(Mistake(name, lambda case, rule=rule: rule(*case), says, hint) for name, rule, says, hint in (
    ("rounds up", lambda t, n, k: 0 if t < n else 1 + math.ceil((t - n) / (n - k)), "your answer counts a call for "
     "turns that do not yet make a whole gap: a call comes only once enough new turns have arrived", "after the "
     "last call of the smallest case, how many new turns came, and how many does the next call need?"),
    ("misses the first call", lambda t, n, k: 0 if t < n else (t - n) // (n - k),
     "your answer is one call short once the threshold is reached: the first call is missing", _FIRST),
    ("counts calls before the threshold", lambda t, n, k: 1 + (t - n) // (n - k), "your answer gives calls (or a "
     "negative number) for a conversation shorter than the threshold, where there is no call at all",
     "what does your formula give for 1 turn, summarising after 10?"),
    ("one call every threshold turns", lambda t, n, k: t // n, "your answer counts one call every "
     "max_turns_before_summary turns, as if each call emptied the memory; it keeps turns_to_keep_verbatim turns",
     "after a call, how many turns does the memory still hold?"),
    ("one call every gap from the start", lambda t, n, k: t // (n - k),
     "the gap between calls is right, but your first call comes too early", _FIRST),
    ("misses the call at the threshold", lambda t, n, k: 0 if t <= n else 1 + (t - n) // (n - k), "your answer "
     "makes no call when the conversation is exactly max_turns_before_summary turns long; the memory calls the "
     "summariser after that turn", "play the smallest case turn by turn"),
    ("a gap of keep turns", lambda t, n, k: 0 if t < n else 1 + (t - n) // k, "your answer spaces the calls "
     "turns_to_keep_verbatim turns apart; that is how many turns stay, not how many new turns the next call needs",
     "after a call, how many new turns bring the memory back to the threshold?"),
))  # never the right formula

CHECK = Exercise(
    "1.1", CASES, tuple, (memory_calls,), "write the body of predicted_calls", "run schedule() above for a few "
    "settings and note after which turns the summariser runs: what pattern do those turn numbers follow?", MISTAKES,
    "play the smallest case turn by turn with schedule() above, and note after which turns the summariser runs; then "
    "see what your function does with the same numbers", "settings", wanted=(
        lambda n: isinstance(n, numbers.Integral) and not isinstance(n, bool), "a whole number (an int: 4, not 4.0)"),
    example=lambda case, mine: f"for {setting(case)}, you say {mine} and the memory makes {memory_calls(case)}.",
    key=lambda case: case, correct=lambda _: f"all {len(CASES)} settings give the memory's number of calls.")


def grade_calls_formula(predicted_calls: Callable[[int, int, int], int]) -> Feedback:
    """Exercise 1.1: ``predicted_calls(total_turns, threshold, keep)`` against the memory's own calls."""
    return CHECK.grade(predicted_calls, setting)


check_calls_formula = checker(grade_calls_formula, "predicted_calls")
