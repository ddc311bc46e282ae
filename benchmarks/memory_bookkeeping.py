"""Bookkeeping cost per turn of both memory classes over a long scripted conversation.

Prints figures; asserts nothing. Compares the classes (each message counted once, running
totals) with variants that recount the whole verbatim part on every add, as the lesson's
``buffer_tokens()`` does. Target: the whole 10,000-turn run under a second per class, and a
cost per turn that stays flat as the conversation grows.

    python benchmarks/memory_bookkeeping.py [--turns 10000]
"""
from __future__ import annotations

import argparse
import statistics
import time

from helpers.memory import SummaryBufferMemory, SummaryMemory, turn_range_stub
from helpers.tokens import count_tokens, encoding


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


def scripted_messages(turns: int) -> list[tuple[str, str]]:
    """A deterministic conversation whose messages vary in length (10 to ~150 tokens)."""
    messages = []
    for turn in range(1, turns + 1):
        messages.append(("user", f"Turn {turn}: my expenses this month were ₹{turn * 37 % 90_000:,}. "
                                 + "What should I do next? " * (turn % 4)))
        messages.append(("assistant", f"For turn {turn}, keep an emergency fund of six months. "
                                      + "Review your SIP and your FD maturity dates. " * (turn % 9)))
    return messages


def time_run(memory: SummaryMemory | SummaryBufferMemory, messages: list[tuple[str, str]],
             window: int) -> tuple[float, list[float]]:
    """Total seconds, and mean microseconds per turn for each window of turns."""
    per_window, start_all = [], time.perf_counter()
    for offset in range(0, len(messages), 2 * window):
        start = time.perf_counter()
        for role, content in messages[offset:offset + 2 * window]:
            memory.add_message(role, content)
        per_window.append((time.perf_counter() - start) / window * 1e6)
    return time.perf_counter() - start_all, per_window


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--budget", type=int, default=2000, help="max_buffer_tokens for the buffer memories")
    args = parser.parse_args()
    encoding()  # load the tokenizer outside the timings
    messages = scripted_messages(args.turns)
    window = max(args.turns // 10, 1)
    variants = [
        ("SummaryMemory (4, keep 2)", lambda: SummaryMemory("system", turn_range_stub, 4, 2)),
        ("  recounting variant", lambda: RecountingSummaryMemory("system", turn_range_stub, 4, 2)),
        ("SummaryMemory (40, keep 20)", lambda: SummaryMemory("system", turn_range_stub, 40, 20)),
        ("  recounting variant", lambda: RecountingSummaryMemory("system", turn_range_stub, 40, 20)),
        (f"SummaryBufferMemory ({args.budget} tokens)", lambda: SummaryBufferMemory("system", turn_range_stub, args.budget)),
        ("  recounting variant", lambda: RecountingSummaryBufferMemory("system", turn_range_stub, args.budget)),
    ]
    print(f"{args.turns:,} turns ({len(messages):,} messages), stub summariser; "
          f"µs per turn in each tenth of the run")
    print(f"{'variant':<36} {'total s':>8} {'first':>7} {'last':>7} {'median':>7} {'last/first':>10}")
    for name, make in variants:
        memory = make()
        total, windows = time_run(memory, messages, window)
        print(f"{name:<36} {total:>8.3f} {windows[0]:>7.1f} {windows[-1]:>7.1f} "
              f"{statistics.median(windows):>7.1f} {windows[-1] / windows[0]:>10.2f}")
        assert len(memory.archive) == len(messages)  # sanity: nothing was lost on the way


if __name__ == "__main__":
    main()
