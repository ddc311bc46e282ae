"""What a memory costs besides the model: its bookkeeping per turn against the count-once floor, the bytes it holds
per turn beyond its texts, ``save()`` and ``load()`` of a long conversation, and the worst case at each input bound.
Prints figures; asserts nothing.

The workload (every figure but the bounds): ``scripted_messages``, a deterministic conversation of ``--turns``
turns (10,000 by default) whose messages run from 10 to about 150 tokens (English with rupee amounts), fed to
summary memory (4 turns, keep 2), summary buffer memory (lesson 4's 600 tokens) and a sliding window (4 turns).
The summariser returns a fixed short text (no model), so the figures are the memories' own work. A turn is what
``chat()`` asks of a memory: add the question, build the request, add the reply.

* **Bookkeeping**: CPU time of this thread per turn, the median of ``--rounds`` rounds in which every memory and the
  floor (count each message once with tiktoken, keep nothing: the least a memory with exact counts must do) run the
  same conversation in turn, a block of turns at a time; ``x floor`` is taken within a round; ``last/first`` is the
  cost of the last tenth of a run over its first (flat: near 1).
* **Bytes a turn**: what the memory holds after the run, traced by ``tracemalloc``, less its texts (made before
  tracing), over the turns.
* **save / load**: one summary memory of the run saved to a file and loaded back (CPU time, best of three).
* **Bounds**: counting a message at ``max_message_chars`` written as its worst case for tiktoken (one unbroken run
  of letters) against ordinary text of that length; a 50 MB one-word message refused; a state file over
  ``MAX_STATE_BYTES`` refused from its size; and (``--state-bound``, slow) a state at that bound whose messages are
  each the worst case, loaded.

    python benchmarks/memory_bookkeeping.py [--turns 10000] [--rounds 3] [--state-bound]
"""
from __future__ import annotations

import argparse
import gc
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from helpers.base.tokens import count_tokens, encoding
from helpers.memory import state
from helpers.memory.rolling import RollingMemory
from helpers.memory.sliding_window import SlidingWindowMemory
from helpers.memory.summary import SummaryMemory
from helpers.memory.summary_buffer import SummaryBufferMemory


def fixed_summary(messages: list[dict[str, str]], existing_summary: str | None) -> str:
    return "a short summary"


class CountOnce:
    """The floor: count each message once, keep nothing else."""

    def __init__(self) -> None:
        self.total = 0

    def add_message(self, role: str, content: str) -> None:
        self.total += count_tokens(content)

    def get_messages_for_api(self) -> list:
        return []


MEMORIES = {
    "floor: count each message once": CountOnce,
    "summary memory (4, keep 2)": lambda: SummaryMemory("system", fixed_summary),
    "summary buffer memory (600)": lambda: SummaryBufferMemory("system", fixed_summary, max_buffer_tokens=600),
    "sliding window (4 turns)": lambda: SlidingWindowMemory("system", window_turns=4),
}


def scripted_messages(turns: int) -> list[tuple[str, str]]:
    """(question, reply) for each turn, 10 to ~150 tokens each."""
    return [(f"Turn {turn}: my expenses this month were ₹{turn * 37 % 90_000:,}. " + "What should I do next? " * (turn % 4),
             f"For turn {turn}, keep an emergency fund of six months. "
             + "Review your SIP and your FD maturity dates. " * (turn % 9)) for turn in range(1, turns + 1)]


def run_turns(memory: Any, turns: list[tuple[str, str]]) -> None:
    for question, reply in turns:
        memory.add_message("user", question)
        memory.get_messages_for_api()
        memory.add_message("assistant", reply)


