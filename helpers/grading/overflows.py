"""Exercise 4.1 (notebook 04): at which messages does the buffer overflow? Three rules are right: the notebook's
(what ``SummaryBufferMemory`` does: more whole turns fold while the message still does not fit, and a fold of
nothing is no overflow), the page's ``analyse()`` (one fold of messages_to_compress, an overflow counted even when
nothing folds) and the page's class (one fold, nothing folded is no overflow). Each named mistake is ``simulate``
with one thing changed, or the memory's answer read another way."""
from __future__ import annotations

import dataclasses
import functools
import numbers
import operator
import random
from dataclasses import dataclass
from typing import Any

from helpers.base.tokens import count_tokens, filler_text
from helpers.display.reference import lesson4_run_sizes
from helpers.grading.runner import WRONG, Exercise, Feedback, Mistake, checker, name_of
from helpers.lessons.data import lesson4
from helpers.memory.stubs import turn_range_stub
from helpers.memory.summary_buffer import SummaryBufferMemory

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

@functools.lru_cache(maxsize=1024)
def memory_overflows_at(case: OverflowCase) -> list[int]:
    """The messages whose storing made ``SummaryBufferMemory`` overflow (messages of the case's sizes)."""
    memory = SummaryBufferMemory("s", turn_range_stub, max_buffer_tokens=case.budget,
                                 messages_to_compress_on_overflow=case.compress)
    found = []
    for number, size in enumerate(case.sizes, start=1):
        before = memory.overflow_count
        memory.add_message("user" if number % 2 else "assistant", filler_text(size))
        found += [number] * (memory.overflow_count > before)
    return found

def simulate(case: OverflowCase, until_fit: bool = True, count_empty: bool = False, over: Any = operator.gt,
             unit: int = 2, store_first: bool = False, incoming: bool = True, fold_all: bool = False,
             remove: bool = True, compress: int | None = None, steps: list | None = None) -> list[int]:
    """The overflows of a buffer kept as a list of sizes: the notebook's rule at the defaults (a test holds it to the
    memory's), each argument changing one thing; ``steps`` collects (buffer before, messages folded)."""
    buffer: list[int] = []
    found = []
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

def _m(name: str, rule: Any, says: str, hint: str) -> Mistake:
    return Mistake(name, rule, says, hint)

_WHOLE = ("when a reply arrives, its own question is the last message in the buffer: what does a fold do with a "
          "question whose reply is not stored yet?")
