"""Saving and loading a memory never loses data and never accepts a state that does not hold together (issue 9)."""
from __future__ import annotations

import copy
import json
import os

import pytest

from helpers.base.tokens import filler_text
from helpers.memory.stubs import turn_range_stub
from helpers.memory.summary import SummaryMemory
from helpers.memory.summary_buffer import SummaryBufferMemory
from helpers.memory.types import Message, SummariserError
from tests.memory_support import FlakySummariser

SYSTEM = "You are a test assistant."
HALF_EMOJI = json.loads('"rocket \\ud83d launch"')  # a lone surrogate, as escaped JSON gives it


def run_turns(memory, turns, reply=lambda i: f"reply {i}"):
    for i in range(1, turns + 1):
        memory.add_message("user", f"turn {i}")
        memory.add_message("assistant", reply(i))


def summary_state(turns=6) -> dict:
    memory = SummaryMemory(SYSTEM, turn_range_stub, 4, 2)
    run_turns(memory, turns)
    return memory.to_dict()


def buffer_state() -> dict:
    memory = SummaryBufferMemory(SYSTEM, turn_range_stub, max_buffer_tokens=60)
    run_turns(memory, 6, reply=lambda i: filler_text(15))
    assert memory.summary_count >= 1
    return memory.to_dict()


# ----- lone surrogates: refused on the way in, before anything is stored --------------------------

@pytest.mark.parametrize("cls", [SummaryMemory, SummaryBufferMemory])
@pytest.mark.parametrize("role", ["user", "assistant"])
def test_a_lone_surrogate_is_refused_with_a_clear_error_and_changes_nothing(cls, role):
    memory = cls(SYSTEM, turn_range_stub)
    if role == "assistant":
        memory.add_message("user", "hello")
    before = memory.to_dict()
    with pytest.raises(ValueError, match=r"lone surrogate at character 7 .*nothing was stored"):
        memory.add_message(role, HALF_EMOJI)
    assert memory.to_dict() == before


def test_a_pinned_rule_with_a_lone_surrogate_is_refused_before_anything_is_stored(tmp_path):
    memory = SummaryMemory(SYSTEM, turn_range_stub)
    with pytest.raises(ValueError, match="lone surrogate"):
        memory.pin(HALF_EMOJI)
    assert memory.pinned_rules == ()
    SummaryMemory.load(memory.save(tmp_path / "state.json"), turn_range_stub)


def test_a_summary_with_a_lone_surrogate_is_refused_and_the_fold_retried():
    memory = SummaryMemory(SYSTEM, lambda messages, existing: HALF_EMOJI, 2, 1)
    run_turns(memory, 1)
    memory.add_message("user", "turn 2")
    with pytest.raises(SummariserError, match="lone surrogate"):
        memory.add_message("assistant", "reply 2")
    assert memory.summary is None and len(memory.archive) == 4


# ----- atomic saves ---------------------------------------------------------------------------------

def test_a_save_that_fails_leaves_the_previous_save_whole_and_no_temporary_file(tmp_path):
    memory = SummaryMemory(SYSTEM, turn_range_stub, 4, 2)
    run_turns(memory, 2)
    path = memory.save(tmp_path / "state.json")
    good = path.read_bytes()
    memory._archive.append(Message("user", HALF_EMOJI, 3))  # what the old code let in
    with pytest.raises(UnicodeEncodeError):
        memory.save(path)
    assert path.read_bytes() == good
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]
    SummaryMemory.load(path, turn_range_stub)  # still loads


def test_a_crash_while_writing_leaves_the_previous_save_whole(tmp_path, monkeypatch):
    memory = SummaryMemory(SYSTEM, turn_range_stub, 4, 2)
    run_turns(memory, 2)
    path = memory.save(tmp_path / "state.json")
    good = path.read_bytes()
    memory.add_message("user", "turn 3")

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OSError, match="No space"):
        memory.save(path)
    assert path.read_bytes() == good
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]


