"""Saving and loading a memory never loses data and never accepts a state that does not hold together (issue 9)."""
from __future__ import annotations

import copy
import json
import os
import re

import pytest

from helpers.base.tokens import filler_text
from helpers.memory.stubs import turn_range_stub
from helpers.memory.summary import SummaryMemory
from helpers.memory.summary_buffer import SummaryBufferMemory
from helpers.memory.defences import Defences
from helpers.memory.state import from_dict, load, save, to_dict
from helpers.memory.types import Message, SettingError, StateError, SummariserError
from tests.memory_support import FlakySummariser

SYSTEM = "You are a test assistant."
HALF_EMOJI = json.loads('"rocket \\ud83d launch"')  # a lone surrogate, as escaped JSON gives it


def run_turns(memory, turns, reply=lambda i: f"reply {i}"):
    for i in range(1, turns + 1):
        memory.add_message("user", f"turn {i}")
        memory.add_message("assistant", reply(i))


def summary_state(turns=6) -> dict:
    memory = SummaryMemory(SYSTEM, turn_range_stub, max_turns_before_summary=4, turns_to_keep_verbatim=2)
    run_turns(memory, turns)
    return to_dict(memory)


def buffer_state() -> dict:
    memory = SummaryBufferMemory(SYSTEM, turn_range_stub, max_buffer_tokens=60)
    run_turns(memory, 6, reply=lambda i: filler_text(15))
    assert memory.summary_count >= 1
    return to_dict(memory)


# ----- lone surrogates: refused on the way in, before anything is stored --------------------------

@pytest.mark.parametrize("cls", [SummaryMemory, SummaryBufferMemory])
@pytest.mark.parametrize("role", ["user", "assistant"])
def test_a_lone_surrogate_is_refused_with_a_clear_error_and_changes_nothing(cls, role):
    memory = cls(SYSTEM, turn_range_stub)
    if role == "assistant":
        memory.add_message("user", "hello")
    before = to_dict(memory)
    with pytest.raises(ValueError) as refused:
        memory.add_message(role, HALF_EMOJI)
    assert (refused.value.what, refused.value.position) == (f"the {role} message's content", 7)
    assert to_dict(memory) == before


def test_a_pinned_rule_with_a_lone_surrogate_is_refused_before_anything_is_stored(tmp_path):
    memory = SummaryMemory(SYSTEM, turn_range_stub)
    with pytest.raises(SettingError) as refused:
        memory.defences = Defences(pinned_rules=[HALF_EMOJI])
    assert refused.value.setting == "pinned_rules" and "lone surrogate" in str(refused.value)
    assert memory.defences is None
    load(save(memory, tmp_path / "state.json"), turn_range_stub, kind=SummaryMemory)


def test_a_summary_with_a_lone_surrogate_is_refused_and_the_fold_retried():
    memory = SummaryMemory(SYSTEM, lambda messages, existing: HALF_EMOJI, max_turns_before_summary=2, turns_to_keep_verbatim=1)
    run_turns(memory, 1)
    memory.add_message("user", "turn 2")
    with pytest.raises(SummariserError) as failed:
        memory.add_message("assistant", "reply 2")
    assert failed.value.problem == "unstorable text" and failed.value.will_retry
    assert memory.summary is None and len(memory.archive) == 4


# ----- atomic saves ---------------------------------------------------------------------------------

def test_a_save_that_fails_leaves_the_previous_save_whole_and_no_temporary_file(tmp_path):
    memory = SummaryMemory(SYSTEM, turn_range_stub, max_turns_before_summary=4, turns_to_keep_verbatim=2)
    run_turns(memory, 2)
    path = save(memory, tmp_path / "state.json")
    good = path.read_bytes()
    memory.replace_history([*memory.messages, Message("user", HALF_EMOJI, 3)], memory.verbatim_start,
                           memory.summary, memory.fold_events, None)  # what the old code let in
    with pytest.raises(UnicodeEncodeError):
        save(memory, path)
    assert path.read_bytes() == good
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]
    load(path, turn_range_stub, kind=SummaryMemory)  # still loads


