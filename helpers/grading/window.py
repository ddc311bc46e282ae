"""Exercise 2.1 (notebook 02): summary memory's trigger, a sliding window's forgetting. The right answer is what
``SummaryMemory`` sends word for word, with no summary; each named mistake is a mutant of it (``messages_to_fold``
overridden) or, where no mutant can send it, its requests read another way."""
from __future__ import annotations

import functools
import random
from collections.abc import Callable
from typing import Any, NamedTuple

from helpers.base.bounded import limit_calls
from helpers.grading.runner import WRONG, Exercise, Feedback, Mistake, checker, drawn, name_of
from helpers.memory.stubs import turn_range_stub
from helpers.memory.summary import SummaryMemory

Setting = tuple[int, int, int]  # (max_turns_before_summary, turns_to_keep_verbatim, turns)
SYSTEM = {"role": "system", "content": "system prompt"}


def _draw(rng: random.Random, index: int) -> Setting:
    threshold = rng.randint(2, 8)
    return threshold, rng.randint(1, threshold - 1), rng.randint(1, 16)


# the lesson's setting, the smallest settings where the slips show, and 30 random ones
CASES = drawn([(4, 2, 8), (2, 1, 3), (3, 1, 4), (3, 2, 4), (4, 3, 8), (6, 2, 10), (3, 1, 7), (5, 4, 9)], 30, 5, _draw)


def _setting(case: Setting) -> str:
    return f"summarise after {case[0]}, keep {case[1]}, {case[2]} turn{'s' * (case[2] != 1)}"


class WindowRun(NamedTuple):
    """What a memory did in a conversation: the request after each user message, its archive, summary and calls."""
    requests: list[list[dict[str, str]]]
    archive: list[dict[str, str]]
    summary: Any = None
    summariser_calls: int = 0


def _said(turns: int) -> list[dict[str, str]]:
    return [{"role": role, "content": f"{word} {turn}"} for turn in range(1, turns + 1)
            for role, word in (("user", "question"), ("assistant", "reply"))]


def _run(memory: Any, turns: int, request: Callable[[Any], list]) -> list[list[dict[str, str]]]:
    sent = []
    for message in _said(turns):
        memory.add_message(message["role"], message["content"])
        sent += [request(memory)] * (message["role"] == "user")
    return sent


@functools.lru_cache(maxsize=1024)
def expected_window(case: Setting, memory_class: type[SummaryMemory] = SummaryMemory, oldest: bool = False
                    ) -> WindowRun:
    """Summary memory's verbatim part (``memory_class``'s, with a stub summariser); ``oldest``: the oldest turns
    sent where the newest are (no mutant sends that; the lengths are the same)."""
    memory = memory_class("system prompt", turn_range_stub, max_turns_before_summary=case[0],
                          turns_to_keep_verbatim=case[1])
    keep, said = 2 * case[1], _said(case[2])
    return WindowRun(_run(memory, case[2], lambda m: [
        SYSTEM, *(said[:min(keep, len(m.verbatim))] + m.verbatim[keep:] if oldest else m.verbatim)]), said)


def _mutant(fold: Callable[[int, int, int, int], int]) -> Callable[[Setting], WindowRun]:
    """The run of ``SummaryMemory`` whose fold after a reply takes ``fold(messages held, the real count, threshold,
    turns kept)`` messages."""
    class Mutant(SummaryMemory):
        def messages_to_fold(self, role: str) -> int:
            settings = self.settings()
            return fold(self.verbatim_messages, super().messages_to_fold(role), settings["max_turns_before_summary"],
                        settings["turns_to_keep_verbatim"]) if role == "assistant" else 0
    return lambda case: expected_window(case, Mutant)


