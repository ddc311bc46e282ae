"""SummaryMemory and SummaryBufferMemory behave as lessons 3 and 4 describe."""
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.base.tokens import count_tokens, filler_text
from helpers.memory.placement import INVISIBLE
from helpers.memory.stubs import turn_range_stub
from helpers.memory.summary import SummaryMemory
from helpers.memory.summary_buffer import SummaryBufferMemory
from helpers.memory.types import FoldEvent, SettingError, StateError, SummariserError
from helpers.memory.state import from_dict, load, save, to_dict
from tests.memory_support import FlakySummariser, RecordingStub

SYSTEM = "You are a test assistant."


def run_turns(memory, turns, reply=lambda i: f"reply {i}"):
    for i in range(1, turns + 1):
        memory.add_message("user", f"turn {i}")
        memory.add_message("assistant", reply(i))


# ----- SummaryMemory ---------------------------------------------------------------------------
def test_summary_memory_folds_after_the_reply_that_reaches_the_threshold():
    stub = RecordingStub()
    memory = SummaryMemory(SYSTEM, stub, max_turns_before_summary=4, turns_to_keep_verbatim=2)
    run_turns(memory, 3)
    memory.add_message("user", "turn 4")
    assert stub.calls == []  # the trigger waits for the reply
    memory.add_message("assistant", "reply 4")
    assert len(stub.calls) == 1
    folded, existing = stub.calls[0]
    assert [m["content"] for m in folded] == ["turn 1", "reply 1", "turn 2", "reply 2"]
    assert existing is None
    assert memory.summary == "summary of turns 1 to 2"
    assert [m["content"] for m in memory.verbatim] == ["turn 3", "reply 3", "turn 4", "reply 4"]
    assert memory.turns_folded == 2 and memory.summary_count == 1


def test_summary_memory_messages_to_fold_is_the_rule_add_message_follows():
    answers = []

    class Recording(SummaryMemory):
        def messages_to_fold(self, role):
            answers.append((role, self.verbatim_messages, super().messages_to_fold(role)))
            return answers[-1][2]

    run_turns(Recording(SYSTEM, turn_range_stub, 4, 2), 6)
    assert [n for role, _, n in answers if role == "user"] == [0] * 6  # the trigger waits for the reply
    assert [(held, n) for role, held, n in answers if role == "assistant"] == [
        (2, 0), (4, 0), (6, 0), (8, 4), (6, 0), (8, 4)]  # every turn but the last 2 once 4 are held

    class FoldsEachReply(SummaryMemory):
        def messages_to_fold(self, role):
            return 2 if role == "assistant" and self.verbatim_messages > 2 else 0

    memory = FoldsEachReply(SYSTEM, turn_range_stub, 4, 2)
    run_turns(memory, 3)
    assert memory.summary == "summary of turns 1 to 2" and memory.summary_count == 2


def test_summary_memory_request_is_system_summary_then_verbatim():
    memory = SummaryMemory(SYSTEM, turn_range_stub, max_turns_before_summary=4, turns_to_keep_verbatim=2)
    run_turns(memory, 4)
    memory.add_message("user", "turn 5")
    request = memory.get_messages_for_api()
    assert request[0] == {"role": "system", "content": SYSTEM}
    assert request[1] == {"role": "system",
                          "content": "CONVERSATION SUMMARY (earlier turns):\nsummary of turns 1 to 2"}
    assert [m["content"] for m in request[2:]] == ["turn 3", "reply 3", "turn 4", "reply 4", "turn 5"]


def test_second_fold_passes_the_existing_summary():
    stub = RecordingStub()
    memory = SummaryMemory(SYSTEM, stub, max_turns_before_summary=4, turns_to_keep_verbatim=2)
    run_turns(memory, 6)
    assert len(stub.calls) == 2
    assert stub.calls[1][1] == "summary of turns 1 to 2"
    assert [m["content"] for m in stub.calls[1][0]] == ["turn 3", "reply 3", "turn 4", "reply 4"]


def test_archive_keeps_all_twelve_messages_after_two_cycles():
    memory = SummaryMemory(SYSTEM, turn_range_stub, max_turns_before_summary=4, turns_to_keep_verbatim=2)
    run_turns(memory, 6)
    assert len(memory.archive) == 12  # lesson 3, "try it yourself"
    assert memory.archive[0] == {"role": "user", "content": "turn 1"}


