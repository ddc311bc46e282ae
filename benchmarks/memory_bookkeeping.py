"""Bookkeeping cost per turn of the project's memories, the count-once floor and, where they are installed,
the libraries that do the same job: all in one interleaved run on the same workloads.

Prints figures; asserts nothing. A turn is what ``chat()`` asks of a memory: add the question, build the
request, add the reply. Every summariser, the project's and the libraries' fake models, returns a short fixed text
(no model), so the figures are the memories' own work.

* **One run, interleaved**: in each round every contestant gets a fresh memory, and all of them are fed the
  same conversation a block of turns at a time, taking turns in a new (seeded) random order for each block,
  so a slow spell of the machine lands on all of them alike. Time is this thread's CPU time, so what other
  processes take is not counted. Each ratio is taken within a round (a library over the project, the
  project over the floor), and the median of the rounds is shown with its spread (lowest to highest).
* **The workloads**: lesson 4's 600-token budget and a larger one (2,000 by default); every buffer memory,
  the project's and the libraries', gets the same budget.
* **The floor**: the least any memory with exact token counts must do, counting each message once with
  tiktoken (``x floor``).
* **Flat**: ``last/first`` is the cost of the last tenth of the run over the first.
* **Libraries**, where installed (none is a dependency of the project): LangChain's legacy
  ``ConversationSummaryBufferMemory``, LlamaIndex's ``ChatSummaryMemoryBuffer`` and langmem's
  ``summarize_messages``, each with a fake model that returns a fixed summary and o200k_base as its token
  counter (``pip install langchain-classic llama-index-core langmem`` in a separate environment).

    python benchmarks/memory_bookkeeping.py [--turns 2000] [--rounds 5] [--budgets 600 2000]
"""
from __future__ import annotations

import argparse
import gc
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from helpers.base.tokens import count_tokens, encoding
from helpers.memory.sliding_window import SlidingWindowMemory
from helpers.memory.summary import SummaryMemory
from helpers.memory.summary_buffer import SummaryBufferMemory


FIXED_SUMMARY = "a short summary"  # what every contestant's summariser (or fake model) returns


def fixed_summary(messages: list[dict[str, str]], existing_summary: str | None) -> str:
    """The project's summariser in this run: the libraries' fake models' reply, so no memory does more summariser
    work than another (``turn_range_stub`` parses the old summary and counts the turns it is given)."""
    return FIXED_SUMMARY


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


def run_turns(memory: Any, turns: list[tuple[str, str]]) -> None:
    """What ``chat()`` asks of a memory, for each (question, reply): add the question, build the request,
    add the reply."""
    for question, reply in turns:
        memory.add_message("user", question)
        memory.get_messages_for_api()
        memory.add_message("assistant", reply)


# ----- the libraries, each behind the two calls run_turns makes ------------------------------------------
def _tokens(text: str) -> int:
    return count_tokens(text)


def langchain_summary_buffer(budget: int) -> Any:
    """LangChain's legacy ConversationSummaryBufferMemory with a fake LLM (raises ImportError if absent)."""
    try:
        from langchain_classic.memory import ConversationSummaryBufferMemory  # LangChain 1.x keeps it here
    except ImportError:
        from langchain.memory import ConversationSummaryBufferMemory
    from langchain_core.language_models.fake import FakeListLLM

    class CountingFake(FakeListLLM):
        def get_num_tokens(self, text: str) -> int:
            return _tokens(text)

    memory = ConversationSummaryBufferMemory(llm=CountingFake(responses=[FIXED_SUMMARY]), max_token_limit=budget)

    class Adapter:
        pending = ""

        def add_message(self, role: str, content: str) -> None:
            if role == "user":
                self.pending = content
            else:
                memory.save_context({"input": self.pending}, {"output": content})

        def get_messages_for_api(self) -> Any:
            return memory.load_memory_variables({})

    return Adapter()


def llamaindex_summary_buffer(budget: int) -> Any:
    """LlamaIndex's ChatSummaryMemoryBuffer with its MockLLM (raises ImportError if absent)."""
    from llama_index.core.base.llms.types import ChatMessage
    from llama_index.core.llms import MockLLM
    from llama_index.core.memory import ChatSummaryMemoryBuffer

    memory = ChatSummaryMemoryBuffer.from_defaults(llm=MockLLM(max_tokens=8), token_limit=budget,
                                                   tokenizer_fn=encoding().encode)

    class Adapter:
        def add_message(self, role: str, content: str) -> None:
            memory.put(ChatMessage(role=role, content=content))

        def get_messages_for_api(self) -> Any:
            return memory.get()

    return Adapter()