def bookkeeping(turns: list[tuple[str, str]], rounds: int, block: int = 100) -> dict[str, list[tuple[float, float]]]:
    """Name -> (µs per turn, last tenth over first) for each round."""
    figures: dict[str, list[tuple[float, float]]] = {name: [] for name in MEMORIES}
    for _ in range(rounds):
        memories = {name: make() for name, make in MEMORIES.items()}
        spent = {name: [0.0] * 10 for name in MEMORIES}
        gc.collect()
        gc.disable()
        try:
            for start in range(0, len(turns), block):
                for name, memory in memories.items():
                    began = time.thread_time()
                    run_turns(memory, turns[start:start + block])
                    spent[name][start * 10 // len(turns)] += time.thread_time() - began
        finally:
            gc.enable()
        for name, tenths in spent.items():
            figures[name].append((sum(tenths) / len(turns) * 1e6, tenths[-1] / tenths[0]))
    return figures


def bytes_a_turn(make: Any, turns: list[tuple[str, str]]) -> float:
    gc.collect()
    tracemalloc.start()
    memory = make()
    run_turns(memory, turns)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del memory
    return held / len(turns)


def best_of(function: Any, times: int = 3) -> float:
    """The least CPU time of this thread ``function`` took in ``times`` runs."""
    best = float("inf")
    for _ in range(times):
        began = time.thread_time()
        function()
        best = min(best, time.thread_time() - began)
    return best


def save_and_load(turns: list[tuple[str, str]], folder: Path) -> None:
    memory = SummaryMemory("system", fixed_summary)
    run_turns(memory, turns)
    path = folder / "state.json"
    saving = best_of(lambda: state.save(memory, path))
    loading = best_of(lambda: state.load(path, fixed_summary))
    print(f"\nsave / load of summary memory after {len(turns):,} turns ({path.stat().st_size / 1e6:.1f} MB): "
          f"save {saving * 1e3:.0f} ms, load {loading * 1e3:.0f} ms, load/save {loading / saving:.2f}")


def bounds(folder: Path, state_bound: bool) -> None:
    limit = RollingMemory.max_message_chars
    worst, ordinary = "a" * limit, ("The quick brown fox jumps over the lazy dog. " * (limit // 44 + 1))[:limit]
    print(f"\nbounds: a message at max_message_chars ({limit:,} characters) counts in "
          f"{best_of(lambda: count_tokens(worst)) * 1e3:.0f} ms as one run of letters (tiktoken's worst case), "
          f"{best_of(lambda: count_tokens(ordinary)) * 1e3:.1f} ms as English")
    for n in (limit // 4, limit // 2):
        print(f"  one run of {n:,} letters: {best_of(lambda: count_tokens('a' * n)) * 1e3:.0f} ms")
    memory, huge = SlidingWindowMemory("system"), "a" * 50_000_000
    began = time.perf_counter()
    try:
        memory.add_message("user", huge)
    except ValueError as error:
        print(f"  a 50 MB one-word message: refused in {(time.perf_counter() - began) * 1e3:.2f} ms "
              f"({type(error).__name__}, setting {getattr(error, 'setting', '?')})")
    path = folder / "big.json"
    path.write_bytes(b" " * (state.MAX_STATE_BYTES + 1))
    began = time.perf_counter()
    try:
        state.load(path, None)
    except ValueError as error:
        print(f"  a state of {state.MAX_STATE_BYTES + 1:,} bytes: refused in {(time.perf_counter() - began) * 1e3:.2f} "
              f"ms ({type(error).__name__}, field {getattr(error, 'field', '?')})")
    if state_bound:
        memory = SlidingWindowMemory("system")
        while len(memory.messages) * (limit + 60) < state.MAX_STATE_BYTES - 2 * limit:
            memory.add_message("user" if len(memory.messages) % 2 == 0 else "assistant", worst)
        saved = state.save(memory, folder / "bound.json")
        took = best_of(lambda: state.load(saved, None), 1)
        print(f"  a state of {saved.stat().st_size / 1e6:.1f} MB whose {len(memory.messages)} messages are each the "
              f"worst case: loads in {took:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--state-bound", action="store_true", help="also load a state at MAX_STATE_BYTES (slow)")
    args = parser.parse_args()
    encoding()
    turns = scripted_messages(args.turns)
    figures = bookkeeping(turns, args.rounds)
    floor = [per_turn for per_turn, _ in figures["floor: count each message once"]]
    print(f"{args.turns:,} turns, {args.rounds} rounds; µs of CPU per turn (median, lowest-highest of the rounds)")
    print(f"  {'memory':<34} {'µs per turn':>20} {'x floor':>18} {'last/first':>12} {'bytes a turn':>13}")
    for name, rounds in figures.items():
        per_turn = [value for value, _ in rounds]
        ratio = [value / base for value, base in zip(per_turn, floor)]
        held = "" if name.startswith("floor") else f"{bytes_a_turn(MEMORIES[name], turns):,.0f}"
        print(f"  {name:<34} {statistics.median(per_turn):>8.1f} ({min(per_turn):.1f}-{max(per_turn):.1f})"
              f" {statistics.median(ratio):>8.2f} ({min(ratio):.2f}-{max(ratio):.2f})"
              f" {statistics.median(last for _, last in rounds):>12.2f} {held:>13}")
    with tempfile.TemporaryDirectory() as folder:
        save_and_load(turns, Path(folder))
        bounds(Path(folder), args.state_bound)


if __name__ == "__main__":
    main()
