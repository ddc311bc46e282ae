"""Why the billed ``prompt_tokens`` exceed the tiktoken count of the messages: the lessons' billed figures against
o200k_base counts of the published parts, the gap split into a fixed part and a cost per message by a
least-squares line through lesson 3's points, checked on lesson 4's."""
from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from helpers.base.tokens import count_tokens
from helpers.lessons.data import lesson3, prompt, published_run
from helpers.memory.summary import SummaryMemory
from helpers.memory.types import SettingError


@dataclass(frozen=True)
class PromptPoint:
    """One published request: how many messages, its contents by tiktoken, what the endpoint billed."""
    label: str
    messages: int
    counted: int
    billed: int
    how: str  # the arithmetic behind ``counted``

    @property
    def gap(self) -> int:
        """Billed minus counted tokens."""
        return self.billed - self.counted


@dataclass(frozen=True)
class Overhead:
    """``gap ~ fixed + per_message * messages``, fitted by least squares."""
    fixed: float
    per_message: float

    def predict(self, messages: int) -> float:
        """The gap the line predicts for a request of ``messages`` messages."""
        return self.fixed + self.per_message * messages


def lesson3_points() -> list[PromptPoint]:
    """Turns 1, 3 and 5 of lesson 3's run: the ones whose contents the page lets us count."""
    run = published_run(3)["summary_run"]
    billed = {row["turn"]: (row["messages_sent"], row["prompt_tokens"]) for row in run["turn_lines"]}
    first, second = run["summarise_events"]
    users = [count_tokens(text) for text in lesson3()["summary_run"]["user_turns"]]
    system = count_tokens(prompt("fincoach_system"))
    heading = count_tokens(SummaryMemory.KIND.heading or "")  # the heading the lesson's requests carried
    parts = {
        1: [("system prompt", system), ("user 1", users[0])],
        3: [("system prompt", system), ("turns 1-2 ([SUMMARISE] line)", first["messages_tokens"]),
            ("user 3", users[2])],
        5: [("system prompt", system), ("summary heading", heading),
            ("summary ([SUMMARISE] line)", first["summary_tokens"]),
            ("turns 3-4 ([SUMMARISE] line)", second["messages_tokens"]), ("user 5", users[4])],
    }
    return [PromptPoint(f"lesson 3, turn {turn}", billed[turn][0], sum(n for _, n in items), billed[turn][1],
                        " + ".join(f"{n} {name}" for name, n in items) + f" = {sum(n for _, n in items)}")
            for turn, items in parts.items()]


def lesson4_point() -> PromptPoint:
    """Lesson 4's turn 6: 739 by tiktoken, 830 billed, in 5 messages (as the page's three overflows tell)."""
    request = published_run(4)["buffer_run"]["request_at_turn_6"]
    how = (f"{request['system_prompt_tokens']} system prompt + {request['memory_block_tokens']} summary block + "
           f"{request['buffer_tokens']} buffer = {request['total_tiktoken']}")
    return PromptPoint("lesson 4, turn 6", 5, request["total_tiktoken"], request["billed_prompt_tokens"], how)


def fit_overhead(points: Sequence[PromptPoint]) -> Overhead:
    """Least-squares line through (messages, gap); needs two different message counts."""
    if len({p.messages for p in points}) < 2:
        raise SettingError("points", points,
                           "fitting a fixed part and a per-message part needs points with different message counts")
    slope, intercept = statistics.linear_regression([p.messages for p in points], [p.gap for p in points])
    return Overhead(intercept, slope)
