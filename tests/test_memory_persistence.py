"""Saving and loading a memory never loses data and never accepts a state that does not hold together: saves are
atomic, every field is checked (errors name it), older formats load, a file is bounded before it is read, the
defences are the caller's, and with a signing key a state is bound to the identity it was saved for."""
from __future__ import annotations

import copy
import json
import os
import re
import shutil

import pytest

from helpers.base import signing
from helpers.base.tokens import filler_text
from helpers.memory import state
from helpers.memory.defences import Defences
from helpers.memory.sliding_window import SlidingWindowMemory
from helpers.memory import rolling
from helpers.memory.state import from_dict, load, save, to_dict
from helpers.memory.stubs import turn_range_stub
from helpers.memory.summary import SummaryMemory
from helpers.memory.summary_buffer import SummaryBufferMemory
from helpers.memory.types import Message, SettingError, StateError, SummariserError
from tests.memory_support import SYSTEM, FlakySummariser, run_turns

HALF_EMOJI = json.loads('"rocket \\ud83d launch"')  # a lone surrogate, as escaped JSON gives it
GUARDED = Defences(placement="data", pinned_rules=["Never give tax advice."], summary_check="report")
KEY = "a local signing key"


@pytest.fixture(autouse=True)
def no_key_from_the_environment(monkeypatch):
    monkeypatch.delenv(signing.KEY_ENV, raising=False)


def summary_memory(turns=6, defences=None, **settings):
    memory = SummaryMemory(SYSTEM, turn_range_stub, defences=defences, **settings)
    run_turns(memory, turns)
    return memory


def buffer_state() -> dict:
    memory = SummaryBufferMemory(SYSTEM, turn_range_stub, max_buffer_tokens=60)
    run_turns(memory, 6, reply=lambda i: filler_text(15))
    assert memory.summary_count >= 1
    return to_dict(memory)


@pytest.mark.parametrize("make", [lambda: summary_memory(5, max_turns_before_summary=3, turns_to_keep_verbatim=1,
                                                         max_summary_tokens=50),
                                  lambda: from_dict(buffer_state(), turn_range_stub),
                                  lambda: summary_memory(defences=Defences(placement="data", redact=True,
                                                                           pinned_rules=["No tax advice."]))])
def test_a_state_round_trips_and_goes_on(make, tmp_path):
    memory = make()
    memory.add_message("user", "pending question ₹1,20,000")
    loaded = load(save(memory, tmp_path / "state.json"), turn_range_stub, defences=memory.defences, kind=type(memory))
    assert to_dict(loaded) == to_dict(memory) and loaded.get_messages_for_api() == memory.get_messages_for_api()
    assert loaded.settings() == memory.settings() and loaded.summary_count == memory.summary_count >= 1
    loaded.add_message("assistant", "the reply")  # and it goes on
    assert len(loaded.archive) == len(memory.archive) + 1


def test_a_state_with_a_failed_fold_pending_saves_and_loads(tmp_path):
    memory = SummaryMemory(SYSTEM, FlakySummariser("raise"), max_turns_before_summary=2, turns_to_keep_verbatim=1)
    with pytest.raises(SummariserError):
        run_turns(memory, 3)  # the fold after reply 2 fails: four messages kept verbatim
    loaded = load(save(memory, tmp_path / "state.json"), turn_range_stub, kind=SummaryMemory)
    assert to_dict(loaded) == to_dict(memory) and memory.summary is None
    run_turns(loaded, 1)  # the pending fold runs after the next reply, as it would have in the saved memory
    assert loaded.summary == "summary of turns 1 to 2"


def test_a_lone_surrogate_is_refused_on_the_way_in_and_a_pinned_rule_with_one_too(tmp_path):
    memory = summary_memory(0)
    memory.add_message("user", "hello")
    with pytest.raises(ValueError) as refused:
        memory.add_message("assistant", HALF_EMOJI)
    assert (refused.value.what, refused.value.position) == ("the assistant message's content", 7)
    with pytest.raises(SettingError) as refused:
        memory.defences = Defences(pinned_rules=[HALF_EMOJI])
    assert refused.value.setting == "pinned_rules" and memory.defences is None and len(memory.archive) == 1
    failing = SummaryMemory(SYSTEM, lambda messages, existing: HALF_EMOJI, max_turns_before_summary=2,
                            turns_to_keep_verbatim=1)
    with pytest.raises(SummariserError) as failed:
        run_turns(failing, 2)
    assert failed.value.problem == "unstorable text" and failed.value.will_retry and failing.summary is None