MISTAKES = (  # never the code of the right answer
    Mistake("keeps messages, not turns", _mutant(lambda held, n, t, k: n and held - k),
            "you keep turns_to_keep_verbatim *messages*; the setting counts turns, and a turn is two messages",
            "how many messages make the turns you must keep?"),
    Mistake("keeps the oldest turns", lambda case: expected_window(case, oldest=True), "you keep the oldest turns and "
            "drop the newest; a window keeps the most recent ones", "which end of recent_turns holds the latest turn?"),
    Mistake("waits one turn too long", _mutant(lambda held, n, t, k: n if held // 2 > t else 0), "you drop one turn "
            "later than summary memory folds: it acts as soon as it holds max_turns_before_summary turns",
            "compare the two sides of your trigger when they are equal"),
    Mistake("counts messages as turns", _mutant(lambda held, n, t, k: max(0, held - 2 * k) if held >= t else 0),
            "your trigger counts messages where the setting counts turns, so it drops too early",
            "recent_turns holds messages: how many turns is that?"),
    Mistake("drops every turn", _mutant(lambda held, n, t, k: n and held), "you drop every turn, the latest "
            "ones too; the last turns_to_keep_verbatim turns stay", "which turns does summary memory still send word "
            "for word after a fold?"),
)


def _refuse(name: str, case: Setting, args: tuple, run: WindowRun) -> Feedback | None:
    """A window that summarises, keeps a summary or loses its archive, whatever it sends."""
    found = ((run.summariser_calls, f"your add_message called summarise_turns {run.summariser_calls} times: a window "
              "writes no summary", "which part of SummaryMemory's add_message makes the summary?", "summarises"),
             (run.summary is not None, f"current_summary is {run.summary!r}; a window writes no summary, so it stays "
              "None", "which attribute holds the summary, and what must it stay?", "writes a summary"),
             (run.archive != expected_window(case).archive, f"after {case[2]} turns your archive holds "
              f"{len(run.archive)} messages, not {2 * case[2]} in order: the old turns leave the request, never the "
              "archive", "which list does the request read, and which one keeps every message?", "drops from the "
              "archive"))
    return next((Feedback("2.1", WRONG, f"{said} ({_setting(case)}).", hint, name) for wrong, said, hint, name in found
                 if wrong), None)


def _example(case: Setting, run: WindowRun) -> str:
    turn, mine, theirs = next((turn, mine, theirs) for turn, (mine, theirs) in enumerate(
        zip(run.requests, expected_window(case).requests), start=1) if mine != theirs)
    said = [", ".join("system prompt" if m["role"] == "system" else m["content"] for m in r) for r in (mine, theirs)]
    return f"{_setting(case)}. At turn {turn} you send {said[0]}; summary memory sends {said[1]} word for word."


CHECK = Exercise(
    "2.1", CASES, lambda case: (case,), (expected_window,), "write the body of add_message", "SummaryMemory's "
    "add_message shows where its trigger is: keep the trigger, and where it would summarise, only shorten "
    "recent_turns", MISTAKES, "print recent_turns after each reply of the smallest case, and compare with the "
    "schedule of notebook 01 for the same settings", "settings", _refuse, example=_example,
    key=lambda case: (case[2], case[0]), correct=lambda _: (
        f"all {len(CASES)} settings send what summary memory sends verbatim, with no summary, and the archive keeps "
        "every message. With the lesson's settings, turn 6 goes out with turns 3 to 5 and the question: the salary "
        "of turn 1 is gone from the request, as in the sliding window."))


def grade_window_memory(memory_class: type) -> Feedback:
    """Exercise 2.1: a memory with summary memory's trigger that drops the old turns instead of summarising. While
    the check runs, the notebook's ``summarise_turns`` (which ``add_message`` may call by mistake) counts calls."""
    def run(case: Setting) -> WindowRun:
        counted.calls = 0  # type: ignore[attr-defined]
        memory = memory_class("system prompt", max_turns_before_summary=case[0], turns_to_keep_verbatim=case[1])
        sent = _run(memory, case[2], lambda m: [dict(message) for message in m.get_messages_for_api()])
        return WindowRun(sent, [dict(message) for message in memory.archive], memory.current_summary, counted.calls)
    run.__name__ = name_of(memory_class, "your class")
    namespace = getattr(getattr(memory_class, "add_message", None), "__globals__", {})
    counted = limit_calls(lambda turns, existing_summary=None: "a summary", 100, "summarise_turns")
    saved = {name: namespace[name] for name in ("summarise_turns",) if name in namespace}
    namespace["summarise_turns"] = counted
    try:
        return CHECK.grade(run)
    finally:
        namespace.pop("summarise_turns", None)
        namespace.update(saved)  # the notebook's own summarise_turns back, if it had one


check_window_memory = checker(grade_window_memory, "your class")
