"""Properties that hold for any conversation and any valid settings (hypothesis): the lessons' rules."""
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.base.tokens import count_tokens, filler_text
from helpers.memory.defences import Defences
from helpers.memory.state import to_dict
from helpers.memory.summary import SummaryMemory
from helpers.memory.summary_buffer import SummaryBufferMemory
from helpers.memory.types import SummariserError
from helpers.base.reading import shows_nothing
from tests.memory_support import SYSTEM, FlakySummariser, RecordingStub

# Messages as token sizes; filler text counts exactly, so sizes are exact.
sizes = st.lists(st.integers(min_value=1, max_value=120), min_size=1, max_size=40)
summary_settings = st.integers(min_value=1, max_value=8).flatmap(
    lambda keep: st.tuples(st.integers(min_value=keep + 1, max_value=keep + 8), st.just(keep)))
buffer_settings = st.tuples(st.integers(min_value=1, max_value=400), st.sampled_from([2, 4, 6, 8]))


def summary_memory(summarise, threshold, keep):
    return SummaryMemory(SYSTEM, summarise, max_turns_before_summary=threshold, turns_to_keep_verbatim=keep)


def buffer_memory(summarise, budget, compress):
    return SummaryBufferMemory(SYSTEM, summarise, max_buffer_tokens=budget, messages_to_compress_on_overflow=compress)


def add_all(memory, message_sizes, after_each):
    sent = []
    for index, size in enumerate(message_sizes):
        sent.append({"role": ("user", "assistant")[index % 2], "content": f"m{index} " + filler_text(size)})
        memory.add_message(**sent[-1])
        after_each(memory, sent)


def check_shape(memory, sent):
    assert memory.archive == sent  # every message, in order
    verbatim = memory.verbatim
    assert verbatim == sent[len(sent) - len(verbatim):] and (len(sent) - len(verbatim)) % 2 == 0  # whole turns
    assert memory.turns_folded == (len(sent) - len(verbatim)) // 2
    request = memory.get_messages_for_api()
    assert request[0] == {"role": "system", "content": SYSTEM}
    if memory.summary:
        assert request[1] == {"role": "system", "content": memory.KIND.heading + memory.summary}
        assert memory.summary == f"summary of turns 1 to {memory.turns_folded}"
    assert request[1 + bool(memory.summary):] == verbatim


@settings(max_examples=80, deadline=None)
@given(message_sizes=sizes, setting=summary_settings)
def test_summary_memory_shape(message_sizes, setting):
    memory = summary_memory(RecordingStub(), *setting)
    add_all(memory, message_sizes, check_shape)
    assert (len(memory.verbatim) + 1) // 2 <= setting[0]  # a fold always brings it back under the threshold


@settings(max_examples=80, deadline=None)
@given(message_sizes=sizes, setting=buffer_settings)
def test_summary_buffer_shape_and_budget(message_sizes, setting):
    def check(memory, sent):
        check_shape(memory, sent)
        assert memory.buffer_tokens == sum(count_tokens(m["content"]) for m in memory.buffer)
        assert memory.buffer_tokens <= setting[0] or len(memory.buffer) <= 2  # over budget: only the current turn
        assert memory.over_budget == (memory.buffer_tokens > setting[0])

    add_all(buffer_memory(RecordingStub(), *setting), message_sizes, check)


@settings(max_examples=40, deadline=None)
@given(message_sizes=sizes, setting=buffer_settings, fail_from=st.integers(min_value=0, max_value=40),
       mode=st.sampled_from(["raise", "empty"]))
def test_a_failing_summariser_loses_nothing(message_sizes, setting, fail_from, mode):
    flaky = FlakySummariser(mode)
    for memory in (buffer_memory(flaky, *setting), summary_memory(flaky, 3, 1)):
        sent = []
        for index, size in enumerate(message_sizes):
            flaky.failing = index >= fail_from
            sent.append({"role": ("user", "assistant")[index % 2], "content": f"m{index} " + filler_text(size)})
            before = to_dict(memory)
            try:
                memory.add_message(**sent[-1])
            except SummariserError:
                after = to_dict(memory)
                assert [after[k] for k in ("summary", "fold_events", "verbatim_start")] == [
                    before[k] for k in ("summary", "fold_events", "verbatim_start")]
            check_shape(memory, sent)


@settings(max_examples=100, deadline=None)
@given(summary=st.text(min_size=1, max_size=80).map(str.strip).filter(lambda text: not shows_nothing(text)),
       memory_class=st.sampled_from([SummaryMemory, SummaryBufferMemory]),
       defences=st.sampled_from([None, Defences(), Defences(placement="data")]))
def test_the_request_tokens_are_the_count_of_the_request_sent(summary, memory_class, defences):
    """The turn lines' figures are the o200k_base counts of the messages as sent, whatever the summary and the
    placement, each message counted once when it was added."""
    memory = memory_class(SYSTEM, lambda messages, existing: summary, defences=defences)
    for role in ("user", "assistant") * 6:
        memory.add_message(role, "x " * 60)
    sent = memory.get_messages_for_api()
    assert memory.summary == summary and memory.summary_block_tokens == count_tokens(sent[1]["content"])
    assert memory.request_tokens == sum(count_tokens(m["content"]) for m in sent)