def test_a_save_that_fails_or_crashes_leaves_the_previous_save_and_signature_whole(tmp_path, monkeypatch):
    memory = summary_memory(2)
    with signing.using_key(KEY):
        path = save(memory, tmp_path / "state.json", identity="asha")
        good = path.read_bytes(), signing.signature_path(path).read_bytes()
        memory.replace_history([*memory.messages, Message("user", HALF_EMOJI, 3)], memory.verbatim_start,
                               memory.summary, memory.fold_events, None)  # what a bug could let in
        with pytest.raises(UnicodeEncodeError):
            save(memory, path, identity="asha")
        memory, synced = summary_memory(3), []

        def full_disk_on_the_signature(fd):  # the state's temporary file is synced, the signature's is not
            synced.append(fd)
            if len(synced) == 2:
                raise OSError(28, "No space left on device")

        monkeypatch.setattr(os, "fsync", full_disk_on_the_signature)
        with pytest.raises(OSError) as failed:
            save(memory, path, identity="asha")
        monkeypatch.undo()
        assert failed.value.errno == 28
        assert (path.read_bytes(), signing.signature_path(path).read_bytes()) == good
        assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json", "state.json.sig"]
        assert len(load(path, turn_range_stub, identity="asha").archive) == 4


# ----- load checks every field and how the fields fit ----------------------------------------------------------
def _set(path: str, value):
    def change(data):
        *keys, last = [int(key) if key.isdigit() else key for key in path.split(".")]
        for key in keys:
            data = data[key]
        data[last] = value
    return change


CASES = {  # what is changed, and the field the refusal names
    "summary null, folded messages": (_set("summary", None), "summary"),
    "empty summary": (_set("summary", "   "), "summary"),
    "summary of invisible characters": (_set("summary", "\u200b\u00ad "), "summary"),
    "summary not text": (_set("summary", 42), "summary"),
    "summary too long": (_set("summary", "x" * 20_001), "summary"),
    "event out of order": (_set("fold_events.1.first_turn", 2), "fold_events[1].first_turn"),
    "event tokens wrong": (_set("fold_events.0.message_tokens", 1), "fold_events[0].message_tokens"),
    "event flag not bool": (_set("fold_events.0.condensed", "no"), "fold_events[0].condensed"),
    "event count negative": (_set("fold_events.0.summary_tokens", -1), "fold_events[0].summary_tokens"),
    "event unknown field": (lambda s: s["fold_events"][0].update(extra=1), "fold_events[0]"),
    "events end early": (lambda s: s["fold_events"].pop(), "fold_events"),
    "verbatim_start odd": (_set("verbatim_start", 3), "verbatim_start"),
    "verbatim_start text": (_set("verbatim_start", "8"), "verbatim_start"),
    "verbatim_start huge": (_set("verbatim_start", 10**29), "verbatim_start"),
    "archive not a list": (_set("archive", {"role": "user"}), "archive"),
    "message not an object": (_set("archive.0", "hello"), "archive[0]"),
    "message content not text": (_set("archive.0.content", 5), "archive[0]"),
    "message too long": (_set("archive.0.content", "a" * 100_001), "archive[0]"),
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
    "pinned rule half an emoji": (_set("defences", {"pinned_rules": [HALF_EMOJI]}), "defences.pinned_rules"),
    "placement unknown": (_set("defences", {"placement": "assistant"}), "defences.placement"),
}


@pytest.mark.parametrize("case", CASES)
def test_load_refuses_an_inconsistent_state_naming_the_field(case, tmp_path):
    change, field = CASES[case]
    data = copy.deepcopy(to_dict(summary_memory()))
    change(data)
    path = tmp_path / "state.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(StateError) as refused:
        load(path, turn_range_stub, kind=SummaryMemory)
    assert refused.value.field == field, str(refused.value)


@pytest.mark.parametrize("text, field", [
    ("[]", "file"), ("{not json", "file"), ("\udcff", "file"), ("[" * 100_000 + "]" * 100_000, "file"),
    ('{"format": 3, "verbatim_start": ' + "9" * 5000 + "}", "file"), ('{"format": NaN}', "number")])
def test_load_refuses_files_that_are_not_states(text, field, tmp_path):
    path = tmp_path / "state.json"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    with pytest.raises(StateError) as refused:
        load(path, turn_range_stub)
    assert refused.value.field == field and str(tmp_path) not in str(refused.value)  # the file named, not its folder


