"""Each message is counted once, when it is added, and each fold counts its new summary once (and its message
too only when the heading's count cannot be added to the summary's exactly): the bookkeeping that
``benchmarks/memory_bookkeeping.py`` measures against the count-once floor."""
from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import helpers.memory.rolling as rolling
from helpers.memory.stubs import turn_range_stub
from helpers.memory.summary import SummaryMemory
from helpers.memory.summary_buffer import SummaryBufferMemory


@pytest.mark.parametrize("make", [lambda s: SummaryMemory("system", s, max_turns_before_summary=4, turns_to_keep_verbatim=2),
                                  lambda s: SummaryBufferMemory("system", s, max_buffer_tokens=120, messages_to_compress_on_overflow=2)],
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
    headed = [memory.KIND.heading + summary for summary in written]  # the summary message, as sent
    assert [counted[summary] for summary in written] == [1] * len(written)
    assert [counted[message] for message in headed] == [0] * len(headed)  # the heading's count added, exactly
    once = counted["system"] + counted[memory.KIND.heading]  # the system prompt; the heading, once a process
    assert sum(counted.values()) - once == len(contents) + len(written)  # nothing else is counted, ever
    assert [event.summary_tokens for event in memory.fold_events] == [real(summary) for summary in written]
    assert memory.summary_block_tokens == real(memory.get_messages_for_api()[1]["content"])


HEADINGS = ["CONVERSATION SUMMARY (earlier turns):\n", "CONVERSATION MEMORY (earlier turns, compressed):\n",
            "TOY NOTES\n", "NOTES:\n\n", "notes -\n"]


@settings(max_examples=300, deadline=None)
@given(heading=st.sampled_from(HEADINGS), summary=st.text(min_size=1, max_size=12) | st.sampled_from(
    ["/etc notes", "plain", "\u00a0spaced", "Ünïcode: ₹1,20,000", "\n\nbreaks", "'s quoted", "123", "--- rule",
     "🙂 emoji", "\r\nx", ")x", "’s"]))
def test_a_summary_message_counted_as_heading_plus_summary_is_counted_exactly(heading, summary):
    """Where the memory adds the heading's count to the summary's for the message's, the sum is exact."""
    if rolling._splits_after(heading, summary):
        count = rolling.count_tokens
        assert count(heading + summary) - count(heading) == count(summary)
