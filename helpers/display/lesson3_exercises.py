"""The check cells of lesson 3's exercises (notebooks 01 to 03).

Each check runs the student's code on fixed cases (the lesson's settings and the edge cases where wrong
answers differ) and on random ones (a fixed seed, so a verdict is the same on every run), each case with a
bound on time and on calls (``helpers.display.exercise.run_answer``). The right answers come from the
project's own classes. When an answer is wrong the check says which mistake it sees, if the answer behaves
exactly like a known one (rounding up, keeping messages instead of turns, looking for rule words anywhere),
and otherwise shows the first case it got wrong.
"""
from __future__ import annotations

import contextlib
import io
import math
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from helpers.base.bounded import limit_calls
from helpers.display.exercise import CORRECT, WRONG, Feedback, run_answer, show
from helpers.lessons.data import published_run
from helpers.memory.schedule import summary_schedule
from helpers.memory.stubs import turn_range_stub
from helpers.memory.summary import SummaryMemory


def _quietly(function: Callable[..., Any], name: str | None = None) -> Callable[..., Any]:
    """``function`` with its printing swallowed (a check runs it dozens of times), under the name a verdict uses."""
    def quiet(*args: Any, **kwargs: Any) -> Any:
        with contextlib.redirect_stdout(io.StringIO()):
            return function(*args, **kwargs)
    quiet.__name__ = name or getattr(function, "__name__", "function")
    return quiet


def _turns(n: int) -> str:
    return f"{n} turn{'s' if n != 1 else ''}"


def _first_matching(mistakes: dict[str, Callable[..., Any]], answers: Sequence[Any],
                    cases: Sequence[Any]) -> str | None:
    """The name of the known mistake that gives exactly ``answers`` on every case, if one does."""
    for name, mistake in mistakes.items():
        if all(mistake(*case) == answer for case, answer in zip(cases, answers)):
            return name
    return None


# ----- 1.1: predict the summariser calls (notebook 01) -----------------------------------------------

# (total_turns, max_turns_before_summary, turns_to_keep_verbatim): the lesson's three settings, the
# notebook's "predict first" setting, and cases where the usual slips differ: a gap that does not divide
# evenly (11, 4, 2), fewer turns than the threshold (3, 4, 2), fewer turns than are kept (1, 10, 8).
FIXED_SCHEDULES = ((10, 4, 2), (10, 4, 3), (10, 6, 2), (20, 5, 2), (11, 4, 2), (3, 4, 2), (1, 10, 8), (9, 5, 1))


def schedule_cases(count: int = 30, seed: int = 3) -> list[tuple[int, int, int]]:
    """The fixed settings and ``count`` random ones (1 to 40 turns, thresholds 2 to 12)."""
    rng = random.Random(seed)
    cases = list(FIXED_SCHEDULES)
    while len(cases) < len(FIXED_SCHEDULES) + count:
        threshold = rng.randint(2, 12)
        case = (rng.randint(1, 40), threshold, rng.randint(1, threshold - 1))
        if case not in cases:
            cases.append(case)
    return cases


def _calls_rounded_up(turns: int, threshold: int, keep: int) -> int:
    return 0 if turns < threshold else 1 + math.ceil((turns - threshold) / (threshold - keep))


CALL_MISTAKES: dict[str, Callable[[int, int, int], Any]] = {
    "rounds up": _calls_rounded_up,
    "misses the first call": lambda t, n, k: 0 if t < n else (t - n) // (n - k),
    "counts a call before the threshold": lambda t, n, k: 1 + (t - n) // (n - k),
    "one call every threshold turns": lambda t, n, k: t // n,
    "one call every threshold - keep turns": lambda t, n, k: t // (n - k),
}
CALL_HINTS = {
    "rounds up": "you round up: a call comes only once a whole gap of threshold - keep new turns has arrived, "
                 "so a part of a gap makes no call. Round down, with //",
    "misses the first call": "you are one call short: you count the calls after the first one. The first comes "
                             "after turn `threshold`; add 1 for it",
    "counts a call before the threshold": "with fewer turns than `threshold` there is no call at all, but your "
                                          "formula gives a number for them too (try 1 turn, summarise after 10, "
                                          "keep 8). Return 0 when total_turns < max_turns_before_summary",
    "one call every threshold turns": "you count one call every `threshold` turns. After a call the memory still "
                                      "holds `keep` turns, so the next call comes only threshold - keep turns "
                                      "later",
    "one call every threshold - keep turns": "the gap is right, but the first call needs `threshold` turns, not "
                                             "threshold - keep: start counting after turn `threshold`",
}


