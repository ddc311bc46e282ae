"""Bookkeeping cost per turn of both memory classes over a long scripted conversation.

Prints figures; asserts nothing. Two comparisons:

* against the **floor**: the least any memory with exact token counts must do, counting each
  message once with tiktoken. A turn of the classes does that, builds the request and, now and
  then, folds (with a stub summariser). A fold must also call the summariser and count the new
  summary once, so the table shows a second floor that adds exactly that for the folds the
  variant made ("x floor+folds"). Target: 1.3x the floor or less where folds are rare, and 1.3x
  floor+folds everywhere.
* against variants that **recount** the whole verbatim part on every add, as the lesson's
  ``buffer_tokens()`` does: their cost per turn grows with the buffer.

The cost per turn must stay flat as the conversation grows (last tenth / first tenth near 1).

    python benchmarks/memory_bookkeeping.py [--turns 10000] [--repeat 3]
"""
from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from helpers.base.tokens import count_tokens, encoding
from helpers.memory.stubs import turn_range_stub
from helpers.memory.summary import SummaryMemory
from helpers.memory.summary_buffer import SummaryBufferMemory


class RecountingSummaryBufferMemory(SummaryBufferMemory):
    """The naive variant: re-tokenises every buffered message before each add."""

    def messages_to_fold(self, incoming_tokens: int) -> int:
        self._verbatim_tokens = sum(count_tokens(m.content) for m in self._archive[self._verbatim_start:])
        return super().messages_to_fold(incoming_tokens)


class RecountingSummaryMemory(SummaryMemory):
    """The naive variant: re-tokenises the verbatim turns on every add."""

    def add_message(self, role: str, content: str) -> None:
        super().add_message(role, content)
        self._verbatim_tokens = sum(count_tokens(m.content) for m in self._archive[self._verbatim_start:])


class CountOnce:
    """The floor: count each message once, keep nothing else."""

    def __init__(self) -> None:
        self.total = 0

    def add_message(self, role: str, content: str) -> None:
        self.total += count_tokens(content)

    def get_messages_for_api(self) -> list:
        return []


def scripted_messages(turns: int) -> list[tuple[str, str]]:
    """A deterministic conversation whose messages vary in length (10 to ~150 tokens)."""
    messages = []
    for turn in range(1, turns + 1):
        messages.append(("user", f"Turn {turn}: my expenses this month were ₹{turn * 37 % 90_000:,}. "
                                 + "What should I do next? " * (turn % 4)))
        messages.append(("assistant", f"For turn {turn}, keep an emergency fund of six months. "
                                      + "Review your SIP and your FD maturity dates. " * (turn % 9)))
    return messages


def time_run(memory, messages: list[tuple[str, str]], window: int) -> tuple[float, list[float], int]:
    """Total seconds, and mean microseconds per turn for each window of turns. A turn is what
    ``chat()`` asks of a memory: add the question, build the request, add the reply."""
    per_window, start_all = [], time.perf_counter()
    for offset in range(0, len(messages), 2 * window):
        start = time.perf_counter()
        chunk = messages[offset:offset + 2 * window]
        for (_, question), (_, reply) in zip(chunk[::2], chunk[1::2]):
            memory.add_message("user", question)
            memory.get_messages_for_api()
            memory.add_message("assistant", reply)
        per_window.append((time.perf_counter() - start) / window * 1e6)
    return time.perf_counter() - start_all, per_window, getattr(memory, "summary_count", 0)


def fold_floor(folds: int) -> float:
    """Seconds for the least a fold must do: one summariser call (the stub) and one count of its summary."""
    start = time.perf_counter()
    summary = None
    for _ in range(folds):
        summary = turn_range_stub([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}], summary)
        count_tokens(summary)
    return time.perf_counter() - start


def best_of(repeat: int, make: Callable[[], object], messages, window) -> tuple[float, list[float], int]:
    runs = [time_run(make(), messages, window) for _ in range(repeat)]
    return min(runs, key=lambda run: run[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--budget", type=int, default=2000, help="max_buffer_tokens for the buffer memories")
    parser.add_argument("--repeat", type=int, default=3, help="runs per variant; the fastest is shown")
    args = parser.parse_args()
    encoding()  # load the tokenizer outside the timings
    messages = scripted_messages(args.turns)
    window = max(args.turns // 10, 1)
    floor_total, _, _ = best_of(args.repeat, CountOnce, messages, window)
    variants = [
        ("SummaryMemory (4, keep 2)", lambda: SummaryMemory("system", turn_range_stub, 4, 2)),
        ("  recounting variant", lambda: RecountingSummaryMemory("system", turn_range_stub, 4, 2)),
        ("SummaryMemory (40, keep 20)", lambda: SummaryMemory("system", turn_range_stub, 40, 20)),
        ("  recounting variant", lambda: RecountingSummaryMemory("system", turn_range_stub, 40, 20)),
        (f"SummaryBufferMemory ({args.budget} tokens)", lambda: SummaryBufferMemory("system", turn_range_stub, args.budget)),
        ("  recounting variant", lambda: RecountingSummaryBufferMemory("system", turn_range_stub, args.budget)),
    ]
    print(f"{args.turns:,} turns ({len(messages):,} messages), stub summariser, best of {args.repeat}; "
          f"µs per turn in each tenth of the run")
    print(f"floor (count each message once): {floor_total:.3f} s, {floor_total / args.turns * 1e6:.1f} µs per turn")
    print(f"{'variant':<36} {'total s':>8} {'first':>7} {'last':>7} {'median':>7} {'last/first':>10} {'folds':>6} "
          f"{'x floor':>8} {'x floor+folds':>13}")
    for name, make in variants:
        total, windows, folds = best_of(args.repeat, make, messages, window)
        with_folds = floor_total + min(fold_floor(folds) for _ in range(args.repeat))
        print(f"{name:<36} {total:>8.3f} {windows[0]:>7.1f} {windows[-1]:>7.1f} "
              f"{statistics.median(windows):>7.1f} {windows[-1] / windows[0]:>10.2f} {folds:>6} "
              f"{total / floor_total:>8.2f} {total / with_folds:>13.2f}")


if __name__ == "__main__":
    main()
