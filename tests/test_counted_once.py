"""Each message is counted once, when it is added, and each new summary once per fold (the bookkeeping that
``benchmarks/memory_bookkeeping.py`` measures against the count-once floor)."""
from __future__ import annotations

from collections import Counter

import pytest

import helpers.memory.rolling as rolling
from helpers.memory.stubs import turn_range_stub
from helpers.memory.summary import SummaryMemory
from helpers.memory.summary_buffer import SummaryBufferMemory


@pytest.mark.parametrize("make", [lambda s: SummaryMemory("system", s, 4, 2),
                                  lambda s: SummaryBufferMemory("system", s, 120, 2)],
                         ids=["summary memory", "summary buffer memory"])
def test_every_message_and_every_new_summary_is_counted_once(monkeypatch, make):
    counted: Counter[str] = Counter()
    real = rolling.count_tokens

    def counting(text: str) -> int:
        counted[text] += 1
        return real(text)

    monkeypatch.setattr(rolling, "count_tokens", counting)
    written = []

    def summarise(messages, existing):
        written.append(turn_range_stub(messages, existing))
        return written[-1]

    memory = make(summarise)
    contents = [f"{role} message {turn}: " + "words " * (turn % 7 * 9) for turn in range(1, 25)
                for role in ("user", "assistant")]
    for role, content in zip(["user", "assistant"] * 24, contents):
        memory.add_message(role, content)
        memory.get_messages_for_api()
    assert memory.summary_count >= 4 and len(written) == memory.summary_count
    assert [counted[text] for text in contents] == [1] * len(contents)
    assert [counted[summary] for summary in written] == [1] * len(written)
    headed = [memory.KIND.heading + summary for summary in written]  # the summary message, as sent
    assert [counted[message] for message in headed] == [1] * len(headed)