def test_fold_event_reports_tokens_in_and_out():
    memory = SummaryMemory(SYSTEM, turn_range_stub, max_turns_before_summary=4, turns_to_keep_verbatim=2)
    run_turns(memory, 4)
    event = memory.last_fold
    assert isinstance(event, FoldEvent)
    assert (event.first_turn, event.last_turn, event.messages_folded) == (1, 2, 4)
    assert event.message_tokens == sum(count_tokens(t) for t in ["turn 1", "reply 1", "turn 2", "reply 2"])
    assert event.old_summary_tokens == 0
    assert event.summary_tokens == count_tokens("summary of turns 1 to 2")
    assert memory.summary_block_tokens == count_tokens(SummaryMemory.KIND.heading + "summary of turns 1 to 2")


@pytest.mark.parametrize("kwargs, setting", [
    ({"max_turns_before_summary": 0}, "max_turns_before_summary"),
    ({"max_turns_before_summary": -3}, "max_turns_before_summary"),
    ({"turns_to_keep_verbatim": 0}, "turns_to_keep_verbatim"),
    ({"max_turns_before_summary": 4, "turns_to_keep_verbatim": 4}, "turns_to_keep_verbatim"),
    ({"max_turns_before_summary": 3, "turns_to_keep_verbatim": 5}, "turns_to_keep_verbatim"),
    ({"max_turns_before_summary": 4.0}, "max_turns_before_summary"),
    ({"max_summary_tokens": 0}, "max_summary_tokens"),
])
def test_summary_memory_settings_are_checked(kwargs, setting):
    with pytest.raises(SettingError) as refused:
        SummaryMemory(SYSTEM, turn_range_stub, **kwargs)
    assert refused.value.setting == setting


@pytest.mark.parametrize("kwargs, setting", [
    ({"max_buffer_tokens": 0}, "max_buffer_tokens"),
    ({"max_buffer_tokens": -600}, "max_buffer_tokens"),
    ({"messages_to_compress_on_overflow": 0}, "messages_to_compress_on_overflow"),
    ({"messages_to_compress_on_overflow": 3}, "messages_to_compress_on_overflow"),
    ({"max_buffer_tokens": True}, "max_buffer_tokens"),
])
def test_summary_buffer_settings_are_checked(kwargs, setting):
    with pytest.raises(SettingError) as refused:
        SummaryBufferMemory(SYSTEM, turn_range_stub, **kwargs)
    assert refused.value.setting == setting


def test_keep_not_below_threshold_error_says_why():
    with pytest.raises(SettingError) as refused:
        SummaryMemory(SYSTEM, turn_range_stub, max_turns_before_summary=4, turns_to_keep_verbatim=4)
    assert (refused.value.setting, refused.value.value) == ("turns_to_keep_verbatim", 4)


