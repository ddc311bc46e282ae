"""Each message is counted once, when it is added, and each fold counts its new summary once (and its message too
only when the heading's count cannot be added to the summary's exactly): what benchmarks/memory_bookkeeping.py
measures against the count-once floor."""
from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import helpers.memory.rolling as rolling
from helpers.base.tokens import count_tokens
from helpers.memory.defences import Defences
from helpers.memory.stubs import turn_range_stub
from helpers.memory.summary import SummaryMemory
from helpers.memory.summary_buffer import SummaryBufferMemory


@pytest.mark.parametrize("defences", [None, Defences(placement="data")], ids=["lessons' design", "data placement"])
@pytest.mark.parametrize("make", [lambda s, d: SummaryMemory("system", s, defences=d),
                                  lambda s, d: SummaryBufferMemory("system", s, max_buffer_tokens=120, defences=d)],
                         ids=["summary memory", "summary buffer memory"])
def test_every_message_and_every_new_summary_is_counted_once(monkeypatch, make, defences):
    counted: Counter[str] = Counter()
    monkeypatch.setattr(rolling, "count_tokens", lambda text: counted.update([text]) or count_tokens(text))
    written = []

    def summarise(messages, existing):
        written.append(turn_range_stub(messages, existing))
        return written[-1]

    memory = make(summarise, defences)
    contents = [f"{role} message {turn}: " + "words " * (turn % 7 * 9) for turn in range(1, 25)
                for role in ("user", "assistant")]
    for role, content in zip(["user", "assistant"] * 24, contents):
        memory.add_message(role, content)
        memory.get_messages_for_api()
        memory.snapshot()
    assert memory.summary_count >= 4 and len(written) == memory.summary_count
    assert [counted[text] for text in contents] == [1] * len(contents)
    assert [counted[summary] for summary in written] == [1] * len(written)
    sent = memory.get_messages_for_api()
    if defences is None:  # the heading's count added, exactly
        assert [counted[memory.KIND.heading + summary] for summary in written] == [0] * len(written)
    assert sum(counted.values()) - counted["system"] - counted[memory.KIND.heading] == len(contents) + len(written) * (
        1 if defences is None else 2)  # nothing else is counted, ever
    assert memory.summary_block_tokens == count_tokens(sent[1]["content"])


@settings(max_examples=100, deadline=None)
@given(heading=st.sampled_from(["CONVERSATION SUMMARY (earlier turns):\n", "TOY NOTES\n", "NOTES:\n\n", "notes -\n"]),
       summary=st.text(min_size=1, max_size=12) | st.sampled_from(
           ["/etc notes", "\u00a0spaced", "Ünïcode: ₹1,20,000", "\n\nbreaks", "'s quoted", "123", "🙂 emoji", ")x"]))
def test_a_summary_message_counted_as_heading_plus_summary_is_counted_exactly(heading, summary):
    """Where the memory adds the heading's count to the summary's for the message's, the sum is exact."""
    if rolling._splits_after(heading, summary):
        assert count_tokens(heading + summary) - count_tokens(heading) == count_tokens(summary)