def test_a_state_with_a_failed_fold_pending_saves_and_loads(tmp_path):
    flaky = FlakySummariser("raise")
    memory = SummaryMemory(SYSTEM, flaky, 2, 1)
    with pytest.raises(SummariserError):
        run_turns(memory, 3)  # the fold after reply 2 fails: four messages kept verbatim
    assert len(memory.archive) == 4 and memory.summary is None
    path = memory.save(tmp_path / "state.json")
    loaded = SummaryMemory.load(path, turn_range_stub)
    assert loaded.to_dict() == memory.to_dict() and loaded.to_dict()["fold_pending"] is True


# ----- load validates every field and invariant --------------------------------------------------

def edited(state: dict, change) -> dict:
    state = copy.deepcopy(state)
    change(state)
    return state


def _set(path: str, value):
    def change(state):
        target, keys = state, path.split(".")
        for key in keys[:-1]:
            target = target[int(key)] if key.isdigit() else target[key]
        last = keys[-1]
        target[int(last) if last.isdigit() else last] = value
    return change


SUMMARY_CASES = {
    "summary null, folded messages": (_set("summary", None), "summary and verbatim_start disagree"),
    "empty summary": (_set("summary", "   "), "empty summary is never stored"),
    "summary not text": (_set("summary", 42), "summary must be str or null"),
    "negative counter": (_set("counters.summary_count", -1), "counters.summary_count must be at least 0"),
    "float counter": (_set("counters.summary_count", 2.0), "counters.summary_count must be a whole number"),
    "counter disagrees with events": (_set("counters.summary_count", 3), "fold_events holds 2 folds"),
    "event out of order": (_set("fold_events.1.first_turn", 2), r"fold_events\[1\] folds turns 2"),
    "event tokens wrong": (_set("fold_events.0.message_tokens", 1), r"fold_events\[0\]\.message_tokens"),
    "event flag not bool": (_set("fold_events.0.condensed", "no"), r"fold_events\[0\]\.condensed must be true"),
    "event unknown field": (lambda s: s["fold_events"][0].update(extra=1), r"unknown fields \['extra'\]"),
    "verbatim_start odd": (_set("verbatim_start", 3), "verbatim_start 3 must be an even index"),
    "verbatim_start text": (_set("verbatim_start", "8"), "verbatim_start must be int"),
    "too many verbatim turns": (lambda s: (s.update(verbatim_start=4), s["fold_events"].pop(),
                                           s["counters"].update(summary_count=1),
                                           s.update(summary="summary of turns 1 to 2")),
                                "holds 4 complete verbatim turns"),
    "archive not a list": (_set("archive", {"role": "user"}), "archive must be list"),
    "message not an object": (_set("archive.0", "hello"), r"archive\[0\] must be an object"),
    "message content not text": (_set("archive.0.content", 5), r"archive\[0\]: the user message's content must be text"),
    "message tokens text": (_set("archive.0.tokens", "2"), r"archive\[0\]\.tokens"),
    "message missing role": (lambda s: s["archive"][0].pop("role"), r"archive\[0\] must be an object with exactly"),
    "settings not an object": (_set("settings", [4, 2]), "settings must be dict"),
    "unknown setting": (lambda s: s["settings"].update(budget=3), "settings: .*unexpected keyword"),
    "bad setting": (_set("settings.turns_to_keep_verbatim", 0), "settings: turns_to_keep_verbatim must be at least 1"),
    "system prompt missing": (lambda s: s.pop("system_prompt"), "no 'system_prompt' field"),
    "counters missing one": (_set("counters", {}), "counters must hold exactly summary_count"),
    "format true": (_set("format", True), "format True"),
    "pinned rules a string": (_set("settings.pinned_rules", "Never give tax advice."),
                              "settings: pinned_rules must be a list of rules"),
    "pinned rules an object": (_set("settings.pinned_rules", {"rule": 1}), "settings: pinned_rules must be a list"),
    "pinned rule half an emoji": (_set("settings.pinned_rules", [HALF_EMOJI]), "settings: .*lone surrogate"),
}


