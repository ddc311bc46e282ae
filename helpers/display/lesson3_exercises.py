"""The check cells of lesson 3's exercises (notebooks 01 to 03): run the student's code on cases
whose right answer the project computes, and print a verdict with ``helpers.display.exercise``.

A function or method that still raises ``NotImplementedError`` (or returns ``...``) counts as
not done yet, so the stored notebooks say so the same way on every run.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from helpers.display.exercise import Feedback, feedback
from helpers.lessons.data import lesson3, published_run
from helpers.measure.drift import rule_strength
from helpers.memory.schedule import summary_schedule

SCHEDULE_CASES = ((10, 4, 2), (10, 4, 3), (10, 6, 2), (20, 5, 2), (3, 4, 2), (15, 3, 1), (40, 10, 4))


def _attempt(function: Callable[..., Any], *args: Any) -> Any:
    """The function's result, or ``...`` while it still raises NotImplementedError."""
    try:
        return function(*args)
    except NotImplementedError:
        return ...


def check_calls_formula(predicted_calls: Callable[[int, int, int], int]) -> Feedback:
    """Exercise 1.1: ``predicted_calls(total_turns, threshold, keep)`` against the memory's own schedule."""
    yours = [_attempt(predicted_calls, *case) for case in SCHEDULE_CASES]
    expected = [summary_schedule(*case).calls for case in SCHEDULE_CASES]
    answer = ... if any(value is ... for value in yours) else yours

    def explain(values: list[Any]) -> str:
        wrong = [(case, mine, right) for case, mine, right in zip(SCHEDULE_CASES, values, expected) if mine != right]
        case, mine, right = wrong[0]
        return (f"{len(wrong)} of {len(SCHEDULE_CASES)} settings differ; e.g. {case[0]} turns, summarise after "
                f"{case[1]}, keep {case[2]}: you say {mine!r}, the memory makes {right} calls")

    return feedback("1.1", answer, expected, explain=explain, todo="write the body of predicted_calls",
                    right=f"all {len(SCHEDULE_CASES)} settings match the memory's schedule.",
                    hint="The first call comes after turn `threshold`; after it, each call folds "
                         "threshold - keep turns, so the next one comes that many turns later.")


class _SummariserCalled(Exception):
    """Raised by the check's summariser: a sliding window must never call it."""


def _sliding_run(memory_class: type, replies: list[str]) -> tuple[list[list[dict[str, str]]], int]:
    calls = []

    def no_summaries(messages: list[dict[str, str]], existing: str | None) -> str:
        calls.append(messages)
        raise _SummariserCalled("a sliding window must not call the summariser")

    memory = memory_class("SYSTEM", no_summaries, max_turns_before_summary=4, turns_to_keep_verbatim=2)
    requests = []
    try:
        for question, reply in zip(lesson3()["summary_run"]["user_turns"], replies):
            memory.add_message("user", question)
            requests.append([dict(m) for m in memory.get_messages_for_api()])
            memory.add_message("assistant", reply)
    except Exception:
        if calls:  # whatever the class made of the summariser's exception
            raise _SummariserCalled from None
        raise
    return requests, len(memory.archive)


def check_sliding_window(memory_class: type) -> Feedback:
    """Exercise 2.1: a sliding window with the summary memory's trigger drops the old turns instead."""
    replies = [f"reply {n}" for n in range(1, 7)]
    expected: list[list[dict[str, str]]] = []
    window: list[dict[str, str]] = []
    for question, reply in zip(lesson3()["summary_run"]["user_turns"], replies):
        window.append({"role": "user", "content": question})
        expected.append([{"role": "system", "content": "SYSTEM"}, *window])
        window.append({"role": "assistant", "content": reply})
        if len(window) // 2 >= 4:
            window = window[len(window) - 4:]
    try:
        answer: Any = _sliding_run(memory_class, replies)
    except NotImplementedError:
        answer = ...
    except _SummariserCalled:
        answer = "summariser"
    except Exception as error:  # noqa: BLE001 - the student's code failed: say how, never crash the check
        answer = f"error: {type(error).__name__}: {error}"

    def explain(value: Any) -> str:
        if value == "summariser":
            return "your fold called the summariser: a sliding window drops the old turns and writes no summary"
        if isinstance(value, str):
            return f"your class raised {value[7:]}"
        requests, archived = value
        if requests == expected:  # the window is right, but old turns were lost from the archive too
            return (f"the requests are right, but the archive holds {archived} messages after six turns, "
                    f"expected {2 * len(replies)}: the old turns leave the request, not the archive")
        turn = next(n for n, (mine, right) in enumerate(zip(requests, expected), start=1) if mine != right)
        return (f"the request of turn {turn} differs: yours has {len(requests[turn - 1])} messages "
                f"({', '.join(m['role'] for m in requests[turn - 1])}), expected {len(expected[turn - 1])}")

    return feedback("2.1", answer, (expected, 2 * len(replies)), explain=explain, todo="write the body of fold",
                    right="turn 6 is sent with turns 3 to 5 and no summary: the salary of turn 1 is gone "
                          "from the request, as in the lesson's sliding window; the archive still holds all "
                          "12 messages.",
                    hint="Keep self.verbatim[n_messages:], leave self.archive alone and self.summary as it is (None).")


def rule_cases() -> list[str]:
    """The texts exercise 3.1 is checked on: the lesson's three summaries and four written for the check."""
    lesson = [cycle["summary"] for cycle in published_run(3)["drift_run"]["cycles"]]
    return [*lesson, "Chiru must never be offered equity funds.", "Chiru would rather stay out of equities.",
            "Chiru earns ₹1,20,000 a month and is risk-averse.",
            "Chiru said one hard rule: no equity, ever. He is 32."]


def check_rule_check(rule_kept: Callable[[str], bool]) -> Feedback:
    """Exercise 3.1: ``rule_kept(summary)`` is True only where the equity rule is still worded as a rule."""
    cases = rule_cases()
    yours = [_attempt(rule_kept, text) for text in cases]
    expected = [rule_strength(text)[0] == "rule" for text in cases]
    answer = ... if any(value is ... for value in yours) else yours

    def explain(values: list[Any]) -> str:
        wrong = [(text, mine) for text, mine, right in zip(cases, values, expected) if mine != right]
        text, mine = wrong[0]
        return f"{len(wrong)} of {len(cases)} texts differ; e.g. you say {mine!r} for {text[:70]!r}"

    return feedback("3.1", answer, expected, explain=explain, todo="write the body of rule_kept",
                    right="True for the lesson's cycles 1 and 2, False for cycle 3 ('avoids ... preferring'): "
                          "your check sees the drift the keyword check misses.",
                    hint="Look only at the sentences that mention 'equit', and ask whether one of them holds a "
                         "rule word such as 'never', 'rule', 'allergic', 'must not' or 'no equity'.")
