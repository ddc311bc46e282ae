"""Exercise 4.1 (notebook 04): at which messages does the buffer overflow? The right answer is what
``SummaryBufferMemory`` does; each named mistake is a mutant of the class, its result read another way, or a slip."""
from __future__ import annotations

import functools
import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from helpers.base.tokens import count_tokens
from helpers.display.reference import lesson4_run_sizes
from helpers.grading.runner import WRONG, Exercise, Feedback, Mistake, checker, name_of
from helpers.lessons.data import lesson4
from helpers.memory.budget import BudgetStep, analyse_sizes
from helpers.memory.summary_buffer import SummaryBufferMemory

START = ("go through the messages one by one, as the memory does, with a list of the sizes the buffer holds; "
         "print it at each step of the lesson's run")


@dataclass(frozen=True)
class OverflowCase:
    """Messages of these token sizes (user, reply, user, ...), a budget, messages compressed per overflow."""

    sizes: tuple[int, ...]
    budget: int
    compress: int
    about: str = ""

    def describe(self) -> str:
        """The case as a verdict names it (a long conversation cut after 12 sizes)."""
        shown = list(self.sizes) if len(self.sizes) <= 14 else "[" + ", ".join(map(str, self.sizes[:12])) + ", ...]"
        setting = f"sizes {shown}, budget {self.budget}, messages_to_compress {self.compress}"
        return f"{self.about}: {setting}" if self.about else setting


@functools.lru_cache(maxsize=8192)
def memory_steps(case: OverflowCase, memory_class: type[SummaryBufferMemory] = SummaryBufferMemory
                 ) -> tuple[BudgetStep, ...]:
    """What ``memory_class`` does with the case's messages, step by step."""
    return analyse_sizes(case.sizes, case.budget, case.compress, memory_class=memory_class).steps


def memory_overflows_at(case: OverflowCase, memory_class: type[SummaryBufferMemory] = SummaryBufferMemory,
                        over_budget: bool = False) -> list[int]:
    """The messages whose storing made ``memory_class`` overflow (``over_budget``: that met a buffer over it)."""
    return [number for number, step in enumerate(memory_steps(case, memory_class), start=1)
            if (step.would_reach > case.budget if over_budget else step.overflow)]


def _mutant(fold: Callable[[SummaryBufferMemory, int, Callable[[int], int]], int]) -> type[SummaryBufferMemory]:
    """``SummaryBufferMemory`` whose ``messages_to_fold`` is ``fold(memory, incoming, the real one)``."""
    class Mutant(SummaryBufferMemory):
        def messages_to_fold(self, incoming_tokens: int) -> int:
            return fold(self, incoming_tokens, super().messages_to_fold)
    return Mutant


def _whole(memory: SummaryBufferMemory) -> int:
    return len(memory.buffer) // 2 * 2


# the page's fold: never more than messages_to_compress messages, even if the message still does not fit
_StopsAtCompress = _mutant(lambda memory, incoming, real: min(real(incoming), memory.messages_to_compress_on_overflow))
_IgnoresTheMessage = _mutant(lambda memory, incoming, real: real(0))  # tests the buffer alone
_FoldsEverything = _mutant(lambda memory, incoming, real: _whole(memory) if real(incoming) else 0)
# a message that brings the buffer exactly to the budget overflows too (it fits)
_OverflowsOnTheBudget = _mutant(lambda memory, incoming, real: real(incoming) or (
    min(memory.messages_to_compress_on_overflow, _whole(memory))
    if memory.buffer_tokens + incoming == memory.max_buffer_tokens else 0))
# built with a budget one lower, it folds until the buffer is below the real budget, but overflows only past it
_FoldsBelowTheBudget = _mutant(lambda memory, incoming, real: (
    0 if memory.buffer_tokens + incoming == memory.max_buffer_tokens + 1 else real(incoming)))


def _fits(memory: SummaryBufferMemory, incoming: int, n: int) -> bool:
    """Whether the incoming message fits once the oldest ``n`` messages have left the buffer."""
    gone = sum(message.tokens for message in memory.verbatim_records[:n])
    return memory.buffer_tokens - gone + incoming <= memory.max_buffer_tokens