_SAME = "compare the two sides of your test when they are equal: is a buffer of exactly the budget over it?"
MISTAKES = (
    _m("counts a fold of nothing", functools.partial(simulate, count_empty=True), "you fold more whole turns until "
       "the message fits (the notebook's rule), but count an overflow when there is no whole turn to fold. The "
       "notebook's rule then folds nothing and counts nothing (the page's analyse() counts it, but folds only once)",
       "an overflow is a fold, one summariser call: what is there to fold when the first message arrives?"),
    _m("overflows on the budget", functools.partial(simulate, over=operator.ge), "a message that brings the buffer "
       "exactly to max_buffer_tokens fits: a buffer of exactly the budget is not over it", _SAME),
    _m("stores, then tests", functools.partial(simulate, store_first=True), "your rule stores the message first and "
       "tests afterwards, so a fold can take the message itself (and a reply with its question)", "would the buffer "
       "plus the message about to be stored pass the budget? That decides the fold, before the message is stored"),
    _m("tests without the message", functools.partial(simulate, incoming=False), "your rule tests the buffer alone. "
       "Whether there is an overflow depends on the message about to be stored too", "a long message arriving at a "
       "buffer that is still under the budget: does it fit?"),
    _m("folds a waiting question", functools.partial(simulate, unit=1), "your rule folds messages one by "
       "one, so a question can leave the buffer without its reply", _WHOLE),
    _m("folds every whole turn", functools.partial(simulate, fold_all=True), "an overflow of yours folds every whole "
       "turn in the buffer; the memory folds fewer and keeps the recent ones word for word", "the recent turns are "
       "the ones the next reply needs word for word: how many must leave?"),
    _m("the folded messages stay", functools.partial(simulate, remove=False), "your rule counts the overflows but "
       "keeps the folded messages in the buffer. Folded messages leave it: they are in the summary now", "after an "
       "overflow, how many tokens does the buffer hold?"),
    _m("messages_to_compress ignored", functools.partial(simulate, compress=4), "your rule always folds as if "
       "messages_to_compress were 4: it does not use the argument", "the page's second try-it sets "
       "messages_to_compress to 2: where does your function read it?"),
    _m("numbered from 0", lambda case: [n - 1 for n in memory_overflows_at(case)], "your numbers are one lower than "
       "the memory's: the first user message is message 1", "what number does your function give the first message?"),
    _m("turn numbers", lambda case: [(n + 1) // 2 for n in memory_overflows_at(case)], "you give turn numbers; the "
       "exercise asks for message numbers (reply 3 is message 6)", "each turn is two messages: a question and its "
       "reply"),
)

def _fixed_cases() -> tuple[OverflowCase, ...]:
    def sizes(reply: int) -> tuple[int, ...]:  # the lesson's user messages, each followed by a reply of this size
        return tuple(size for text in lesson4()["budget_analysis"]["user_messages"] for size in (count_tokens(text),
                                                                                                 reply))
    lesson = sizes(100)
    return (
        OverflowCase(lesson, 600, 4, "the lesson's table at 600 tokens (replies of 100)"),
        OverflowCase(lesson, 1500, 4, "the lesson's table at 1,500 tokens: nothing overflows"),
        OverflowCase(sizes(150), 300, 4, "the page's first try-it (replies of 150, 300 tokens)"),
        OverflowCase(lesson, 600, 2, "the page's second try-it (compress 2, 600 tokens)"),
        OverflowCase(tuple(lesson4_run_sizes()), 600, 4, "the lesson's run in notebook 05, at 600 tokens"),
        OverflowCase((*lesson[:10], 480, 100, *lesson[10:]), 600, 4, STATEMENT),
        OverflowCase((50, 50, 50, 50, 50, 50), 200, 2, "a message that brings the buffer exactly to the budget"),
        OverflowCase((20, 150, 20, 30, 20, 30), 100, 2, "a reply bigger than the budget with its own question"),
        OverflowCase((10, 10, 10, 10, 10, 10, 75, 10, 10, 10, 10, 10), 100, 2, "a long question after short turns"),
        OverflowCase((30, 40, 30, 40, 30), 120, 4, "a reply while the buffer holds a whole turn and its question"),
        OverflowCase((10, 60, 10, 20, 10, 60, 10), 100, 4, "an overflow right after an exact fit"),
        OverflowCase((10, 10, 30, 30, 40, 10), 100, 2, "a fold that leaves the buffer and the message at the budget"),
    )

STATEMENT = "a pasted 480-token bank statement as turn 6, at 600 tokens"  # notebook 04's statement, by o200k_base
# the smallest conversations (fewest messages, then smallest sizes) on which the named mistakes part from the rules
SMALLEST = (((3,), 2, 2), ((1, 2), 2, 2), ((1, 1, 1), 2, 2), ((1, 1, 1), 3, 2), ((1, 1, 1, 1), 2, 2),
            ((1, 1, 1, 1, 3), 4, 2), ((1, 1, 1, 1, 3, 1), 4, 2), ((1, 1, 1, 1, 2, 1), 4, 2), ((1, 1, 1, 1, 1, 2), 4, 2),
            ((1, 1, 1, 1, 1, 1, 1, 1, 6, 2), 9, 4))

def _random_cases(count: int = 300, seed: int = 41) -> tuple[OverflowCase, ...]:
    """Messages of three scales with exact-fit, small and large budgets; runs of short turns before a long one."""
    rng, cases = random.Random(seed), []
    for index in range(count):
        if index % 4 == 3:
            shorts = [rng.randint(1, 6) for _ in range(rng.randint(6, 16))]
            budget = sum(shorts) + rng.randint(0, 3)
            sizes = shorts + [rng.randint(budget // 3, budget)] + [rng.randint(1, 6) for _ in range(rng.randint(0, 5))]
            cases.append(OverflowCase(tuple(sizes), max(2, budget), rng.choice((4, 6))))
            continue
        scale = rng.choice((5, 30, 150))
        sizes = [rng.choice((rng.randint(1, scale), rng.randint(scale, 3 * scale), rng.randint(3 * scale, 8 * scale)))
                 for _ in range(rng.randint(2, 20))]
        budget = (sum(sizes[:rng.randint(1, len(sizes))]) if index % 4 == 0 else
                  rng.randint(2, 4 * scale) if index % 4 == 1 else rng.randint(4 * scale, 16 * scale))
        cases.append(OverflowCase(tuple(sizes), max(2, budget), rng.choice((2, 2, 4, 4, 6))))
    return tuple(cases)

CASES = _fixed_cases() + tuple(OverflowCase(*case) for case in SMALLEST) + _random_cases()

def _read(result: Any) -> Any:
    """A sequence or a generator of numbers as a list (inside the time bound); anything else as it is."""
    unordered = isinstance(result, (str, bytes, dict, set, frozenset)) or not hasattr(result, "__iter__")
    return result if unordered else list(result)

def _refuse(name: str, case: OverflowCase, args: tuple, answer: Any) -> Feedback | None:
    """The verdict on an answer (of function ``name``) that changed its list or is not whole numbers in order."""
    if args[0] != list(case.sizes):
        return Feedback("4.1", WRONG, f"{name} changed the list it was given: sizes was {list(case.sizes)} and is "
                        f"{args[0]} after the call. The caller still needs its list: read it, do not change it.",
                        "a list given to a function is the caller's own list, not a copy: pop, remove, del and "
                        "assignments to its items change it for the caller too", "changes the caller's list")
    if isinstance(answer, list) and all(isinstance(n, numbers.Integral) and not isinstance(n, bool) for n in answer):
        return None
    what = ("None: did you forget `return`?" if answer is None else f"{answer!r}, a number; the exercise asks for the "
            "numbers of the messages that overflow, not how many there are" if isinstance(answer, numbers.Number)
            else f"{answer!r}; the exercise asks for the message numbers in order, such as [6, 8, 10]")
    return Feedback("4.1", WRONG, f"{name} returned {what} (on {case.describe()}).", "the lesson's run should give "
                    "[6, 8, 10]: print what your function returns for it", "wrong type")

def _example(case: OverflowCase, mine: list[int]) -> str:
    """The case, both answers, and what the memory does at the first message where they part."""
    right, steps = memory_overflows_at(case), []
    simulate(case, steps=steps)
    differ = set(mine) ^ set(right)
    where = "each message that overflows appears once, in order"
    if differ and not 1 <= (number := min(differ)) <= len(case.sizes):
        where = f"there is no message {number}: the messages are numbered 1 to {len(case.sizes)}"
    elif differ:
        (held, folded), size = steps[number - 1], case.sizes[number - 1]
        total = f"{held} + {size} = {held + size}"
        where = (f"message {number} ({'user message' if number % 2 else 'reply'} {(number + 1) // 2}, {_tokens(size)}) "
                 f"meets a buffer of {_tokens(held)}: " + (
                     f"{total}, over the budget of {case.budget}: the memory folds its oldest {folded} messages, then "
                     "stores it" if folded else f"{total}, over the budget of {case.budget}, but the buffer holds no "
                     "whole turn to fold, so nothing folds and it is no overflow" if held + size > case.budget else
                     f"{total}, within the budget of {case.budget}: it fits") +
                 f"; your answer has {'an overflow there' if number in mine else 'none there'}")
    return f"{case.describe()}; the memory overflows at {right}, yours at {mine}. Where it starts: {where}."

def _correct(rule: int) -> str:
    statement = next(case for case in CASES if case.about == STATEMENT)
    rules = ("the memory's overflows", "the overflows of the page's analyse()", "the overflows of the page's class")
    said = (f"all {len(CASES)} cases give {rules[rule]}: the lesson's table, both try-its, the lesson's run "
            "(messages 6, 8 and 10: storing replies 3, 4 and 5), a pasted document, the exact fit, a reply too big to "
            "fit, and random conversations.")
    return said if rule == 0 else said + (
        " The notebook's analyse asks for more than the page: it folds more whole turns while the message still "
        "does not fit, and counts no overflow when there is nothing to fold" + (" (the page's class does not count "
        "one either)" if rule == 2 else "") + f". On the pasted bank statement the notebook's rule gives "
        f"{memory_overflows_at(statement)}, yours {(PAGE_ANALYSE, PAGE_CLASS)[rule - 1](statement)}.")

CHECK = Exercise(
    "4.1", CASES, lambda case: (list(case.sizes), case.budget, case.compress),
    (memory_overflows_at, PAGE_ANALYSE, PAGE_CLASS), "write the body of overflows_at", "go through the messages one "
    "by one, as the memory does, with a list of the sizes the buffer holds; print it at each step of the lesson's run",
    MISTAKES, "play the smallest case by hand, message by message, writing down the buffer's tokens before each one "
    "and what the memory does; then print what your function holds at the message named above", read=_read,
    example=_example, key=lambda case: (len(case.sizes), sum(case.sizes), case.budget), correct=_correct)

def grade_overflows_at(overflows_at: Any) -> Feedback:
    """Exercise 4.1: ``overflows_at(sizes, budget, messages_to_compress)`` must give the numbers of the messages
    (1 = the first) whose storing makes the buffer overflow, by the notebook's rule or the page's."""
    return dataclasses.replace(CHECK, refuse=functools.partial(_refuse, name_of(overflows_at))).grade(
        overflows_at, OverflowCase.describe)

check_overflows_at = checker(grade_overflows_at, "check_overflows_at", "overflows_at")

def _tokens(n: int) -> str:
    return f"{n} token{'s' * (n != 1)}"
