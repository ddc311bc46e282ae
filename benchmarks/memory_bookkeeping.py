"""Bookkeeping cost per turn of every memory kind over a long scripted conversation, against the floor and,
where they are installed, the libraries that do the same job.

Prints figures; asserts nothing. A turn is what ``chat()`` asks of a memory: add the question, build the
request, add the reply. The summariser is a stub (no model), so the figures are the memory's own work.

* **Flat**: the cost per turn is shown for each tenth of the run; the memory counts each message once and
  builds the request from the verbatim slice, so the last tenth costs what the first did (last/first near 1).
* **The floor**: the least any memory with exact token counts must do, counting each message once with
  tiktoken (``x floor``).
* **Libraries**, where installed (none is a dependency of the project): LangChain's legacy
  ``ConversationSummaryBufferMemory``, LlamaIndex's ``ChatSummaryMemoryBuffer`` and langmem's
  ``summarize_messages``, each with a fake model that returns a fixed summary and o200k_base as its token
  counter, run on the same messages with a token budget like the buffer memory's.

    python benchmarks/memory_bookkeeping.py [--turns 10000] [--repeat 3] [--budget 2000]
"""
from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from helpers.base.tokens import count_tokens, encoding
from helpers.memory.sliding_window import SlidingWindowMemory
from helpers.memory.stubs import turn_range_stub
from helpers.memory.summary import SummaryMemory
from helpers.memory.summary_buffer import SummaryBufferMemory


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


def time_run(memory: Any, messages: list[tuple[str, str]], tenths: int = 10) -> tuple[float, list[float]]:
    """Total seconds, and mean microseconds per turn in each tenth of the run."""
    turns = len(messages) // 2
    window = max(turns // tenths, 1)
    per_window, start_all = [], time.perf_counter()
    for offset in range(0, len(messages), 2 * window):
        start = time.perf_counter()
        chunk = messages[offset:offset + 2 * window]
        for (_, question), (_, reply) in zip(chunk[::2], chunk[1::2]):
            memory.add_message("user", question)
            memory.get_messages_for_api()
            memory.add_message("assistant", reply)
        per_window.append((time.perf_counter() - start) / (len(chunk) // 2) * 1e6)
    return time.perf_counter() - start_all, per_window


# ----- the libraries, each behind the two calls time_run makes ------------------------------------------
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

    memory = ConversationSummaryBufferMemory(llm=CountingFake(responses=["a short summary"]), max_token_limit=budget)

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

    model = FakeListChatModel(responses=["a short summary"])

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


def best_of(repeat: int, make: Callable[[], Any], messages: list[tuple[str, str]]) -> tuple[float, list[float]]:
    """The fastest of ``repeat`` runs, after one short run that warms the caches up."""
    time_run(make(), messages[:400])
    return min((time_run(make(), messages) for _ in range(repeat)), key=lambda run: run[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--budget", type=int, default=2000, help="token budget of the buffer memories")
    parser.add_argument("--repeat", type=int, default=3, help="runs per variant; the fastest is shown")
    parser.add_argument("--library-turns", type=int, default=1000,
                        help="turns for the libraries (they are far slower; their cost per turn is what is compared)")
    args = parser.parse_args()
    encoding()  # load the tokenizer outside the timings
    messages = scripted_messages(args.turns)
    floor_total, _ = best_of(args.repeat, CountOnce, messages)
    floor = floor_total / args.turns * 1e6
    kinds = [
        ("summary memory (4, keep 2)", lambda: SummaryMemory("system", turn_range_stub, 4, 2)),
        ("summary memory (40, keep 20)", lambda: SummaryMemory("system", turn_range_stub, 40, 20)),
        (f"summary buffer memory ({args.budget} tokens)",
         lambda: SummaryBufferMemory("system", turn_range_stub, args.budget)),
        ("sliding window (4 turns)", lambda: SlidingWindowMemory("system", 4)),
    ]
    print(f"{args.turns:,} turns ({len(messages):,} messages), stub summariser, best of {args.repeat}; "
          "µs per turn in each tenth of the run")
    print(f"floor (count each message once): {floor:.1f} µs per turn")
    header = f"{'memory':<44} {'first':>8} {'last':>8} {'median':>8} {'last/first':>10} {'x floor':>8}"
    print(header)
    for name, make in kinds:
        _, tenths = best_of(args.repeat, make, messages)
        median = statistics.median(tenths)
        print(f"{name:<44} {tenths[0]:>8.1f} {tenths[-1]:>8.1f} {median:>8.1f} {tenths[-1] / tenths[0]:>10.2f} "
              f"{median / floor:>8.2f}")
    library_messages = messages[:2 * args.library_turns]
    for name, make_library in LIBRARIES.items():
        try:
            _, tenths = best_of(1, lambda: make_library(args.budget), library_messages)
        except ImportError as missing:
            print(f"{name:<44} not installed ({missing.name or missing})")
            continue
        median = statistics.median(tenths)
        print(f"{name:<44} {tenths[0]:>8.1f} {tenths[-1]:>8.1f} {median:>8.1f} {tenths[-1] / tenths[0]:>10.2f} "
              f"{median / floor:>8.2f}  ({args.library_turns:,} turns)")


if __name__ == "__main__":
    main()