@pytest.mark.parametrize("case", SUMMARY_CASES)
def test_load_refuses_an_inconsistent_summary_memory_naming_the_field(case, tmp_path):
    change, message = SUMMARY_CASES[case]
    state = edited(summary_state(), change)
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state), encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        SummaryMemory.load(path, turn_range_stub)


def test_load_refuses_a_buffer_far_over_its_budget_and_mismatched_overflows():
    state = buffer_state()
    with pytest.raises(ValueError, match="overflow_count"):
        SummaryBufferMemory.from_dict(edited(state, _set("counters.overflow_count", 0)), turn_range_stub)
    with pytest.raises(ValueError, match="over max_buffer_tokens 10"):
        SummaryBufferMemory.from_dict(edited(state, _set("settings.max_buffer_tokens", 10)), turn_range_stub)


def test_load_refuses_files_that_are_not_states(tmp_path):
    for content, message in ((b"[]", "holds a list"), (b"{not json", "not UTF-8 JSON"), (b"\xff\xfe", "not UTF-8")):
        path = tmp_path / "state.json"
        path.write_bytes(content)
        with pytest.raises(ValueError, match=message):
            SummaryMemory.load(path, turn_range_stub)


def test_a_missing_state_file_is_named_as_missing_even_with_a_signing_key(tmp_path):
    from helpers.base import signing

    with signing.using_key("a local signing key"), pytest.raises(FileNotFoundError, match="no saved memory state"):
        SummaryMemory.load(tmp_path / "never_saved.json", turn_range_stub)


@pytest.mark.parametrize("state", [summary_state, buffer_state])
def test_good_states_still_round_trip(state, tmp_path):
    data = state()
    cls = SummaryMemory if data["kind"] == "SummaryMemory" else SummaryBufferMemory
    loaded = cls.from_dict(json.loads(json.dumps(data)), turn_range_stub)
    assert loaded.to_dict() == data


# ----- with the defences on (notebook 06): states load, signed saves are atomic ----------------------

def test_a_state_with_data_placement_and_pinned_rules_saves_and_loads(tmp_path):
    memory = SummaryMemory(SYSTEM, turn_range_stub, 4, 2, placement="data", pinned_rules=["Never give tax advice."],
                           summary_check="report", redact=True)
    run_turns(memory, 6)
    loaded = SummaryMemory.load(memory.save(tmp_path / "state.json"), turn_range_stub)
    assert loaded.to_dict() == memory.to_dict()
    assert loaded.get_messages_for_api() == memory.get_messages_for_api()


def test_a_signed_save_whose_signature_cannot_be_written_leaves_the_old_pair_whole(tmp_path, monkeypatch):
    from helpers.base import files, signing

    memory = SummaryMemory(SYSTEM, turn_range_stub, 4, 2)
    run_turns(memory, 2)
    with signing.using_key("a local signing key"):
        path = memory.save(tmp_path / "state.json")
        good, good_signature = path.read_bytes(), signing.signature_path(path).read_bytes()
        memory.add_message("user", "turn 3")
        synced = []

        def full_disk_on_the_signature(fd):  # the state's temporary file is synced, the signature's is not
            synced.append(fd)
            if len(synced) == 2:
                raise OSError(28, "No space left on device")

        monkeypatch.setattr(files.os, "fsync", full_disk_on_the_signature)
        with pytest.raises(OSError, match="No space"):
            memory.save(path)
        monkeypatch.undo()
        assert path.read_bytes() == good and signing.signature_path(path).read_bytes() == good_signature
        assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json", "state.json.sig"]
        assert SummaryMemory.load(path, turn_range_stub).to_dict()["archive"][-1]["content"] == "reply 2"
