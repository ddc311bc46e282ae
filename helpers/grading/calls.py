"""Exercise 1.1 (notebook 01): predict the summariser calls. The right answer is what ``SummaryMemory`` does
(``summary_schedule``); each named mistake is a formula a student writes by mistake."""
from __future__ import annotations

import functools
import math
import random
from collections.abc import Callable

from helpers.grading.runner import WRONG, Exercise, Feedback, Mistake, checker
from helpers.memory.schedule import summary_schedule

START = ("run schedule() above for a few settings and note after which turns the summariser runs: what pattern do "
         "those turn numbers follow?")
Setting = tuple[int, int, int]  # (total_turns, max_turns_before_summary, turns_to_keep_verbatim)

# the lesson's three settings, the notebook's "predict first" setting, and a gap that does not divide evenly
LESSON_SETTINGS: tuple[Setting, ...] = ((10, 4, 2), (10, 4, 3), (10, 6, 2), (20, 5, 2), (11, 4, 2), (1, 10, 8))


def cases(count: int = 60, seed: int = 3) -> list[Setting]:
    """The lesson's settings, every small one (1 to 8 turns, thresholds 2 to 5), and ``count`` random ones."""
    found = list(LESSON_SETTINGS)
    found += [(t, n, k) for t in range(1, 9) for n in range(2, 6) for k in range(1, n) if (t, n, k) not in found]
    rng = random.Random(seed)
    while len(found) < len(LESSON_SETTINGS) + 80 + count:
        threshold = rng.randint(2, 12)
        case = (rng.randint(1, 60), threshold, rng.randint(1, threshold - 1))
        if case not in found:
            found.append(case)
    return found


CASES = tuple(cases())


@functools.lru_cache(maxsize=512)
def memory_calls(turns: int, threshold: int, keep: int) -> int:
    """The summariser calls ``SummaryMemory`` makes in ``turns`` turns."""
    return summary_schedule(turns, threshold, keep).calls


def setting(case: Setting) -> str:
    """A setting as the verdicts name it."""
    turns, threshold, keep = case
    return f"{turns} turn{'s' if turns != 1 else ''}, summarise after {threshold}, keep {keep}"


MISTAKES = (  # never the right formula
    Mistake("rounds up", lambda t, n, k: 0 if t < n else 1 + math.ceil((t - n) / (n - k)),
            "your answer counts a call for turns that do not yet make a whole gap: a call comes only once enough "
            "new turns have arrived", "after the last call of the smallest case, how many new turns came, and how "
            "many does the next call need?"),
    Mistake("misses the first call", lambda t, n, k: 0 if t < n else (t - n) // (n - k),
            "your answer is one call short once the threshold is reached: the first call is missing",
            "when does the very first call come?"),
    Mistake("counts calls before the threshold", lambda t, n, k: 1 + (t - n) // (n - k),
            "your answer gives calls (or a negative number) for a conversation shorter than the threshold, where "
            "there is no call at all", "what does your formula give for 1 turn, summarising after 10?"),
    Mistake("one call every threshold turns", lambda t, n, k: t // n,
            "your answer counts one call every max_turns_before_summary turns, as if each call emptied the memory; "
            "it keeps turns_to_keep_verbatim turns", "after a call, how many turns does the memory still hold?"),
    Mistake("one call every gap from the start", lambda t, n, k: t // (n - k),
            "the gap between calls is right, but your first call comes too early",
            "when does the very first call come?"),
    Mistake("misses the call at the threshold", lambda t, n, k: 0 if t <= n else 1 + (t - n) // (n - k),
            "your answer makes no call when the conversation is exactly max_turns_before_summary turns long; the "
            "memory calls the summariser after that turn", "play the smallest case turn by turn"),
    Mistake("a gap of keep turns", lambda t, n, k: 0 if t < n else 1 + (t - n) // k,
            "your answer spaces the calls turns_to_keep_verbatim turns apart; that is how many turns stay, not how "
            "many new turns the next call needs", "after a call, how many new turns bring the memory back to the "
            "threshold?"),
)


def _not_an_int(case: Setting, _: tuple, answer: object) -> Feedback | None:
    """The verdict on an answer that is not a whole number (None if it is one)."""
    if isinstance(answer, int) and not isinstance(answer, bool):
        return None
    where = f"predicted_calls returned {answer!r} for {setting(case)}"
    if answer is None:
        why = f"{where}: did you forget `return`? A print shows the number but hands nothing back."
    elif isinstance(answer, float):
        why = f"{where}, a float: a number of calls is a whole number, an int (4, not 4.0 or 4.5)."
    else:
        why = f"{where}, not a number: return how many calls there are, a whole number such as 4."
    return Feedback(CHECK.number, WRONG, why, "print predicted_calls(10, 4, 2) and look at what comes back: the "
                    "lesson counts 4 calls", "not an int")


CHECK = Exercise("1.1", CASES, tuple, "write the body of predicted_calls", START, MISTAKES, (
    "play the smallest case turn by turn with schedule() above, and note after which turns the summariser runs; then "
    "see what your function does with the same numbers"), "settings", spread=True)


def grade_calls_formula(predicted_calls: Callable[[int, int, int], int]) -> Feedback:
    """Exercise 1.1: ``predicted_calls(total_turns, threshold, keep)`` against the memory's own schedule."""
    answers = CHECK.answers(predicted_calls, _not_an_int)
    return answers if isinstance(answers, Feedback) else CHECK.compare(
        answers, lambda case: memory_calls(*case), f"all {len(CASES)} settings give the memory's number of calls.",
        lambda case, mine: f"for {setting(case)}, you say {mine} and the memory makes {memory_calls(*case)}.")


check_calls_formula = checker(grade_calls_formula, "check_calls_formula", "predicted_calls")