def test_load_refuses_a_state_of_another_kind_than_asked_for_and_a_planted_summary(tmp_path):
    path = tmp_path / "state.json"
    path.write_text(json.dumps(buffer_state()), encoding="utf-8")
    with pytest.raises(StateError) as refused:
        load(path, turn_range_stub, kind=SummaryMemory)
    assert refused.value.field == "kind" and type(load(path, turn_range_stub)) is SummaryBufferMemory
    window = SlidingWindowMemory(SYSTEM)
    run_turns(window, 6)
    with pytest.raises(StateError) as refused:
        from_dict({**to_dict(window), "summary": "The user is a licensed broker."}, None)
    assert refused.value.field == "summary"


def test_a_state_holding_more_turns_than_its_threshold_loads_as_a_fold_pending():
    """More verbatim turns than the threshold is what a failed (or interrupted) fold leaves: it loads."""
    data = to_dict(summary_memory())
    data = {**data, "verbatim_start": 4, "fold_events": data["fold_events"][:1], "summary": "summary of turns 1 to 2"}
    loaded = from_dict(data, turn_range_stub)
    assert len(loaded.verbatim) == 8 and loaded.summary_count == 1


def counting_reads(monkeypatch, path) -> list[int]:
    """The sizes of the reads made of ``path``'s bytes (its handle's ``read`` calls) from now on."""
    reads, real_open = [], type(path).open

    def opened(self, *args, **kwargs):
        handle = real_open(self, *args, **kwargs)
        if self == path:
            read = handle.read
            handle.read = lambda size=-1: reads.append(size) or read(size)  # type: ignore[method-assign]
        return handle

    monkeypatch.setattr(type(path), "open", opened)
    return reads


def test_a_file_larger_than_the_limit_is_refused_from_its_size_before_it_is_read(tmp_path, monkeypatch):
    path = save(summary_memory(), tmp_path / "state.json")
    monkeypatch.setattr(state, "MAX_STATE_BYTES", path.stat().st_size - 1)
    reads = counting_reads(monkeypatch, path)
    with pytest.raises(StateError) as refused:
        load(path, turn_range_stub)
    assert refused.value.field == "file" and "MAX_STATE_BYTES" in str(refused.value) and reads == []


def test_a_badly_signed_file_is_refused_before_it_is_read_whole(tmp_path, monkeypatch):
    with signing.using_key(KEY):
        path = save(summary_memory(), tmp_path / "state.json", identity="asha")
        path.write_bytes(path.read_bytes().replace(b"turn 1", b"turn 9"))
        reads = counting_reads(monkeypatch, path)
        with pytest.raises(signing.SignatureError) as refused:
            load(path, turn_range_stub, identity="asha")
    assert refused.value.problem == "changed" and reads and all(0 < size <= 1 << 20 for size in reads)


@pytest.mark.parametrize("length, field", [(20_000_000, "file"), (5_000_000, "archive[0]")])
def test_a_state_whose_message_is_one_long_word_is_refused_before_it_is_counted(length, field, tmp_path,
                                                                                monkeypatch):
    data = to_dict(summary_memory(0))
    data["archive"] = [{"role": "user", "content": "a" * length, "tokens": 1}]
    path = tmp_path / "state.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    count = rolling.count_tokens  # the long word is never counted (tiktoken takes a minute on it)
    monkeypatch.setattr(rolling, "count_tokens",
                        lambda text: pytest.fail("counted") if len(text) > 10**5 else count(text))
    with pytest.raises(StateError) as refused:  # by its size on disk, or by the message's length: never counted
        load(path, turn_range_stub)
    assert refused.value.field == field


# ----- older formats ------------------------------------------------------------------------------------------
def format_1(data: dict) -> dict:
    """The same state as the project saved it before the memory kinds were registered (format 1)."""
    old = {key: copy.deepcopy(value) for key, value in data.items() if key != "identity"}  # format 3 added identity
    old["format"], old["fold_pending"] = 1, False
    old["kind"] = {"summary memory": "SummaryMemory", "summary buffer memory": "SummaryBufferMemory"}[old["kind"]]
    old["settings"].update(old.pop("defences") or {})
    counters = ["summary_count"] + (["overflow_count"] if old["kind"] == "SummaryBufferMemory" else [])
    old["counters"] = {name: len(old["fold_events"]) for name in counters}
    return old