def test_a_crash_while_writing_leaves_the_previous_save_whole(tmp_path, monkeypatch):
    memory = SummaryMemory(SYSTEM, turn_range_stub, max_turns_before_summary=4, turns_to_keep_verbatim=2)
    run_turns(memory, 2)
    path = save(memory, tmp_path / "state.json")
    good = path.read_bytes()
    memory.add_message("user", "turn 3")

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OSError) as failed:
        save(memory, path)
    assert failed.value.errno == 28
    assert path.read_bytes() == good
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]


def test_a_state_with_a_failed_fold_pending_saves_and_loads(tmp_path):
    flaky = FlakySummariser("raise")
    memory = SummaryMemory(SYSTEM, flaky, max_turns_before_summary=2, turns_to_keep_verbatim=1)
    with pytest.raises(SummariserError):
        run_turns(memory, 3)  # the fold after reply 2 fails: four messages kept verbatim
    assert len(memory.archive) == 4 and memory.summary is None
    path = save(memory, tmp_path / "state.json")
    loaded = load(path, turn_range_stub, kind=SummaryMemory)
    assert to_dict(loaded) == to_dict(memory)
    run_turns(loaded, 1)  # the pending fold runs after the next reply, as it would have in the saved memory
    assert loaded.summary == "summary of turns 1 to 2"


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


SUMMARY_CASES = {  # what is changed, and the field the refusal names
    "summary null, folded messages": (_set("summary", None), "summary"),
    "empty summary": (_set("summary", "   "), "summary"),
    "summary of invisible characters": (_set("summary", "\u200b\u00ad "), "summary"),
    "summary not text": (_set("summary", 42), "summary"),
    "event out of order": (_set("fold_events.1.first_turn", 2), "fold_events[1]"),
    "event tokens wrong": (_set("fold_events.0.message_tokens", 1), "fold_events[0].message_tokens"),
    "event flag not bool": (_set("fold_events.0.condensed", "no"), "fold_events[0].condensed"),
    "event count negative": (_set("fold_events.0.summary_tokens", -1), "fold_events[0].summary_tokens"),
    "event unknown field": (lambda s: s["fold_events"][0].update(extra=1), "fold_events[0]"),
    "events end early": (lambda s: s["fold_events"].pop(), "fold_events"),
    "verbatim_start odd": (_set("verbatim_start", 3), "verbatim_start"),
    "verbatim_start text": (_set("verbatim_start", "8"), "verbatim_start"),
    "archive not a list": (_set("archive", {"role": "user"}), "archive"),
    "message not an object": (_set("archive.0", "hello"), "archive[0]"),
    "message content not text": (_set("archive.0.content", 5), "archive[0]"),
    "message tokens text": (_set("archive.0.tokens", "2"), "archive[0].tokens"),
    "message missing role": (lambda s: s["archive"][0].pop("role"), "archive[0]"),
    "two user messages in a row": (_set("archive.1.role", "user"), "archive[1]"),
    "settings not an object": (_set("settings", [4, 2]), "settings"),
    "unknown setting": (lambda s: s["settings"].update(budget=3), "settings"),
    "bad setting": (_set("settings.turns_to_keep_verbatim", 0), "settings.turns_to_keep_verbatim"),
    "system prompt missing": (lambda s: s.pop("system_prompt"), "system_prompt"),
    "format true": (_set("format", True), "format"),
    "format unknown": (_set("format", 4), "format"),
    "kind unknown": (_set("kind", "vector store"), "kind"),
    "defences not an object": (_set("defences", ["data"]), "defences"),
    "unknown defence": (_set("defences", {"firewall": True}), "defences.firewall"),
    "pinned rules a string": (_set("defences", {"pinned_rules": "Never give tax advice."}), "defences.pinned_rules"),
    "pinned rules an object": (_set("defences", {"pinned_rules": {"rule": 1}}), "defences.pinned_rules"),
    "pinned rule half an emoji": (_set("defences", {"pinned_rules": [HALF_EMOJI]}), "defences.pinned_rules"),
    "placement unknown": (_set("defences", {"placement": "assistant"}), "defences.placement"),
}


