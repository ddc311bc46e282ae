"""Exercise 4.1 (notebook 04): at which messages does the buffer overflow? Three rules are right: the notebook's
(``simulate``, held to ``SummaryBufferMemory`` by a test: whole turns fold until the message fits, a fold of nothing
is no overflow), the page's ``analyse()`` (one fold, an overflow counted even when nothing folds) and the page's
class (one fold, no overflow when nothing folds). A named mistake is ``simulate`` with one thing changed."""
from __future__ import annotations

import functools
import numbers
import operator
import random
from typing import Any, NamedTuple

from helpers.base.tokens import count_tokens
from helpers.display.lines import lesson4_run_sizes
from helpers.grading.runner import WRONG, Exercise, Feedback, Mistake, checker, drawn
from helpers.lessons.data import lesson4


class OverflowCase(NamedTuple):
    """Messages of these token sizes (user, reply, user, ...), a budget, messages compressed per overflow."""
    sizes: tuple[int, ...]
    budget: int
    compress: int
    about: str = ""

    def describe(self) -> str:
        shown = list(self.sizes) if len(self.sizes) <= 14 else "[" + ", ".join(map(str, self.sizes[:12])) + ", ...]"
        setting = f"sizes {shown}, budget {self.budget}, messages_to_compress {self.compress}"
        return f"{self.about}: {setting}" if self.about else setting


def simulate(case: OverflowCase, until_fit: bool = True, count_empty: bool = False, over: Any = operator.gt,
             unit: int = 2, store_first: bool = False, incoming: bool = True, fold_all: bool = False,
             remove: bool = True, compress: int | None = None, steps: list | None = None) -> list[int]:
    """The overflows of a buffer kept as a list of sizes: the notebook's rule at the defaults, each argument changing
    one thing; ``steps`` collects (buffer before, messages folded)."""
    buffer, found = [], []
    for number, size in enumerate(case.sizes, start=1):
        held, coming, folded = sum(buffer), size * (incoming and not store_first), 0
        buffer += [size] * store_first
        if over(sum(buffer) + coming, case.budget):
            whole = len(buffer) // unit * unit  # unit 2: whole turns only (a question waits for its reply)
            folded = whole if fold_all else min(compress or case.compress, whole) // unit * unit
            while until_fit and folded < whole and over(sum(buffer[folded:]) + coming, case.budget):
                folded += unit
            if folded or count_empty:
                found.append(number)
                buffer = buffer[folded:] if remove else buffer
        steps is not None and steps.append((held, folded))
        buffer += [size] * (not store_first)
    return found


PAGE_ANALYSE = functools.partial(simulate, until_fit=False, count_empty=True)
PAGE_CLASS = functools.partial(simulate, until_fit=False)