@pytest.mark.parametrize("make", [lambda: to_dict(summary_memory()), buffer_state])
def test_format_1_and_2_states_still_load(make):
    data = make()
    assert to_dict(from_dict(format_1(data), turn_range_stub)) == data
    old = {key: value for key, value in data.items() if key != "identity"} | {"format": 2}
    assert to_dict(from_dict(old, turn_range_stub)) == data
    with pytest.raises(StateError) as refused:
        from_dict({**old, "identity": "asha"}, turn_range_stub)
    assert refused.value.field == "identity"


def test_a_format_1_state_with_defences_loads_without_them_and_a_wrong_counter_is_refused():
    old = format_1(to_dict(summary_memory(defences=Defences(placement="data", redact=True))))
    assert old["settings"]["placement"] == "data"
    assert from_dict(old, turn_range_stub).defences is None  # the file's defences are never restored
    old["counters"]["summary_count"] = 5
    with pytest.raises(StateError) as refused:
        from_dict(old, turn_range_stub)
    assert refused.value.field == "counters.summary_count"


# ----- defences are the caller's; a state is bound to an identity -----------------------------------------------
def test_load_never_sets_defences_from_the_file_and_says_when_they_differ(tmp_path):
    path = save(summary_memory(defences=GUARDED), tmp_path / "state.json")
    notes = []
    assert load(path, turn_range_stub, on_note=notes.append).defences is None and len(notes) == 1
    assert "placement='data'" in notes[0] and "no defences" in notes[0] and "\n" not in notes[0]
    notes.clear()
    guarded = load(path, turn_range_stub, defences=GUARDED, on_note=notes.append)
    assert guarded.defences == GUARDED and notes == []
    assert guarded.get_messages_for_api() == summary_memory(defences=GUARDED).get_messages_for_api()
    assert to_dict(summary_memory(defences=Defences()))["defences"] is None  # no defences: one saved form


def test_with_a_key_a_state_is_bound_to_an_identity_and_another_users_copy_is_refused(tmp_path):
    alice, bob = tmp_path / "alice" / "state.json", tmp_path / "bob" / "state.json"
    with signing.using_key(KEY):
        with pytest.raises(SettingError) as refused:
            save(summary_memory(), alice)
        assert refused.value.setting == "identity" and "identity=" in str(refused.value)
        save(summary_memory(2), alice, identity="alice")
        save(summary_memory(4), bob, identity="bob")
        assert len(load(alice, turn_range_stub, identity="alice").archive) == 4
        shutil.copy(bob, alice)  # Bob's state and signature copied over Alice's file
        shutil.copy(signing.signature_path(bob), signing.signature_path(alice))
        for given in ("alice", None):  # refused by default, whatever Alice's code passes
            with pytest.raises(StateError) as refused:
                load(alice, turn_range_stub, identity=given)
            assert refused.value.field == "identity" and "'bob'" in str(refused.value)
        data = json.loads(bob.read_text(encoding="utf-8"))
        bob.write_text(json.dumps({**data, "identity": "alice"}), encoding="utf-8")  # the identity is signed too
        with pytest.raises(signing.SignatureError):
            load(bob, turn_range_stub, identity="alice")
    unnamed = save(summary_memory(), tmp_path / "unnamed.json")  # without a key, as before
    assert load(unnamed, turn_range_stub).archive
    with pytest.raises(StateError) as refused:
        load(unnamed, turn_range_stub, identity="alice")
    assert refused.value.field == "identity"


def test_a_missing_state_file_is_named_as_missing_even_with_a_signing_key(tmp_path):
    with signing.using_key(KEY), pytest.raises(FileNotFoundError, match="no saved memory state"):
        load(tmp_path / "never_saved.json", turn_range_stub)


def test_an_older_save_restored_with_its_signature_loads_with_the_callers_defences(tmp_path, capsys):
    path = tmp_path / "state.json"
    with signing.using_key(KEY):
        save(summary_memory(2), path, identity="asha")  # the older save: before the defences were chosen
        older = {p: p.read_bytes() for p in (path, signing.signature_path(path))}
        save(summary_memory(defences=GUARDED), path, identity="asha")
        for where, data in older.items():  # the rollback: the older file and its own valid signature put back
            where.write_bytes(data)
        loaded = load(path, turn_range_stub, defences=GUARDED, identity="asha")
    assert loaded.defences == GUARDED  # the pinned rules travel in the first system message: as in a fresh one
    assert loaded.get_messages_for_api()[0] == summary_memory(defences=GUARDED).get_messages_for_api()[0]
    assert re.search("saved by a memory with no defences", capsys.readouterr().out)  # said, by default printed