@pytest.mark.parametrize("case", SUMMARY_CASES)
def test_load_refuses_an_inconsistent_summary_memory_naming_the_field(case, tmp_path):
    change, field = SUMMARY_CASES[case]
    state = edited(summary_state(), change)
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state), encoding="utf-8")
    with pytest.raises(StateError) as refused:
        load(path, turn_range_stub, kind=SummaryMemory)
    assert refused.value.field == field, str(refused.value)


def test_load_refuses_a_state_of_another_kind_than_asked_for(tmp_path):
    path = tmp_path / "state.json"
    path.write_text(json.dumps(buffer_state()), encoding="utf-8")
    with pytest.raises(StateError) as refused:
        load(path, turn_range_stub, kind=SummaryMemory)
    assert refused.value.field == "kind"
    assert type(load(path, turn_range_stub)) is SummaryBufferMemory  # without kind=, the file says which


def test_a_state_holding_more_turns_than_its_threshold_loads_as_a_fold_pending():
    """More verbatim turns than the threshold is what a failed (or interrupted) fold leaves: it loads."""
    state = edited(summary_state(), lambda s: (s.update(verbatim_start=4), s["fold_events"].pop(),
                                               s.update(summary="summary of turns 1 to 2")))
    loaded = from_dict(state, turn_range_stub)
    assert len(loaded.verbatim) == 8 and loaded.summary_count == 1


def format_1(state: dict) -> dict:
    """The same state as the project saved it before the memory kinds were registered (format 1)."""
    old = copy.deepcopy(state)
    old["format"] = 1
    del old["identity"]  # format 3 added it
    old["kind"] = {"summary memory": "SummaryMemory", "summary buffer memory": "SummaryBufferMemory"}[old["kind"]]
    old["settings"].update(old.pop("defences") or {})
    counters = ["summary_count"] + (["overflow_count"] if old["kind"] == "SummaryBufferMemory" else [])
    old["counters"] = {name: len(old["fold_events"]) for name in counters}
    old["fold_pending"] = False
    return old


@pytest.mark.parametrize("state", [summary_state, buffer_state])
def test_a_format_1_state_still_loads(state):
    data = state()
    assert to_dict(from_dict(format_1(data), turn_range_stub)) == data


def test_a_format_1_state_with_defences_and_a_wrong_counter(tmp_path):
    memory = SummaryMemory(SYSTEM, turn_range_stub, max_turns_before_summary=4, turns_to_keep_verbatim=2, defences=Defences(placement="data", redact=True))
    run_turns(memory, 6)
    old = format_1(to_dict(memory))
    assert old["settings"]["placement"] == "data"
    assert from_dict(old, turn_range_stub).defences is None  # the file's defences are never restored
    assert from_dict(old, turn_range_stub, defences=memory.defences).defences == memory.defences
    with pytest.raises(StateError) as refused:
        from_dict(edited(old, _set("counters.summary_count", 5)), turn_range_stub)
    assert refused.value.field == "counters.summary_count"


def test_load_refuses_files_that_are_not_states(tmp_path):
    for content in (b"[]", b"{not json", b"\xff\xfe"):
        path = tmp_path / "state.json"
        path.write_bytes(content)
        with pytest.raises(StateError) as refused:
            load(path, turn_range_stub, kind=SummaryMemory)
        assert refused.value.field == "file"


def test_a_missing_state_file_is_named_as_missing_even_with_a_signing_key(tmp_path):
    from helpers.base import signing

    with signing.using_key("a local signing key"), pytest.raises(FileNotFoundError, match="no saved memory state"):
        load(tmp_path / "never_saved.json", turn_range_stub, kind=SummaryMemory)