def _not_a_number(case: tuple[int, int, int], answer: Any) -> str:
    """What to say when predicted_calls hands back something other than a number (None, a text, a list)."""
    turns, threshold, keep = case
    where = f"predicted_calls returned {answer!r} for {_turns(turns)}, summarise after {threshold}, keep {keep}"
    if answer is None:
        return (f"{where}: did you forget `return`? A print shows the number but hands nothing back; end "
                "the function with return and the number of calls.")
    return f"{where}, not a number: return how many calls there are, a whole number such as 4."


def check_calls_formula(predicted_calls: Callable[[int, int, int], int]) -> Feedback:
    """Exercise 1.1: ``predicted_calls(total_turns, threshold, keep)`` against the memory's own schedule."""
    cases = schedule_cases()
    answers = []
    for case in cases:
        answer = run_answer("1.1", _quietly(predicted_calls), *case, todo="write the body of predicted_calls")
        if isinstance(answer, Feedback):
            return show(answer)
        if isinstance(answer, bool) or not isinstance(answer, (int, float)):
            return show(Feedback("1.1", WRONG, _not_a_number(case, answer)))
        answers.append(answer)
    expected = [summary_schedule(*case).calls for case in cases]
    if answers == expected:
        return show(Feedback("1.1", CORRECT, f"all {len(cases)} settings ({len(FIXED_SCHEDULES)} fixed, the rest "
                                             "random) give the memory's number of calls."))
    wrong = [(case, mine, right) for case, mine, right in zip(cases, answers, expected) if mine != right]
    (turns, threshold, keep), mine, right = wrong[0]
    example = (f"for {_turns(turns)}, summarise after {threshold}, keep {keep}, you say {mine!r} and the memory "
               f"makes {right}")
    if any(isinstance(value, float) and not value.is_integer() for value in answers):
        return show(Feedback("1.1", WRONG, f"{example}: a number of calls is a whole number; use // (floor "
                                           "division), not /."))
    mistake = _first_matching(CALL_MISTAKES, answers, cases)
    if mistake:
        return show(Feedback("1.1", WRONG, f"{example}: {CALL_HINTS[mistake]}."))
    return show(Feedback("1.1", WRONG, (
        f"{len(wrong)} of {len(cases)} settings differ; {example}. Count it by hand: nothing until turn "
        "`threshold`, a call after it, then one call every threshold - keep turns.")))


# ----- 2.1: a window with summary memory's trigger (notebook 02) --------------------------------------

FIXED_WINDOWS = ((4, 2, 8), (4, 3, 8), (6, 2, 10), (3, 1, 7), (5, 4, 9))  # (threshold, keep, turns)


def window_cases(count: int = 6, seed: int = 5) -> list[tuple[int, int, int]]:
    """The fixed settings and ``count`` random ones (thresholds 2 to 8, 1 to 14 turns)."""
    rng = random.Random(seed)
    cases = list(FIXED_WINDOWS)
    for _ in range(count):
        threshold = rng.randint(2, 8)
        cases.append((threshold, rng.randint(1, threshold - 1), rng.randint(1, 14)))
    return cases


def _message(role: str, turn: int) -> str:
    return f"question {turn}" if role == "user" else f"reply {turn}"


def _describe(messages: Sequence[dict[str, str]]) -> str:
    """A request as a reader checks it: ``system, question 3, reply 3, question 4``."""
    return ", ".join(m["content"] if m["role"] != "system" else "system prompt" for m in messages)


@dataclass(frozen=True)
class _WindowRun:
    requests: list[list[dict[str, str]]]  # the request after each user message
    archive: list[dict[str, str]]
    summary: Any
    summariser_calls: int


def _run_window(memory_class: type, threshold: int, keep: int, turns: int, summarise: Callable) -> _WindowRun:
    memory = memory_class("system prompt", max_turns_before_summary=threshold, turns_to_keep_verbatim=keep)
    requests = []
    for turn in range(1, turns + 1):
        memory.add_message("user", _message("user", turn))
        requests.append([dict(m) for m in memory.get_messages_for_api()])
        memory.add_message("assistant", _message("assistant", turn))
    return _WindowRun(requests, [dict(m) for m in memory.archive], memory.current_summary,
                      getattr(summarise, "calls", 0))


def expected_window(threshold: int, keep: int, turns: int) -> _WindowRun:
    """What the window must send: the system prompt and summary memory's verbatim part, which is
    exactly what a window keeps (the project's class, with a stub summariser)."""
    memory = SummaryMemory("system prompt", turn_range_stub, threshold, keep)
    requests = []
    for turn in range(1, turns + 1):
        memory.add_message("user", _message("user", turn))
        requests.append([{"role": "system", "content": "system prompt"}, *memory.verbatim])
        memory.add_message("assistant", _message("assistant", turn))
    return _WindowRun(requests, memory.archive, None, 0)


