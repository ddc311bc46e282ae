"""Exercise 2.1 (notebook 02): summary memory's trigger, a sliding window's forgetting. The right answer is what
``SummaryMemory`` sends word for word, with no summary; each named mistake is a mutant of it (its messages_to_fold
overridden) or, where no mutant can send it, a small function of its own."""
from __future__ import annotations

import functools
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from helpers.base.bounded import limit_calls
from helpers.grading.runner import CORRECT, WRONG, Exercise, Feedback, Mistake, checker, name_of, quietly
from helpers.memory.stubs import turn_range_stub
from helpers.memory.summary import SummaryMemory

START = ("SummaryMemory's add_message shows where its trigger is: keep the trigger, and where it would summarise, "
         "only shorten recent_turns")
Setting = tuple[int, int, int]  # (max_turns_before_summary, turns_to_keep_verbatim, turns)
Request = list[dict[str, str]]
SYSTEM = {"role": "system", "content": "system prompt"}


def cases(count: int = 30, seed: int = 5) -> list[Setting]:
    """The lesson's setting, the smallest settings where the slips show, and ``count`` random ones."""
    found: list[Setting] = [(4, 2, 8), (2, 1, 3), (3, 1, 4), (3, 2, 4), (4, 3, 8), (6, 2, 10), (3, 1, 7), (5, 4, 9)]
    rng = random.Random(seed)
    while len(found) < 8 + count:
        threshold = rng.randint(2, 8)
        case = (threshold, rng.randint(1, threshold - 1), rng.randint(1, 16))
        if case not in found:
            found.append(case)
    return found


CASES = tuple(cases())


def _setting(case: Setting) -> str:
    threshold, keep, turns = case
    return f"summarise after {threshold}, keep {keep}, {turns} turn{'s' if turns != 1 else ''}"


@dataclass(frozen=True)
class WindowRun:
    """What a memory did in a conversation: the request after each user message, its archive and summary."""

    requests: list[Request]
    archive: list[dict[str, str]]
    summary: Any = None
    summariser_calls: int = 0


def _requests(memory: Any, turns: int, request: Callable[[Any], Request]) -> list[Request]:
    """``request(memory)`` after each question of ``turns`` turns of questions and replies."""
    sent = []
    for turn in range(1, turns + 1):
        memory.add_message("user", f"question {turn}")
        sent.append(request(memory))
        memory.add_message("assistant", f"reply {turn}")
    return sent


def expected_window(threshold: int, keep: int, turns: int, memory_class: type[SummaryMemory] = SummaryMemory
                    ) -> WindowRun:
    """What the window must send: summary memory's verbatim part (``memory_class``'s, with a stub summariser)."""
    memory = memory_class("system prompt", turn_range_stub, max_turns_before_summary=threshold,
                          turns_to_keep_verbatim=keep)
    return WindowRun(_requests(memory, turns, lambda m: [SYSTEM, *m.verbatim]), memory.archive)


def _mutant(fold: Callable[[SummaryMemory, int], int]) -> Callable[[int, int, int], list[Request]]:
    """The requests of ``SummaryMemory`` whose fold after a reply takes ``fold(memory, the real count)`` messages."""
    class Mutant(SummaryMemory):
        def messages_to_fold(self, role: str) -> int:
            return fold(self, super().messages_to_fold(role)) if role == "assistant" else 0

    @functools.lru_cache(maxsize=256)  # a check tries each mistake on every case: made once a kernel
    def requests(threshold: int, keep: int, turns: int) -> list[Request]:
        return expected_window(threshold, keep, turns, Mutant).requests
    return requests


@functools.lru_cache(maxsize=256)
def _keeps_the_oldest(threshold: int, keep: int, turns: int) -> list[Request]:
    """The right requests with the oldest turns kept where the newest are: a memory's verbatim part is always the
    newest messages, so no mutant can send this; the slip drops at the same turns, so the lengths are the same."""
    memory = SummaryMemory("system prompt", turn_range_stub, max_turns_before_summary=threshold,
                           turns_to_keep_verbatim=keep)
    return _requests(memory, turns, lambda m: [SYSTEM, *m.archive[:2 * keep], *m.verbatim[2 * keep:]])


def _counts_messages(memory: SummaryMemory, n: int) -> int:
    """The trigger reads the messages held as turns; the fold keeps the last turns (all, if no more are held)."""
    held, kept = memory.verbatim_messages, 2 * memory.turns_to_keep_verbatim
    return max(0, held - kept) if held >= memory.max_turns_before_summary else 0