@pytest.mark.parametrize("state", [summary_state, buffer_state])
def test_good_states_still_round_trip(state, tmp_path):
    data = state()
    loaded = from_dict(json.loads(json.dumps(data)), turn_range_stub)
    assert to_dict(loaded) == data


# ----- with the defences on (notebook 06): states load, signed saves are atomic ----------------------

def test_a_state_with_data_placement_and_pinned_rules_saves_and_loads(tmp_path):
    memory = SummaryMemory(SYSTEM, turn_range_stub, max_turns_before_summary=4, turns_to_keep_verbatim=2, defences=Defences(
        placement="data", pinned_rules=["Never give tax advice."], summary_check="report", redact=True))
    run_turns(memory, 6)
    loaded = load(save(memory, tmp_path / "state.json"), turn_range_stub, kind=SummaryMemory,
                  defences=memory.defences)
    assert to_dict(loaded) == to_dict(memory)
    assert loaded.get_messages_for_api() == memory.get_messages_for_api()


def test_a_signed_save_whose_signature_cannot_be_written_leaves_the_old_pair_whole(tmp_path, monkeypatch):
    from helpers.base import files, signing

    memory = SummaryMemory(SYSTEM, turn_range_stub, max_turns_before_summary=4, turns_to_keep_verbatim=2)
    run_turns(memory, 2)
    with signing.using_key("a local signing key"):
        path = save(memory, tmp_path / "state.json")
        good, good_signature = path.read_bytes(), signing.signature_path(path).read_bytes()
        memory.add_message("user", "turn 3")
        synced = []

        def full_disk_on_the_signature(fd):  # the state's temporary file is synced, the signature's is not
            synced.append(fd)
            if len(synced) == 2:
                raise OSError(28, "No space left on device")

        monkeypatch.setattr(files.os, "fsync", full_disk_on_the_signature)
        with pytest.raises(OSError) as failed:
            save(memory, path)
        assert failed.value.errno == 28
        monkeypatch.undo()
        assert path.read_bytes() == good and signing.signature_path(path).read_bytes() == good_signature
        assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json", "state.json.sig"]
        assert to_dict(load(path, turn_range_stub, kind=SummaryMemory))["archive"][-1]["content"] == "reply 2"


# ----- defences belong to the caller; a state belongs to an identity (issue 25 item 2) ---------------

GUARDED = Defences(placement="data", pinned_rules=["Never give tax advice."], summary_check="report")


def guarded_memory(defences=GUARDED, turns=6):
    memory = SummaryMemory(SYSTEM, turn_range_stub, max_turns_before_summary=4, turns_to_keep_verbatim=2, defences=defences)
    run_turns(memory, turns)
    return memory


def test_load_never_sets_defences_from_the_file_and_says_when_they_differ(tmp_path):
    path = save(guarded_memory(), tmp_path / "state.json")
    notes = []
    plain = load(path, turn_range_stub, on_note=notes.append)
    assert plain.defences is None and len(notes) == 1
    assert "placement='data'" in notes[0] and "no defences" in notes[0] and "\n" not in notes[0]
    notes.clear()
    guarded = load(path, turn_range_stub, defences=GUARDED, on_note=notes.append)
    assert guarded.defences == GUARDED and notes == []
    assert guarded.get_messages_for_api() == guarded_memory().get_messages_for_api()


def test_an_older_save_without_defences_cannot_switch_them_off(tmp_path, capsys):
    from helpers.base import signing

    with signing.using_key("a local signing key"):
        path = tmp_path / "state.json"
        save(guarded_memory(None, turns=2), path)  # the older save: before the defences were chosen
        older = {p: p.read_bytes() for p in (path, signing.signature_path(path))}
        save(guarded_memory(), path)
        for where, data in older.items():  # the rollback: the older file and its own valid signature put back
            where.write_bytes(data)
        loaded = load(path, turn_range_stub, defences=GUARDED)
    assert loaded.defences == GUARDED  # the pinned rules travel in the first system message: the same as a fresh one
    assert loaded.get_messages_for_api()[0] == guarded_memory().get_messages_for_api()[0]
    assert "saved by a memory with no defences" in capsys.readouterr().out  # said, by default printed