def _one_at_a_time(memory: SummaryBufferMemory, incoming: int, real: Callable[[int], int]) -> int:
    """Past messages_to_compress, a message at a time: one fewer than the real fold when that is enough."""
    n = real(incoming)
    return n - 1 if n > memory.messages_to_compress_on_overflow and _fits(memory, incoming, n - 1) else n


def _waiting_question_too(memory: SummaryBufferMemory, incoming: int, real: Callable[[int], int]) -> int:
    """A message at a time, whole turns or not: on an overflow the waiting question goes too when fewer messages
    than messages_to_compress are held, or when the turns before it are not enough."""
    n, held = _one_at_a_time(memory, incoming, real), memory.verbatim_messages
    short = held < memory.messages_to_compress_on_overflow or not _fits(memory, incoming, n)
    return held if short and not _fits(memory, incoming, 0) else n


def _by_compress(memory: SummaryBufferMemory, incoming: int, real: Callable[[int], int]) -> int:
    """Past messages_to_compress, messages_to_compress at a time: the real fold rounded up to a multiple of it."""
    n, step = real(incoming), memory.messages_to_compress_on_overflow
    return n if n <= step else min(-(-n // step) * step, memory.verbatim_messages)


_OneAtATime, _TakesTheWaitingQuestion, _ByCompress = map(_mutant, (_one_at_a_time, _waiting_question_too, _by_compress))


def _stores_then_tests(case: OverflowCase) -> list[int]:
    """Storing a message, then testing the buffer, is testing the buffer alone before the next one: the mistake
    "tests without the message", one message earlier (a message added at the end makes the test after the last)."""
    later = replace(case, sizes=(*case.sizes, 1))
    return [number - 1 for number in memory_overflows_at(later, _IgnoresTheMessage)]


def _folds_per_overflow(case: OverflowCase) -> list[int]:
    """Each pair folded past messages_to_compress counted as one more overflow."""
    return [number for number, step in enumerate(memory_steps(case), start=1) if step.overflow
            for _ in range(1 + max(0, step.messages_folded - case.compress) // 2)]


_WHOLE_TURNS = ("when a reply arrives, its own question is the last message in the buffer: what does a fold do with "
                "a question whose reply is not stored yet?")
_SAME_SIDES = "compare the two sides of your test when they are equal: is a buffer of exactly the budget over it?"
MISTAKES = (
    Mistake("the page's analyse()", lambda case: memory_overflows_at(case, _StopsAtCompress, over_budget=True),
            "your rule is the page's analyse(), written for any sizes: right on every setting the page tries, but "
            "not the memory's in two places. It never folds more than messages_to_compress messages, even when "
            "the message still does not fit; and it counts an overflow when there is no whole turn to fold",
            "find, in the smallest case, the message where the memory folds more than messages_to_compress "
            "messages, and one where the memory counts nothing although the buffer is over the budget"),
    Mistake("stops at messages_to_compress", lambda case: memory_overflows_at(case, _StopsAtCompress),
            "your rule is the page's: it stops after messages_to_compress messages, even when that leaves too "
            "little room for the message; in the case above the memory folds more, in the same overflow",
            "play the smallest case by hand: after the first messages_to_compress messages leave, does the "
            "message fit yet?"),
    Mistake("counts a fold of nothing", lambda case: memory_overflows_at(case, over_budget=True),
            "your rule counts an overflow when the buffer holds no whole turn to fold. The memory then folds "
            "nothing, calls no summariser and counts no overflow: the message is stored over the budget",
            "an overflow is a fold, one summariser call: what is there to fold when the first message arrives, "
            "or when a reply arrives and the buffer holds only its own question?"),
    Mistake("overflows on the budget", lambda case: memory_overflows_at(replace(case, budget=case.budget - 1)),
            "your rule treats a message that brings the buffer exactly to max_buffer_tokens as an overflow, and "
            "folds until the buffer is below the budget. A buffer of exactly max_buffer_tokens tokens fits",
            _SAME_SIDES),
    Mistake("overflows on the budget (the test)",
            lambda case: memory_overflows_at(case, _OverflowsOnTheBudget),
            "your rule overflows when the buffer plus the message lands exactly on max_buffer_tokens. That "
            "message fits: a buffer of exactly the budget is not over it", _SAME_SIDES),
    Mistake("folds below the budget",
            lambda case: memory_overflows_at(replace(case, budget=case.budget - 1), _FoldsBelowTheBudget),
            "your rule goes on folding while the buffer plus the message is exactly at max_buffer_tokens. Once "
            "they are at the budget the message fits, and the fold stops",
            "look at the test that decides whether to fold one more turn: what does it say when the sum equals "
            "the budget?"),
    Mistake("stores, then tests", _stores_then_tests,
            "your rule stores the message first and tests afterwards, so a fold can take the message itself "
            "(and a reply with its question)", "would the buffer plus the message about to be stored pass the "
            "budget? The answer decides the fold, before the message is in the buffer"),
    Mistake("tests without the message", lambda case: memory_overflows_at(case, _IgnoresTheMessage),
            "your rule tests the buffer alone. Whether there is an overflow depends on the message about to be "
            "stored too", "a long message arriving at a buffer that is still under the budget: does it fit?"),
    Mistake("folds a waiting question", lambda case: memory_overflows_at(case, _TakesTheWaitingQuestion),
            "your rule folds messages one by one, so a question can leave the buffer without its reply",
            _WHOLE_TURNS),
    Mistake("folds more one message at a time", lambda case: memory_overflows_at(case, _OneAtATime),
            "the first messages_to_compress messages your rule folds are whole turns, but when it folds more it "
            "goes one message at a time, so it can stop half way through a turn and leave a reply without its "
            "question", _WHOLE_TURNS),
    Mistake("folds more messages_to_compress at a time", lambda case: memory_overflows_at(case, _ByCompress),
            "when messages_to_compress messages are not enough, your rule folds another messages_to_compress at "
            "once, and so folds more than the memory does in the case above",
            "in the smallest case, count how many messages the memory folds at the message named, and how many "
            "yours does"),
    Mistake("folds every whole turn", lambda case: memory_overflows_at(case, _FoldsEverything),
            "an overflow of yours folds every whole turn in the buffer; in the case above the memory folds fewer "
            "and keeps the recent ones word for word",
            "the recent turns are the ones the next reply needs word for word: how many must leave?"),
    Mistake("each turn folded is an overflow", _folds_per_overflow,
            "your rule counts each turn folded past messages_to_compress as another overflow. All the turns "
            "folded before one message are one overflow: one summariser call",
            "how many summariser calls does one overflow make, however many turns it folds?"),
    Mistake("numbered from 0", lambda case: [n - 1 for n in memory_overflows_at(case)],
            "your numbers are one lower than the memory's: the first user message is message 1",
            "what number does your function give the first message?"),
    Mistake("turn numbers", lambda case: [(n + 1) // 2 for n in memory_overflows_at(case)],
            "you give turn numbers; the exercise asks for message numbers (reply 3 is message 6)",
            "each turn is two messages: a question and its reply"),
    Mistake("messages_to_compress ignored", lambda case: memory_overflows_at(OverflowCase(case.sizes, case.budget, 4)),
            "your rule always folds as if messages_to_compress were 4: it does not use the argument",
            "the page's second try-it sets messages_to_compress to 2: where does your function read it?"),
    Mistake("the folded messages stay",
            lambda case: [n for n in range(3, len(case.sizes) + 1) if sum(case.sizes[:n]) > case.budget],
            "your rule counts the overflows but keeps the folded messages in the buffer. Folded messages leave "
            "it: they are in the summary now", "after an overflow, how many tokens does the buffer hold?"),
)


def _fixed_cases() -> tuple[OverflowCase, ...]:
    def sizes(reply: int) -> tuple[int, ...]:  # the lesson's user messages, each followed by a reply of this size
        turns = lesson4()["budget_analysis"]["user_messages"]
        return tuple(size for text in turns for size in (count_tokens(text), reply))

    lesson = sizes(100)
    statement = 480  # notebook 04's pasted bank statement, by o200k_base
    return (
        OverflowCase(lesson, 600, 4, "the lesson's table at 600 tokens (replies of 100)"),
        OverflowCase(lesson, 1500, 4, "the lesson's table at 1,500 tokens: nothing overflows"),
        OverflowCase(sizes(150), 300, 4, "the page's first try-it (replies of 150, 300 tokens)"),
        OverflowCase(lesson, 600, 2, "the page's second try-it (compress 2, 600 tokens)"),
        OverflowCase(tuple(lesson4_run_sizes()), 600, 4, "the lesson's run in notebook 05, at 600 tokens"),
        OverflowCase((*lesson[:10], statement, 100, *lesson[10:]), 600, 4,
                     "a pasted 480-token bank statement as turn 6, at 600 tokens"),
        OverflowCase((50, 50, 50, 50, 50, 50), 200, 2, "a message that brings the buffer exactly to the budget"),
        OverflowCase((20, 150, 20, 30, 20, 30), 100, 2, "a reply bigger than the budget with its own question"),
        OverflowCase((10, 10, 10, 10, 10, 10, 75, 10, 10, 10, 10, 10), 100, 2, "a long question after short turns"),
        OverflowCase((30, 40, 30, 40, 30), 120, 4, "a reply arriving while the buffer holds a whole turn and its "
                     "question"),
        OverflowCase((10, 60, 10, 20, 10, 60, 10), 100, 4, "an overflow right after an exact fit"),
        OverflowCase((10, 10, 30, 30, 40, 10), 100, 2, "a fold that leaves the buffer and the message exactly at "
                     "the budget"),
    )


# The smallest cases (fewest messages, then smallest sizes) on which each named mistake parts from the memory,
# found by an exhaustive search over conversations of up to 6 messages of 1 to 4 tokens (the last one, which
# needs 10 messages, by hand); tests/test_lesson4_exercises.py checks that each still separates a mistake.
SMALLEST: tuple[tuple[tuple[int, ...], int, int], ...] = (
    ((3,), 2, 2), ((1, 2), 2, 2), ((1, 1, 1), 2, 2), ((1, 1, 1), 3, 2), ((1, 1, 1, 1), 2, 2), ((1, 1, 1, 1, 3), 4, 2),
    ((1, 1, 1, 1, 3, 1), 4, 2), ((1, 1, 1, 1, 2, 1), 4, 2), ((1, 1, 1, 1, 1, 2), 4, 2),
    ((1, 1, 1, 1, 1, 1, 1, 1, 6, 2), 9, 4))


def _random_cases(count: int = 300, seed: int = 41) -> tuple[OverflowCase, ...]:
    """Messages of three scales with exact-fit, small and large budgets; runs of short turns before a long one."""
    rng = random.Random(seed)
    cases = []
    for index in range(count):
        kind = index % 4
        if kind == 3:
            shorts = [rng.randint(1, 6) for _ in range(rng.randint(6, 16))]
            budget = sum(shorts) + rng.randint(0, 3)
            sizes = shorts + [rng.randint(budget // 3, budget)] + [rng.randint(1, 6) for _ in range(rng.randint(0, 5))]
            cases.append(OverflowCase(tuple(sizes), max(2, budget), rng.choice((4, 6))))
            continue
        scale = rng.choice((5, 30, 150))
        sizes = [rng.choice((rng.randint(1, scale), rng.randint(scale, 3 * scale), rng.randint(3 * scale, 8 * scale)))
                 for _ in range(rng.randint(2, 20))]
        budget = (sum(sizes[:rng.randint(1, len(sizes))]) if kind == 0 else
                  rng.randint(2, 4 * scale) if kind == 1 else rng.randint(4 * scale, 16 * scale))
        cases.append(OverflowCase(tuple(sizes), max(2, budget), rng.choice((2, 2, 4, 4, 6))))
    return tuple(cases)


CASES = _fixed_cases() + tuple(OverflowCase(*case) for case in SMALLEST) + _random_cases()


def _refuse(name: str, case: OverflowCase, args: tuple, answer: Any) -> Feedback | None:
    """The verdict on an answer (of function ``name``) that changed its list or is not a list of whole numbers."""
    if args[0] != list(case.sizes):
        return Feedback(CHECK.number, WRONG, (
            f"{name} changed the list it was given: sizes was {list(case.sizes)} and is {args[0]} after the call. "
            "The caller still needs its list: read it, do not change it."),
            "a list given to a function is the caller's own list, not a copy: pop, remove, del and assignments to its "
            "items change it for the caller too", "changes the caller's list")
    wrong = _wrong_type(answer)
    return wrong and Feedback(CHECK.number, WRONG, f"{wrong} (on {case.describe()}).",
                              "the lesson's run should give [6, 8, 10]: print what your function returns for it",
                              "wrong type")


def _wrong_type(answer: Any) -> str | None:
    """What is wrong with the type of an answer (None: a list of whole numbers)."""
    if answer is None:
        return "your function returned None: did you forget `return`?"
    if isinstance(answer, (bool, int, float)):
        return (f"your function returned {answer!r}, a number; the exercise asks for the list of the message "
                "numbers that overflow, not how many there are")
    if isinstance(answer, tuple):
        return f"your function returned a tuple, {answer!r}; the exercise asks for a list"
    if not isinstance(answer, list) or any(isinstance(n, bool) or not isinstance(n, int) for n in answer):
        return f"your function returned {answer!r}; the exercise asks for a list of whole numbers such as [6, 8, 10]"
    return None


def _first_difference(case: OverflowCase, answer: list[int], expected: list[int]) -> str:
    """What the memory does at the first message where the answer and the memory part ways."""
    if set(answer) == set(expected):
        return "each message that overflows appears once, in order"
    number = min(set(answer) ^ set(expected))
    if not 1 <= number <= len(case.sizes):
        return f"there is no message {number}: the messages are numbered 1 to {len(case.sizes)}"
    step = memory_steps(case)[number - 1]
    before = step.would_reach - step.message_tokens
    sum_ = f"{before} + {step.message_tokens} = {step.would_reach}"
    if step.overflow:
        happened = (f"{sum_}, over the budget of {case.budget}: the memory folds its oldest {step.messages_folded} "
                    "messages, then stores it")
    elif step.would_reach > case.budget:
        happened = (f"{sum_}, over the budget of {case.budget}, but the buffer holds no whole turn to fold, so "
                    "nothing is folded and it is no overflow")
    else:
        happened = f"{sum_}, within the budget of {case.budget}: it fits"
    what = f"{'user message' if step.role == 'user' else 'reply'} {step.turn}, {_tokens(step.message_tokens)}"
    return (f"message {number} ({what}) meets a buffer of {_tokens(before)}: {happened}; your answer has "
            f"{'an overflow there' if number in answer else 'none there'}")


def _tokens(n: int) -> str:
    return f"{n} token{'s' if n != 1 else ''}"


CHECK = Exercise("4.1", CASES, lambda case: (list(case.sizes), case.budget, case.compress),
                 "write the body of overflows_at", START, MISTAKES, (
                     "play the smallest case by hand, message by message, writing down the buffer's tokens before each "
                     "one and what the memory does; then print what your function holds at the message named above"))


def grade_overflows_at(overflows_at: Callable[[list[int], int, int], list[int]]) -> Feedback:
    """Exercise 4.1: ``overflows_at(sizes, budget, messages_to_compress)`` must give the numbers of the messages
    (1 = the first) whose storing makes ``SummaryBufferMemory`` overflow."""
    def example(case: OverflowCase, mine: list[int]) -> str:
        differ = set(mine) ^ set(memory_overflows_at(case))
        if differ and 1 <= min(differ) < len(case.sizes):  # cut after the first difference, if the answer still differs
            shorter = OverflowCase(case.sizes[:min(differ)], case.budget, case.compress)
            cut = next(CHECK.runs(overflows_at, (shorter,)))[2]
            if isinstance(cut, list) and _wrong_type(cut) is None and cut != memory_overflows_at(shorter):
                case, mine = shorter, cut
        right = memory_overflows_at(case)
        return (f"{case.describe()}; the memory overflows at {right}, yours at {mine}. Where it starts: "
                f"{_first_difference(case, mine, right)}.")

    answers = CHECK.answers(overflows_at, functools.partial(_refuse, name_of(overflows_at)), OverflowCase.describe)
    return answers if isinstance(answers, Feedback) else CHECK.compare(answers, memory_overflows_at, (
        f"all {len(CASES)} cases give the memory's overflows: the lesson's table, both try-its, the lesson's run "
        "(messages 6, 8 and 10: storing replies 3, 4 and 5), a pasted document, the exact fit, a reply too big to "
        "fit, and random conversations."), example, lambda case: (len(case.sizes), sum(case.sizes), case.budget))


check_overflows_at = checker(grade_overflows_at, "check_overflows_at", "overflows_at")