def _window_variant(trigger: Callable[[int, int], bool], kept: Callable[[list, int], list]
                    ) -> Callable[[int, int, int], list[list[dict[str, str]]]]:
    """The requests of a window written with one slip: a different trigger or a different slice."""
    def requests(threshold: int, keep: int, turns: int) -> list[list[dict[str, str]]]:
        recent: list[dict[str, str]] = []
        sent = []
        for turn in range(1, turns + 1):
            recent.append({"role": "user", "content": _message("user", turn)})
            sent.append([{"role": "system", "content": "system prompt"}, *recent])
            recent.append({"role": "assistant", "content": _message("assistant", turn)})
            if trigger(len(recent) // 2, threshold):
                recent = kept(recent, keep)
        return sent
    return requests


WINDOW_MISTAKES = {
    "keeps messages, not turns": _window_variant(lambda held, n: held >= n, lambda recent, k: recent[-k:]),
    "keeps the oldest turns": _window_variant(lambda held, n: held >= n, lambda recent, k: recent[:2 * k]),
    "waits one turn too long": _window_variant(lambda held, n: held > n, lambda recent, k: recent[-2 * k:]),
}
WINDOW_HINTS = {
    "keeps messages, not turns": "you keep the last `turns_to_keep_verbatim` messages, but it counts turns, and "
                                 "a turn is two messages (a question and its reply): keep the last "
                                 "2 * turns_to_keep_verbatim messages",
    "keeps the oldest turns": "you keep the oldest turns and drop the newest; a window keeps the most recent "
                              "ones, the end of the list (a negative slice, [-n:])",
    "waits one turn too long": "you drop one turn later than summary memory folds: the trigger is `>=`, once "
                               "the memory holds max_turns_before_summary turns",
}


def check_window_memory(memory_class: type) -> Feedback:
    """Exercise 2.1: a memory with summary memory's trigger that drops the old turns instead of summarising.

    The student's ``add_message`` may call the notebook's ``summarise_turns`` by mistake; while the check runs,
    that name (in the notebook's namespace) is a counting stand-in that never calls a model.
    """
    add = getattr(memory_class, "add_message", None)
    namespace = getattr(add, "__globals__", None)
    calls: list[int] = []

    def no_model(turns: list, existing_summary: Any = None) -> str:
        calls.append(1)
        return f"a summary of {len(turns)} messages"

    counted = limit_calls(no_model, 100, "summarise_turns")
    missing = object()
    saved = namespace.get("summarise_turns", missing) if namespace is not None else missing
    if namespace is not None:
        namespace["summarise_turns"] = counted
    try:
        runs = []
        for case in window_cases():
            counted.calls = 0  # type: ignore[attr-defined]
            run = run_answer("2.1", _quietly(_run_window, getattr(memory_class, "__name__", "your class")),
                             memory_class, *case, counted,
                             todo="write the body of add_message")
            if isinstance(run, Feedback):
                return show(run)
            runs.append(run)
    finally:
        if namespace is not None:
            if saved is missing:
                namespace.pop("summarise_turns", None)
            else:
                namespace["summarise_turns"] = saved
    return show(_window_verdict(window_cases(), runs))


def _window_verdict(cases: list[tuple[int, int, int]], runs: list[_WindowRun]) -> Feedback:
    for (threshold, keep, turns), run in zip(cases, runs):
        if run.summariser_calls:
            return Feedback("2.1", WRONG, (
                f"your add_message called summarise_turns ({run.summariser_calls} times in {_turns(turns)}, summarise "
                f"after {threshold}, keep {keep}). A window writes no summary: cut recent_turns down yourself "
                "and leave current_summary as None."))
        if run.summary is not None:
            return Feedback("2.1", WRONG, f"current_summary is {run.summary!r}; a window writes no summary, so "
                                          "leave it as None.")
        if len(run.archive) < 2 * turns:
            return Feedback("2.1", WRONG, (
                f"after {_turns(turns)} your archive holds {len(run.archive)} messages, not {2 * turns}: the old turns "
                "leave recent_turns (the request), never the archive. Append every message to self.archive, and "
                "cut only self.recent_turns."))
    answers = [run.requests for run in runs]
    mistake = _first_matching(WINDOW_MISTAKES, answers, cases)
    for (threshold, keep, turns), run in zip(cases, runs):
        right = expected_window(threshold, keep, turns)
        if run.archive != right.archive:
            return Feedback("2.1", WRONG, (
                f"the archive differs (summarise after {threshold}, keep {keep}, {_turns(turns)}): it must hold every "
                "message in the order it came, each as {'role': ..., 'content': ...}."))
        for turn, (mine, theirs) in enumerate(zip(run.requests, right.requests), start=1):
            if mine != theirs:
                where = (f"summarise after {threshold}, keep {keep}: at turn {turn} you send {_describe(mine)}; "
                         f"it should be {_describe(theirs)}")
                return Feedback("2.1", WRONG, f"{where}. " + (
                    WINDOW_HINTS[mistake][0].upper() + WINDOW_HINTS[mistake][1:] + "." if mistake else
                    "Drop turns only after an assistant reply, once len(self.recent_turns) // 2 >= "
                    "max_turns_before_summary, and keep the last 2 * turns_to_keep_verbatim messages."))
    return Feedback("2.1", CORRECT, (
        f"all {len(cases)} settings send what summary memory sends verbatim, with no summary, and the archive "
        "keeps every message. With the lesson's settings, turn 6 goes out with turns 3 to 5 and the "
        "question: the salary of turn 1 is gone from the request, as in the sliding window."))


# ----- 3.1: a rule check that reads the sentence about equity (notebook 03) --------------------------

RULE_WORDS = ("never", "rule", "allergic", "must not", "no equity")  # what the exercise counts as a rule
_SENTENCE = re.compile(r"(?<=[.!?])\s+")

# Sentences the random summaries are made of. Each pool is what its name says, by the exercise's definition
# and by helpers.measure.drift.rule_strength alike (the tests check both).
EQUITY_RULES = ("One hard rule: he is allergic to equity instruments.", "He must never be offered equity funds.",
                "Never suggest equities to him.", "Equity products must not be suggested to him.",
                "He wants no equity in his portfolio.")
EQUITY_PREFERENCES = ("He avoids equities, preferring fixed-income.", "He would rather stay out of equity funds.",
                      "He prefers fixed deposits to equity.", "He is wary of equities.")
OTHER_RULES = ("He will never touch his emergency fund.", "His one rule for spending is to save first.",
               "He must not miss a PPF deposit.", "He says he is allergic to loans.")
OTHER_FACTS = ("Chiru earns ₹1,20,000 a month.", "He is 32 and wants to retire by 55.",
               "He holds an FD of ₹50,000 maturing in three months.", "He will open a PPF account this month.")


def sentences(summary: str) -> list[str]:
    """The sentences of a summary (split after . ! or ?)."""
    return [part for part in _SENTENCE.split(summary.strip()) if part]


def states_rule(summary: str) -> bool:
    """The exercise's answer: a sentence that mentions equity holds one of ``RULE_WORDS``."""
    return any(word in sentence.lower() for sentence in sentences(summary) if "equit" in sentence.lower()
               for word in RULE_WORDS)


def rule_cases(count: int = 24, seed: int = 7) -> list[str]:
    """The lesson's three summaries, hand-written cases, and ``count`` random summaries from the pools above."""
    lesson = [cycle["summary"] for cycle in published_run(3)["drift_run"]["cycles"]]
    fixed = ["He avoids equities, preferring fixed-income. He will never touch his emergency fund.",
             "Never suggest equities to him. He is 32.",
             "Chiru earns ₹1,20,000 a month and is risk-averse. His one rule for spending is to save first.",
             "[offline stand-in summary] User: One hard rule: I am allergic to equity instruments, never suggest them.",
             # where splitting at '.' only, reading one sentence about equity, needing all of them, or cutting
             # at commas gives another answer than reading every sentence
             "He avoids equities! He will never touch his emergency fund.",
             "Does he want equities? He must not miss a PPF deposit.",
             "He prefers fixed deposits to equity. Never suggest equities to him.",
             "Never suggest equities to him. He is wary of equities.",
             "Equity funds are out for him, never to be suggested."]
    rng = random.Random(seed)
    generated = []
    for _ in range(count):
        pool = rng.choice((EQUITY_RULES, EQUITY_PREFERENCES, ()))
        parts = rng.sample(OTHER_RULES + OTHER_FACTS, rng.randint(1, 3)) + ([rng.choice(pool)] if pool else [])
        rng.shuffle(parts)
        generated.append(" ".join(parts))
    return [*lesson, *fixed, *generated]


def _full_stops(summary: str) -> list[str]:
    """The summary cut at every '.', the split that misses the sentences ending in '!' or '?'."""
    return summary.split(".")


def _sentence_rule(summary: str, split: Callable[[str], list[str]]) -> bool:
    return any(word in sentence.lower() for sentence in split(summary) if "equit" in sentence.lower()
               for word in RULE_WORDS)


# Each known mistake, given how the answer splits sentences (``sentences`` or ``_full_stops``), so that a
# mistake is named also when the answer cuts only at '.' as well.
RULE_MISTAKES: dict[str, Callable[[str, Callable[[str], list[str]]], bool]] = {
    "the keyword check": lambda s, split: "equit" in s.lower(),
    "rule words anywhere": lambda s, split: any(word in s.lower() for word in RULE_WORDS),
    "upper and lower case": lambda s, split: any(word in sentence for sentence in split(s) if "equit" in sentence
                                                 for word in RULE_WORDS),
    "'equity' misses 'equities'": lambda s, split: any(word in sentence.lower() for sentence in split(s)
                                                       if "equity" in sentence.lower() for word in RULE_WORDS),
    "only '.' ends a sentence": _sentence_rule,  # with ``sentences`` this is the right answer, never matched
}
RULE_HINTS = {
    "the keyword check": "that is the lesson's keyword check: it says True for \"He avoids equities, preferring "
                         "fixed-income.\", where the rule has become a preference. Look for the rule words too",
    "rule words anywhere": "you look for the rule words anywhere in the summary. In \"He avoids equities, preferring "
                           "fixed-income. He will never touch his emergency fund.\" the 'never' is about his "
                           "emergency fund, and the sentence about equity says only 'avoids'. Look for the rule "
                           "words only in the sentences that mention equity",
    "upper and lower case": "\"Never suggest equities to him.\" starts with a capital N, and 'Equity' can too: "
                            "compare in lower case (sentence.lower())",
    "'equity' misses 'equities'": "\"He avoids equities\" and \"Never suggest equities\" do not contain 'equity' "
                                  "(the word changes: equities). Look for 'equit', which both contain",
    "only '.' ends a sentence": "you split only at '.': in \"He avoids equities! He will never touch his emergency "
                                "fund.\" the '!' ends the sentence about equity, and the 'never' is in the next one. "
                                "Split after '!' and '?' too, for example re.split(r\"(?<=[.!?])\\s+\", summary)",
}


def _rule_mistake(answers: Sequence[bool], cases: Sequence[str]) -> str | None:
    """The hint for the known mistake the answers show exactly (with the '.'-only split or without), if any."""
    for split in (sentences, _full_stops):
        for name, mistake in RULE_MISTAKES.items():
            if all(mistake(summary, split) == answer for summary, answer in zip(cases, answers)):
                also = split is _full_stops and name != "only '.' ends a sentence"
                return RULE_HINTS[name] + (". And " + RULE_HINTS["only '.' ends a sentence"] if also else "")
    return None


def _why(summary: str) -> str:
    about = [sentence for sentence in sentences(summary) if "equit" in sentence.lower()]
    if not about:
        return "no sentence of it mentions equity"
    holding = [(s, w) for s in about for w in RULE_WORDS if w in s.lower()]
    if holding:
        sentence, word = holding[0]
        return f"its sentence {sentence!r} holds {word!r}"
    return f"its sentence about equity, {about[0]!r}, holds none of the rule words"


def check_rule_check(rule_kept: Callable[[str], bool]) -> Feedback:
    """Exercise 3.1: ``rule_kept(summary)`` is True only where a sentence about equity still states the rule."""
    cases = rule_cases()
    answers = []
    for summary in cases:
        answer = run_answer("3.1", _quietly(rule_kept), summary, todo="write the body of rule_kept")
        if isinstance(answer, Feedback):
            return show(answer)
        if not isinstance(answer, bool):
            return show(Feedback("3.1", WRONG, (
                f"rule_kept returned {answer!r} for {summary[:60]!r}, not True or False"
                + (": did you forget `return`?" if answer is None else "."))))
        answers.append(answer)
    expected = [states_rule(summary) for summary in cases]
    if answers == expected:
        return show(Feedback("3.1", CORRECT, (
            f"all {len(cases)} summaries right, the lesson's among them: True for cycles 1 and 2, False for "
            "cycle 3 ('avoids ... preferring'). Your check sees the drift the keyword check misses.")))
    hint = _rule_mistake(answers, cases)
    wrong = [(summary, mine, right) for summary, mine, right in zip(cases, answers, expected) if mine != right]
    summary, mine, right = wrong[0]
    example = f"for {summary!r} you say {mine}, but {_why(summary)}"
    if hint:
        return show(Feedback("3.1", WRONG, f"{hint}."))
    return show(Feedback("3.1", WRONG, f"{len(wrong)} of {len(cases)} summaries differ; {example}."))