MISTAKES = (  # never the code of the right answer
    Mistake("keeps messages, not turns",
            _mutant(lambda memory, n: n and memory.verbatim_messages - memory.turns_to_keep_verbatim),
            "you keep turns_to_keep_verbatim *messages*; the setting counts turns, and a turn is two messages (a "
            "question and its reply)", "how many messages make the turns you must keep?"),
    Mistake("keeps the oldest turns", _keeps_the_oldest,
            "you keep the oldest turns and drop the newest; a window keeps the most recent ones",
            "which end of recent_turns holds the latest turn?"),
    Mistake("waits one turn too long",
            _mutant(lambda memory, n: n if memory.verbatim_messages // 2 > memory.max_turns_before_summary else 0),
            "you drop one turn later than summary memory folds: the memory acts as soon as it holds "
            "max_turns_before_summary turns", "compare the two sides of your trigger when they are equal"),
    Mistake("counts messages as turns", _mutant(_counts_messages),
            "your trigger counts messages where the setting counts turns, so it drops too early",
            "recent_turns holds messages: how many turns is that?"),
    Mistake("drops every turn", _mutant(lambda memory, n: n and memory.verbatim_messages),
            "you drop every turn, the latest ones too; the last turns_to_keep_verbatim turns stay",
            "which turns does summary memory still send word for word after a fold?"),
)


CHECK = Exercise("2.1", CASES, tuple, "write the body of add_message", START, MISTAKES, (
    "print recent_turns after each reply of the smallest case, and compare with the schedule of notebook 01 for the "
    "same settings"), spread=True)


def grade_window_memory(memory_class: type) -> Feedback:
    """Exercise 2.1: a memory with summary memory's trigger that drops the old turns instead of summarising.
    While the check runs, the notebook's ``summarise_turns`` (which the student's ``add_message`` may call by
    mistake) counts calls and calls no model."""
    def run(threshold: int, keep: int, turns: int) -> WindowRun:
        counted.calls = 0  # type: ignore[attr-defined]
        memory = memory_class("system prompt", max_turns_before_summary=threshold, turns_to_keep_verbatim=keep)
        requests = _requests(memory, turns, lambda m: [dict(message) for message in m.get_messages_for_api()])
        return WindowRun(requests, [dict(m) for m in memory.archive], memory.current_summary, counted.calls)

    namespace = getattr(getattr(memory_class, "add_message", None), "__globals__", {})
    counted = limit_calls(lambda turns, existing_summary=None: f"a summary of {len(turns)} messages", 100,
                          "summarise_turns")
    saved = {name: namespace[name] for name in ("summarise_turns",) if name in namespace}
    namespace["summarise_turns"] = counted
    try:
        runs = CHECK.answers(quietly(run, name_of(memory_class, "your class")))
    finally:
        namespace.pop("summarise_turns", None)
        namespace.update(saved)  # the notebook's own summarise_turns back, if it had one
    return runs if isinstance(runs, Feedback) else _verdict(runs)


def _verdict(runs: list[WindowRun]) -> Feedback:
    for case, run in sorted(zip(CASES, runs), key=lambda item: item[0][2]):
        if run.summariser_calls:
            return Feedback(CHECK.number, WRONG, f"your add_message called summarise_turns ({run.summariser_calls} "
                            f"times with {_setting(case)}). A window writes no summary.",
                            "which part of SummaryMemory's add_message makes the summary?", "summarises")
        if run.summary is not None:
            return Feedback(CHECK.number, WRONG, f"current_summary is {run.summary!r} ({_setting(case)}); a window "
                            "writes no summary, so it stays None.",
                            "which attribute holds the summary, and what must it stay?", "writes a summary")
        if len(run.archive) < 2 * case[2]:
            return Feedback(CHECK.number, WRONG, f"after {case[2]} turns your archive holds {len(run.archive)} "
                            f"messages, not {2 * case[2]} ({_setting(case)}): the old turns leave the request, never "
                            "the archive.", "which list does the request read, and which one keeps the whole "
                            "conversation?", "drops from the archive")
    for case, run in sorted(zip(CASES, runs), key=lambda item: (item[0][2], item[0][0])):
        right = expected_window(*case)
        if run.archive != right.archive:
            return Feedback(CHECK.number, WRONG, f"the archive differs ({_setting(case)}): it must hold every message "
                            "in the order it came, each as {'role': ..., 'content': ...}.",
                            "print self.archive after two turns and compare", "archive differs")
        for turn, (mine, theirs) in enumerate(zip(run.requests, right.requests), start=1):
            if mine != theirs:
                return CHECK.known([run.requests for run in runs], (
                    f"The smallest case: {_setting(case)}. At turn {turn} you send {_describe(mine)}; summary "
                    f"memory sends {_describe(theirs)} word for word."))
    return Feedback(CHECK.number, CORRECT, (
        f"all {len(CASES)} settings send what summary memory sends verbatim, with no summary, and the archive "
        "keeps every message. With the lesson's settings, turn 6 goes out with turns 3 to 5 and the question: the "
        "salary of turn 1 is gone from the request, as in the sliding window."))


def _describe(messages: Request) -> str:
    """A request as a reader checks it: ``system prompt, question 3, reply 3, question 4``."""
    return ", ".join(m["content"] if m["role"] != "system" else "system prompt" for m in messages)


check_window_memory = checker(grade_window_memory, "check_window_memory", "your class")
