"""Properties that hold for any conversation and any valid settings (hypothesis)."""
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.base.tokens import count_tokens, filler_text
from helpers.memory.defences import Defences
from helpers.memory.placement import shows_nothing  # a summary that shows nothing is refused, never stored
from helpers.memory.summary import SummaryMemory
from helpers.memory.summary_buffer import SummaryBufferMemory
from helpers.memory.types import SummariserError
from helpers.memory.state import to_dict
from tests.memory_support import FlakySummariser, RecordingStub

SYSTEM = "You are a test assistant."
# Messages as (role-independent) token sizes; filler text counts exactly, so sizes are exact.
sizes = st.lists(st.integers(min_value=1, max_value=120), min_size=1, max_size=40)
summary_settings = st.integers(min_value=1, max_value=8).flatmap(
    lambda keep: st.tuples(st.integers(min_value=keep + 1, max_value=keep + 8), st.just(keep)))
buffer_settings = st.tuples(st.integers(min_value=1, max_value=400), st.sampled_from([2, 4, 6, 8]))


def add_all(memory, message_sizes, after_each=None):
    sent = []
    for index, size in enumerate(message_sizes):
        role = "user" if index % 2 == 0 else "assistant"
        content = f"m{index} " + filler_text(size)
        memory.add_message(role, content)
        sent.append({"role": role, "content": content})
        if after_each:
            after_each(memory, sent)
    return sent


def check_shape(memory, sent):
    assert memory.archive == sent  # every message, in order
    verbatim = memory.verbatim
    assert verbatim == sent[len(sent) - len(verbatim):]  # the newest messages, unchanged
    if verbatim:
        assert verbatim[0]["role"] == "user"  # whole turns only
    assert (len(sent) - len(verbatim)) % 2 == 0
    assert memory.turns_folded == (len(sent) - len(verbatim)) // 2
    request = memory.get_messages_for_api()
    assert request[0] == {"role": "system", "content": SYSTEM}
    if memory.summary:
        assert request[1] == {"role": "system", "content": memory.KIND.heading + memory.summary}
        assert memory.summary == f"summary of turns 1 to {memory.turns_folded}"
    assert request[1 + bool(memory.summary):] == verbatim


@settings(max_examples=150, deadline=None)
@given(message_sizes=sizes, setting=summary_settings)
def test_summary_memory_shape(message_sizes, setting):
    threshold, keep = setting
    memory = SummaryMemory(SYSTEM, RecordingStub(), max_turns_before_summary=threshold, turns_to_keep_verbatim=keep)
    add_all(memory, message_sizes, check_shape)
    verbatim_turns = (len(memory.verbatim) + 1) // 2
    assert verbatim_turns <= threshold  # a fold always brings it back under the threshold


@settings(max_examples=150, deadline=None)
@given(message_sizes=sizes, setting=buffer_settings)
def test_summary_buffer_shape_and_budget(message_sizes, setting):
    budget, compress = setting

    def check(memory, sent):
        check_shape(memory, sent)
        assert memory.buffer_tokens == sum(count_tokens(m["content"]) for m in memory.buffer)
        # Within budget after every add, unless the buffer holds only the current turn.
        if memory.buffer_tokens > budget:
            assert len(memory.buffer) <= 2, "an over-budget buffer may only hold the current turn"

    memory = SummaryBufferMemory(SYSTEM, RecordingStub(), max_buffer_tokens=budget, messages_to_compress_on_overflow=compress)
    add_all(memory, message_sizes, check)
    assert memory.overflow_count == memory.summary_count


@settings(max_examples=100, deadline=None)
@given(message_sizes=sizes, setting=buffer_settings, fail_from=st.integers(min_value=0, max_value=40),
       mode=st.sampled_from(["raise", "empty"]))
def test_a_failing_summariser_loses_nothing(message_sizes, setting, fail_from, mode):
    budget, compress = setting
    flaky = FlakySummariser(mode)
    flaky.failing = False
    memories = [SummaryBufferMemory(SYSTEM, flaky, max_buffer_tokens=budget, messages_to_compress_on_overflow=compress), SummaryMemory(SYSTEM, flaky, max_turns_before_summary=3, turns_to_keep_verbatim=1)]
    for memory in memories:
        sent = []
        for index, size in enumerate(message_sizes):
            flaky.failing = index >= fail_from
            role = "user" if index % 2 == 0 else "assistant"
            content = f"m{index} " + filler_text(size)
            before = to_dict(memory)
            try:
                memory.add_message(role, content)
            except SummariserError:
                after = to_dict(memory)
                assert after["summary"] == before["summary"]
                assert after["fold_events"] == before["fold_events"]
                assert after["verbatim_start"] == before["verbatim_start"]
            sent.append({"role": role, "content": content})
            check_shape(memory, sent)


@settings(max_examples=300, deadline=None)
@given(summary=st.text(min_size=1, max_size=80).map(str.strip).filter(lambda text: not shows_nothing(text)),
       memory_class=st.sampled_from([SummaryMemory, SummaryBufferMemory]),
       placement=st.sampled_from(["system", "data"]))
def test_the_summary_block_count_is_the_count_of_the_message_sent(summary, memory_class, placement):
    """The turn lines' summary block figure is the o200k_base count of the summary message as sent,
    whatever the summary and the placement."""
    memory = memory_class(SYSTEM, lambda messages, existing: summary, defences=Defences(placement=placement))
    for role in ("user", "assistant") * 6:
        memory.add_message(role, "x " * 60)
    sent = memory.get_messages_for_api()[1]["content"]
    assert memory.summary == summary
    assert memory.summary_block_tokens == count_tokens(sent)
    assert memory.request_tokens == sum(count_tokens(m["content"]) for m in memory.get_messages_for_api())