def langmem_summarize(budget: int) -> Any:
    """langmem's summarize_messages with a fake chat model (raises ImportError if absent)."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langmem.short_term import summarize_messages

    model = FakeListChatModel(responses=[FIXED_SUMMARY])

    class Adapter:
        def __init__(self) -> None:
            self.messages: list = []
            self.running: Any = None

        def add_message(self, role: str, content: str) -> None:
            kind = HumanMessage if role == "user" else AIMessage
            self.messages.append(kind(content=content, id=str(len(self.messages))))  # langmem needs ids

        def get_messages_for_api(self) -> Any:
            result = summarize_messages(self.messages, running_summary=self.running, model=model,
                                        max_tokens=budget, max_tokens_before_summary=budget,
                                        max_summary_tokens=128,
                                        token_counter=lambda ms: sum(_tokens(str(m.content)) for m in ms))
            self.running = result.running_summary
            return result.messages

    return Adapter()


LIBRARIES: dict[str, Callable[[int], Any]] = {
    "LangChain ConversationSummaryBufferMemory": langchain_summary_buffer,
    "LlamaIndex ChatSummaryMemoryBuffer": llamaindex_summary_buffer,
    "langmem summarize_messages": langmem_summarize,
}


@dataclass
class Contestant:
    """One memory in the run: how to make a fresh one, and the figures of each round."""

    name: str
    make: Callable[[], Any]
    per_turn: list[float] = field(default_factory=list)  # µs per turn, one figure per round
    last_over_first: list[float] = field(default_factory=list)  # the last tenth of a round over its first
    missing: str | None = None


def available(name: str, make: Callable[[], Any], turns: list[tuple[str, str]]) -> Contestant:
    """The contestant, warmed up on a short run; a library that is not installed is marked missing."""
    try:
        run_turns(make(), turns[:100])
    except ImportError as error:
        return Contestant(name, make, missing=error.name or str(error))
    return Contestant(name, make)


def run_round(contestants: list[Contestant], turns: list[tuple[str, str]], seed: int, block: int = 25) -> None:
    """One round: a fresh memory per contestant, all fed the conversation ``block`` turns at a time, taking
    turns in a new random order for each block (seeded), so that every contestant runs under the same load
    from start to end and none always follows the same neighbour (whose use of the caches it would inherit). Timed in this thread's CPU time (time another process takes from it is not counted);
    the garbage collector runs between rounds, not inside a contestant's block."""
    memories = [contestant.make() for contestant in contestants]
    shuffled = random.Random(seed)
    tenths = [[0.0] * 10 for _ in contestants]
    turns_in = [0] * 10  # turns in each tenth of the run (a block counts in the tenth it starts in)
    gc.collect()
    gc.disable()
    try:
        for start in range(0, len(turns), block):
            chunk, tenth = turns[start:start + block], start * 10 // len(turns)
            turns_in[tenth] += len(chunk)
            for index in shuffled.sample(range(len(contestants)), len(contestants)):
                began = time.thread_time()
                run_turns(memories[index], chunk)
                tenths[index][tenth] += time.thread_time() - began
    finally:
        gc.enable()
    for contestant, spent in zip(contestants, tenths):
        contestant.per_turn.append(sum(spent) / len(turns) * 1e6)
        per_turn = [seconds / count for seconds, count in zip(spent, turns_in) if count]  # a short run skips tenths
        contestant.last_over_first.append(per_turn[-1] / per_turn[0])


def ratios(top: Contestant, bottom: Contestant) -> list[float]:
    """``top`` over ``bottom``, round by round (the rounds pair them under the same machine load)."""
    return [a / b for a, b in zip(top.per_turn, bottom.per_turn)]


def spread(values: list[float], digits: int = 1) -> str:
    """Median, then lowest to highest: ``2.1 (1.9-2.4)``."""
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def workloads(budgets: list[int]) -> list[tuple[str, list[tuple[str, Callable[[], Any]]]]]:
    """The groups of the run: one per budget (the buffer memories), and the kinds that have no budget."""
    groups = []
    for budget in budgets:
        group = [("floor: count each message once", CountOnce),
                 ("project: summary buffer memory",
                  lambda b=budget: SummaryBufferMemory("system", fixed_summary, b))]
        group += [(name, lambda make=make, b=budget: make(b)) for name, make in LIBRARIES.items()]
        groups.append((f"{budget:,}-token budget", group))
    groups.append(("kinds without a budget", [
        ("floor: count each message once", CountOnce),
        ("project: summary memory (4, keep 2)", lambda: SummaryMemory("system", fixed_summary, 4, 2)),
        ("project: summary memory (40, keep 20)", lambda: SummaryMemory("system", fixed_summary, 40, 20)),
        ("project: sliding window (4 turns)", lambda: SlidingWindowMemory("system", 4)),
    ]))
    return groups


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000, help="turns of the conversation, the same for every memory")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (every memory runs the conversation once in each)")
    parser.add_argument("--budgets", type=int, nargs="+", default=[600, 2000],
                        help="token budgets of the buffer memories (the project's and the libraries')")
    args = parser.parse_args()
    encoding()  # load the tokenizer outside the timings
    messages = scripted_messages(args.turns)
    turns = list(zip([content for _, content in messages[::2]], [content for _, content in messages[1::2]]))
    groups = [(title, [available(name, make, turns) for name, make in group])
              for title, group in workloads(args.budgets)]
    running = [c for _, group in groups for c in group if c.missing is None]
    for round_number in range(args.rounds):
        run_round(running, turns, seed=round_number)
    print(f"{args.turns:,} turns ({len(messages):,} messages) per memory, a fixed summary, {args.rounds} rounds, "
          "every memory interleaved with every other in each round;\nµs of CPU time per turn; each figure is the "
          "median of the rounds (lowest-highest); ratios are taken within a round")
    for title, group in groups:
        floor, project = group[0], group[1]
        print(f"\n{title}")
        print(f"  {'memory':<44} {'µs per turn':>20} {'last/first':>18} {'x floor':>18} {'x project':>20}")
        for contestant in group:
            if contestant.missing is not None:
                print(f"  {contestant.name:<44} not installed ({contestant.missing})")
                continue
            ours = contestant.name.startswith("project")
            versus = spread(ratios(contestant, floor), 2) if ours else ""
            library = "" if ours or contestant is floor else spread(ratios(contestant, project))
            print(f"  {contestant.name:<44} {spread(contestant.per_turn):>20} "
                  f"{spread(contestant.last_over_first, 2):>18} {versus:>18} {library:>20}")


if __name__ == "__main__":
    main()