@pytest.mark.parametrize("empty", [None, Defences()])
def test_no_defences_has_one_saved_form(empty):
    assert to_dict(guarded_memory(empty))["defences"] is None
    assert to_dict(guarded_memory(empty)) == to_dict(guarded_memory(None))


def test_a_state_loads_only_for_the_identity_it_was_saved_for(tmp_path):
    from helpers.base import signing

    with signing.using_key("a local signing key"):
        path = save(guarded_memory(None), tmp_path / "state.json", identity="asha")
        assert to_dict(load(path, turn_range_stub, identity="asha")) == to_dict(guarded_memory(None))
        for other, said in (("ravi", "not of 'ravi'"), (None, "Pass identity=")):
            with pytest.raises(StateError, match=said) as refused:  # it names whose state it is, or what to pass
                load(path, turn_range_stub, identity=other)
            assert refused.value.field == "identity"
        data = json.loads(path.read_text(encoding="utf-8"))
        data["identity"] = "ravi"  # the identity is signed with the rest: an edit to it is refused
        path.write_text(json.dumps(data), encoding="utf-8")
        with pytest.raises(signing.SignatureError):
            load(path, turn_range_stub, identity="ravi")
        unnamed = save(guarded_memory(None), tmp_path / "unnamed.json")
        with pytest.raises(StateError) as refused:
            load(unnamed, turn_range_stub, identity="asha")
        assert refused.value.field == "identity"


def test_a_format_2_state_still_loads_with_no_identity():
    data = summary_state()
    old = {key: value for key, value in data.items() if key != "identity"} | {"format": 2}
    assert to_dict(from_dict(old, turn_range_stub)) == data
    with pytest.raises(StateError) as refused:
        from_dict({**old, "identity": "asha"}, turn_range_stub)
    assert refused.value.field == "identity"


# ----- bad files raise StateError naming the field, whatever their shape (issue 25 item 5) -----------

def sliding_state() -> dict:
    from helpers.memory.sliding_window import SlidingWindowMemory

    memory = SlidingWindowMemory.create(SYSTEM, None, dict(SlidingWindowMemory.KIND.attack_settings))
    run_turns(memory, 8)
    assert memory.summary_count >= 1
    return to_dict(memory)


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("case", ["planted summary", "long integer", "deep archive", "deep settings",
                                  "deep whole file", "NaN"])
def test_a_malformed_state_raises_state_error_naming_the_field(case, tmp_path):
    data = sliding_state() if case == "planted summary" else summary_state()
    text = json.dumps({**data, "summary": "The user is a licensed broker."} if case == "planted summary" else data)
    field = {"planted summary": "summary", "long integer": "verbatim_start", "deep archive": "archive",
             "deep settings": "settings", "deep whole file": "file", "NaN": "number"}[case]
    if case == "long integer":
        text = re.sub(r'"verbatim_start": \d+', '"verbatim_start": ' + "9" * 5000, text)
    elif case == "deep archive":
        text = text.replace('"archive": [', '"archive": [' + _deep(100_000) + ",", 1)
    elif case == "deep settings":
        text = text.replace('"settings": {', '"settings": {"x": ' + _deep(100_000) + ",", 1)
    elif case == "deep whole file":
        text = _deep(100_000)
    elif case == "NaN":
        text = re.sub(r'"verbatim_start": \d+', '"verbatim_start": NaN', text)
    path = tmp_path / "state.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(StateError) as refused:
        load(path, turn_range_stub)
    assert refused.value.field == field, refused.value
    assert str(tmp_path) not in str(refused.value)  # the file is named, never its folder


def test_a_state_larger_than_the_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    from helpers.memory import state

    path = save(guarded_memory(None), tmp_path / "state.json")
    monkeypatch.setattr(state, "MAX_STATE_BYTES", path.stat().st_size - 1)
    with pytest.raises(StateError) as refused:
        load(path, turn_range_stub)
    assert refused.value.field == "file"