_SIM = functools.partial
MISTAKES = tuple(Mistake(name, rule, says, hint) for name, rule, says, hint in (
    ("counts a fold of nothing", _SIM(simulate, count_empty=True), "you fold more whole turns until the message fits "
     "(the notebook's rule) but count an overflow when no whole turn can fold; then the notebook's rule counts "
     "nothing (the page's analyse() counts it, but folds only once)", "what can fold when the first message arrives?"),
    ("overflows on the budget", _SIM(simulate, over=operator.ge), "a message that brings the buffer exactly to "
     "max_buffer_tokens fits: a buffer of exactly the budget is not over it", "compare the two sides of your test "
     "when they are equal"),
    ("stores, then tests", _SIM(simulate, store_first=True), "you store the message first and test afterwards, so a "
     "fold can take the message itself", "the buffer plus the message about to be stored decides the fold"),
    ("tests without the message", _SIM(simulate, incoming=False), "you test the buffer alone; the message about to be "
     "stored counts too", "a long message arriving at a buffer still under the budget: does it fit?"),
    ("folds a waiting question", _SIM(simulate, unit=1), "you fold messages one by one, so a question can leave the "
     "buffer without its reply", "when a reply arrives, its question is the last message in the buffer: can a fold "
     "take it without its reply?"),
    ("folds every whole turn", _SIM(simulate, fold_all=True), "an overflow of yours folds every whole turn; the memory "
     "folds fewer and keeps the recent ones word for word", "how many messages must leave?"),
    ("the folded messages stay", _SIM(simulate, remove=False), "you count the overflows but keep the folded messages "
     "in the buffer; folded messages leave it for the summary", "after an overflow, how many tokens are left?"),
    ("messages_to_compress ignored", _SIM(simulate, compress=4), "you always fold as if messages_to_compress were 4",
     "the page's second try-it sets it to 2: where does your function read it?"),
    ("numbered from 0", lambda case: [n - 1 for n in simulate(case)], "your numbers are one lower than the "
     "memory's: the first user message is message 1", "what number does your function give the first message?"),
    ("turn numbers", lambda case: [(n + 1) // 2 for n in simulate(case)], "you give turn numbers; the "
     "exercise asks for message numbers (reply 3 is message 6)", "each turn is two messages"),
))

STATEMENT = "a pasted 480-token bank statement as turn 6, at 600 tokens"  # notebook 04's statement, by o200k_base


def _draw(rng: random.Random, index: int) -> OverflowCase:
    """A random conversation of one of three scales and budgets; every fourth one short turns, then a long message."""
    scale = rng.choice((5, 30, 150))
    sizes = [rng.choice((rng.randint(1, scale), rng.randint(scale, 3 * scale), rng.randint(3 * scale, 8 * scale)))
             for _ in range(rng.randint(2, 20))]
    if index % 4 == 3:
        sizes = [rng.randint(1, 6) for _ in range(rng.randint(6, 16))]
        sizes += [rng.randint(sum(sizes) // 3, sum(sizes))] + [rng.randint(1, 6) for _ in range(rng.randint(0, 5))]
    budget = (sum(sizes[:rng.randint(1, len(sizes))]) if index % 4 in (0, 3) else
              rng.randint(2, 4 * scale) if index % 4 == 1 else rng.randint(4 * scale, 16 * scale))
    return OverflowCase(tuple(sizes), max(2, budget), rng.choice((2, 4, 4, 6)))


_TEXTS = lesson4()["budget_analysis"]["user_messages"]
_LESSON, _WIDE = (tuple(t for text in _TEXTS for t in (count_tokens(text), reply)) for reply in (100, 150))
# the lesson's figures and the edges, the smallest cases where the mistakes part from the rules (found by an
# exhaustive search over short conversations), and 300 random ones
CASES = drawn([OverflowCase(*case) for case in (
    (_LESSON, 600, 4, "the lesson's table at 600 tokens (replies of 100)"),
    (_LESSON, 1500, 4, "the lesson's table at 1,500 tokens: nothing overflows"),
    (_WIDE, 300, 4, "the page's first try-it (replies of 150, 300 tokens)"),
    (_LESSON, 600, 2, "the page's second try-it (compress 2, 600 tokens)"),
    (tuple(lesson4_run_sizes()), 600, 4, "the lesson's run in notebook 05, at 600 tokens"),
    ((*_LESSON[:10], 480, 100, *_LESSON[10:]), 600, 4, STATEMENT),
    ((50,) * 6, 200, 2, "a message that brings the buffer exactly to the budget"),
    ((20, 150, 20, 30, 20, 30), 100, 2, "a reply bigger than the budget with its own question"),
    ((10,) * 6 + (75,) + (10,) * 5, 100, 2, "a long question after short turns"),
    ((10, 60, 10, 20, 10, 60, 10), 100, 4, "an overflow right after an exact fit"),
    ((3,), 2, 2), ((1, 2), 2, 2), ((1, 1, 1), 2, 2), ((1, 1, 1), 3, 2), ((1, 1, 1, 1), 2, 2),
    ((1, 1, 1, 1, 3), 4, 2), ((1, 1, 1, 1, 3, 1), 4, 2), ((1, 1, 1, 1, 2, 1), 4, 2), ((1,) * 5 + (2,), 4, 2),
    ((1,) * 8 + (6, 2), 9, 4))], 300, 41, _draw)


def _read(result: Any) -> Any:
    """A sequence or a generator of numbers as a list (inside the time bound); anything else as it is."""
    unordered = isinstance(result, (str, bytes, dict, set, frozenset)) or not hasattr(result, "__iter__")
    return result if unordered else list(result)


def _refuse(name: str, case: OverflowCase, args: tuple, answer: Any) -> Feedback | None:
    """The verdict on an answer (of function ``name``) that changed the list it was given."""
    if args[0] != list(case.sizes):
        return Feedback("4.1", WRONG, f"{name} changed the list it was given: sizes was {list(case.sizes)} and is "
                        f"{args[0]} after the call. The caller still needs its list: read it, do not change it.",
                        "pop, remove, del, sort and assignments to its items change the caller's own list",
                        "changes the caller's list")
    return None


def _tokens(n: int) -> str:
    return f"{n} token{'s' * (n != 1)}"


def _example(case: OverflowCase, mine: list[int]) -> str:
    """The case, both answers, and what the memory does at the first message where they part."""
    steps: list[tuple[int, int]] = []
    right = simulate(case, steps=steps)
    where = "each message that overflows appears once, in order"
    if (differ := set(mine) ^ set(right)) and not 1 <= (number := min(differ)) <= len(case.sizes):
        where = f"there is no message {number}: the messages are numbered 1 to {len(case.sizes)}"
    elif differ:
        (held, folded), size = steps[number - 1], case.sizes[number - 1]
        sum_ = f"{held} + {size} = {held + size}, {'over' if held + size > case.budget else 'within'} the budget"
        where = (f"message {number} ({'user message' if number % 2 else 'reply'} {(number + 1) // 2}, {_tokens(size)}) "
                 f"meets a buffer of {_tokens(held)}: {sum_}: " + (
                     f"the memory folds its oldest {folded} messages, then stores it" if folded else "but no whole "
                     "turn can fold, so nothing folds: no overflow" if held + size > case.budget else "it fits")
                 + f"; your answer has {'an overflow there' if number in mine else 'none there'}")
    return f"{case.describe()}; the memory overflows at {right}, yours at {mine}. Where it starts: {where}."


def _correct(rule: int) -> str:
    statement = next(case for case in CASES if case.about == STATEMENT)
    whose = ("the memory's overflows", "the overflows of the page's analyse()", "the overflows of the page's class")
    said = (f"all {len(CASES)} cases give {whose[rule]}: the lesson's table, both try-its, the lesson's run (messages "
            "6, 8 and 10), a pasted document, the exact fit, a reply too big to fit, and random conversations.")
    return said + ("" if rule == 0 else " The notebook's analyse asks for more than the page: it folds more whole "
                   "turns while the message does not fit, and counts no overflow when nothing can fold. On the pasted "
                   f"bank statement it gives {simulate(statement)}, yours "
                   f"{(PAGE_ANALYSE, PAGE_CLASS)[rule - 1](statement)}.")


CHECK = Exercise(
    "4.1", CASES, lambda case: (list(case.sizes), case.budget, case.compress),
    (simulate, PAGE_ANALYSE, PAGE_CLASS), "write the body of overflows_at", "go through the messages one "
    "by one, as the memory does, with a list of the sizes the buffer holds; print it at each step of the lesson's run",
    MISTAKES, "play the smallest case by hand, message by message, writing down the buffer's tokens before each one "
    "and what the memory does; then print what your function holds at the message named above", refuse=_refuse,
    read=_read, wanted=(
        lambda answer: isinstance(answer, list) and all(isinstance(n, numbers.Integral) and not isinstance(n, bool)
                                                        for n in answer), "the message numbers in order, [6, 8, 10]"),
    example=_example, key=lambda case: (len(case.sizes), sum(case.sizes), case.budget), correct=_correct)


def grade_overflows_at(overflows_at: Any) -> Feedback:
    """Exercise 4.1: ``overflows_at(sizes, budget, messages_to_compress)`` must give the numbers of the messages
    (1 = the first) whose storing makes the buffer overflow, by the notebook's rule or the page's."""
    return CHECK.grade(overflows_at, OverflowCase.describe)


check_overflows_at = checker(grade_overflows_at, "overflows_at")