@pytest.mark.parametrize("cls", [SummaryMemory, SummaryBufferMemory])
def test_bad_messages_get_clear_errors_and_change_nothing(cls):
    memory = cls(SYSTEM, turn_range_stub)
    refusals = []
    for role, content in [("assistant", "hello"), ("system", "be nice"), ("user", None), ("user", "hi"),
                          ("user", "hi again")]:
        try:
            memory.add_message(role, content)
        except SettingError as refused:
            refusals.append((refused.setting, refused.value))
    assert refusals == [("role", "assistant"), ("role", "system"), ("the user message's content", None),
                        ("role", "user")]
    assert memory.archive == [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize("cls", [SummaryMemory, SummaryBufferMemory])
def test_constructor_rejects_a_non_callable_summariser(cls):
    with pytest.raises(SettingError) as refused:
        cls(SYSTEM, "summarise please")
    assert refused.value.setting == "summarise"


# ----- SummaryBufferMemory ---------------------------------------------------------------------
def test_buffer_checks_before_adding_and_folds_whole_pairs():
    stub = RecordingStub()
    memory = SummaryBufferMemory(SYSTEM, stub, max_buffer_tokens=250, messages_to_compress_on_overflow=4)
    memory.add_message("user", filler_text(50))
    memory.add_message("assistant", filler_text(100))
    memory.add_message("user", filler_text(50))
    assert memory.buffer_tokens == 200 and memory.overflow_count == 0
    memory.add_message("assistant", filler_text(100))  # 200 + 100 > 250: fold before adding
    assert memory.overflow_count == 1
    # Only the complete pair leaves; the question awaiting this reply stays with it.
    assert len(stub.calls[0][0]) == 2
    assert [m["role"] for m in memory.buffer] == ["user", "assistant"]
    assert memory.buffer_tokens == 150
    assert memory.summary == "summary of turns 1 to 1"


def test_buffer_request_uses_the_memory_heading():
    memory = SummaryBufferMemory(SYSTEM, turn_range_stub, max_buffer_tokens=30)
    run_turns(memory, 3, reply=lambda i: filler_text(12))
    assert memory.overflow_count >= 1
    request = memory.get_messages_for_api()
    assert request[1]["content"].startswith("CONVERSATION MEMORY (earlier turns, compressed):\n")
    assert request[2:] == memory.buffer


def test_buffer_folds_more_than_the_setting_when_the_new_message_would_not_fit():
    memory = SummaryBufferMemory(SYSTEM, turn_range_stub, max_buffer_tokens=100, messages_to_compress_on_overflow=2)
    for size in (10, 10, 10, 10, 10, 10):
        memory.add_message("user" if len(memory.archive) % 2 == 0 else "assistant", filler_text(size))
    memory.add_message("user", filler_text(90))  # needs three whole pairs out, one summariser call
    assert memory.overflow_count == 1 and memory.last_fold.messages_folded == 6
    assert memory.buffer_tokens == 90 and not memory.over_budget


def test_a_message_bigger_than_the_budget_is_kept_whole_and_reported():
    memory = SummaryBufferMemory(SYSTEM, turn_range_stub, max_buffer_tokens=50)
    run_turns(memory, 1, reply=lambda i: filler_text(20))
    huge = filler_text(400)
    memory.add_message("user", huge)  # older turns fold; the huge message stays verbatim
    assert memory.buffer == [{"role": "user", "content": huge}]
    assert memory.over_budget and memory.buffer_tokens == 400
    memory.add_message("assistant", "ok")  # nothing whole can leave: no loop, no loss
    assert memory.over_budget and len(memory.buffer) == 2
    memory.add_message("user", "next")  # the next overflow folds the oversized turn
    assert not memory.over_budget and memory.turns_folded == 2
    assert [m["content"] for m in memory.archive][2] == huge


# ----- failures lose nothing -------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(st.text(st.sampled_from(sorted(INVISIBLE) + [" ", "\n", "\t", "\u00a0", "\u3000"]), min_size=1, max_size=4),
       st.sampled_from(["summary", "buffer"]))
def test_a_summary_of_only_invisible_characters_and_spaces_is_empty_and_never_stored(blank, kind):
    # a zero-width space or a soft hyphen alone shows nothing: storing it would drop the folded turns for nothing
    memory = (SummaryMemory(SYSTEM, lambda messages, existing: blank, max_turns_before_summary=2, turns_to_keep_verbatim=1) if kind == "summary" else
              SummaryBufferMemory(SYSTEM, lambda messages, existing: blank, max_buffer_tokens=12))
    with pytest.raises(SummariserError) as failed:
        run_turns(memory, 3)
    assert failed.value.problem == "empty text"
    assert memory.summary is None and memory.fold_events == [] and len(memory.verbatim) == len(memory.archive)


@pytest.mark.parametrize("mode", ["raise", "empty"])
def test_failed_summary_memory_fold_keeps_everything_and_retries(mode):
    flaky = FlakySummariser(mode)
    memory = SummaryMemory(SYSTEM, flaky, max_turns_before_summary=4, turns_to_keep_verbatim=2)
    run_turns(memory, 3)
    memory.add_message("user", "turn 4")
    with pytest.raises(SummariserError) as raised:
        memory.add_message("assistant", "reply 4")
    assert raised.value.problem == ("raised" if mode == "raise" else "empty text") and raised.value.will_retry
    assert raised.value.kept_role == "assistant"
    assert len(memory.archive) == 8 and len(memory.verbatim) == 8
    assert memory.summary is None and memory.summary_count == 0 and memory.fold_events == []
    flaky.failing = False
    memory.add_message("user", "turn 5")
    memory.add_message("assistant", "reply 5")  # the retry folds turns 1 to 3 at once
    assert memory.summary == "summary of turns 1 to 3"
    assert [m["content"] for m in memory.verbatim] == ["turn 4", "reply 4", "turn 5", "reply 5"]


@pytest.mark.parametrize("mode", ["raise", "empty"])
def test_failed_overflow_keeps_the_new_message_and_retries(mode):
    flaky = FlakySummariser(mode)
    memory = SummaryBufferMemory(SYSTEM, flaky, max_buffer_tokens=40)
    run_turns(memory, 1, reply=lambda i: filler_text(20))
    before = to_dict(memory)
    with pytest.raises(SummariserError) as raised:
        memory.add_message("user", filler_text(25))
    assert raised.value.kept_role == "user" and raised.value.will_retry
    after = to_dict(memory)
    assert after["archive"][:2] == before["archive"] and len(after["archive"]) == 3
    assert after["summary"] is None and after["fold_events"] == before["fold_events"] == []
    assert memory.over_budget
    flaky.failing = False
    memory.add_message("assistant", "short")
    assert memory.overflow_count == 1 and memory.summary == "summary of turns 1 to 1"


def test_a_failed_condense_keeps_the_fold_and_reports_the_cap():
    calls = []

    def summarise(messages, existing):
        calls.append(messages)
        if not messages:
            raise TimeoutError("slow")
        return filler_text(60)

    memory = SummaryMemory(SYSTEM, summarise, max_turns_before_summary=2, turns_to_keep_verbatim=1, max_summary_tokens=30)
    run_turns(memory, 2)
    assert memory.summary_count == 1 and memory.summary_tokens == 60
    assert memory.summary_over_cap and memory.last_fold.over_cap and not memory.last_fold.condensed


def test_an_over_long_summary_is_summarised_again():
    def summarise(messages, existing):
        return filler_text(20) if not messages else filler_text(60)

    memory = SummaryBufferMemory(SYSTEM, summarise, max_buffer_tokens=10, max_summary_tokens=30)
    run_turns(memory, 2, reply=lambda i: filler_text(5))
    assert memory.summary_tokens == 20
    assert memory.last_fold.condensed and not memory.summary_over_cap


def test_transaction_undoes_a_failed_turn():
    memory = SummaryBufferMemory(SYSTEM, turn_range_stub, max_buffer_tokens=30)
    run_turns(memory, 2, reply=lambda i: filler_text(10))
    before = to_dict(memory)
    model_down = RuntimeError("model down")
    with pytest.raises(RuntimeError) as raised:
        with memory.transaction():
            memory.add_message("user", filler_text(20))
            assert memory.overflow_count == 1
            raise model_down
    assert raised.value is model_down
    assert to_dict(memory) == before


# ----- persistence -----------------------------------------------------------------------------
@pytest.mark.parametrize("cls, kwargs", [
    (SummaryMemory, {"max_turns_before_summary": 3, "turns_to_keep_verbatim": 1, "max_summary_tokens": 50}),
    (SummaryBufferMemory, {"max_buffer_tokens": 40, "messages_to_compress_on_overflow": 2}),
])
def test_state_round_trips_through_json(tmp_path, cls, kwargs):
    memory = cls(SYSTEM, turn_range_stub, **kwargs)
    run_turns(memory, 5, reply=lambda i: f"reply {i} ₹1,20,000 " + filler_text(8))
    memory.add_message("user", "pending question")
    path = save(memory, tmp_path / "state.json")
    loaded = load(path, turn_range_stub, kind=cls)
    assert to_dict(loaded) == to_dict(memory)
    assert loaded.get_messages_for_api() == memory.get_messages_for_api()
    assert loaded.summary_count == memory.summary_count >= 1
    assert loaded.settings() == memory.settings()
    loaded.add_message("assistant", "the reply")  # and it goes on working
    assert len(loaded.archive) == len(memory.archive) + 1


def test_loading_checks_kind_and_token_counts(tmp_path):
    memory = SummaryMemory(SYSTEM, turn_range_stub)
    run_turns(memory, 1)
    data = to_dict(memory)
    assert type(from_dict(data, turn_range_stub)) is SummaryMemory  # the file names its kind
    data["archive"][0]["tokens"] += 1
    with pytest.raises(StateError) as refused:
        from_dict(json.loads(json.dumps(data)), turn_range_stub)
    assert refused.value.field == "archive[0].tokens"


def test_turn_range_stub_refuses_summaries_it_did_not_write():
    with pytest.raises(SettingError) as refused:
        turn_range_stub([], "Chiru earns a lot")
    assert refused.value.setting == "existing_summary"
