"""A failed or interrupted turn, fold, change of defences or erasure inside ``transaction()`` leaves a memory equal to
the one before (a kind's own fields, changed in place, included), and that memory saves, loads and goes on; a turn
costs the same at any length (the transaction copies no archive)."""
from __future__ import annotations

import copy
import dataclasses
import re
from pathlib import Path

import pytest

from helpers.memory.defences import Defences
from helpers.memory.erasure import forget
from helpers.memory.registry import KINDS
from helpers.memory.state import from_dict, load, save, to_dict
from helpers.memory.summary import SummaryMemory
from helpers.memory.types import SummariserError
from tests.support.interrupts import InterruptAtCall

SYSTEM = "You are FinCoach, a test assistant."
TURNS = [("My salary is Rs 1,20,000 and I live in Pune.", "Noted."), ("Asha is my sister.", "Noted, Asha."),
         ("My rent is Rs 25,000.", "Rent noted."), ("I want an emergency fund.", "Six months of expenses."),
         ("What about Zorbex?", "Let us keep to your plan.")]
SMALL = {"summary buffer memory": {"max_buffer_tokens": 40, "messages_to_compress_on_overflow": 2}}


def summarise(messages, existing):
    return " ".join(filter(None, [existing, *(m["content"].split(".")[0] for m in messages)]))[-300:]


class EntityMemory(SummaryMemory):
    """A kind with a field of its own, changed in place: the names the user mentions."""

    KIND = dataclasses.replace(SummaryMemory.KIND, name="entity memory", heading="ENTITIES:\n")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.entities: set[str] = set()

    def add_message(self, role: str, content: str) -> None:
        self.entities.update(word.strip(".,") for word in content.split() if word[:1].isupper())
        super().add_message(role, content)


def make(kind: str, defences=None):
    cls = KINDS[kind]
    return cls.create(SYSTEM, summarise, {**cls.KIND.attack_settings, **SMALL.get(kind, {})}, defences)


def observable(memory) -> tuple:
    return to_dict(memory), memory.get_messages_for_api(), memory.snapshot(), memory.summary_count


def run(memory, turns=TURNS) -> None:
    for question, reply in turns:
        memory.add_message("user", question)
        memory.add_message("assistant", reply)


def test_a_failed_turn_undoes_a_kinds_own_field_changed_in_place():
    memory = EntityMemory(SYSTEM, summarise, max_turns_before_summary=2, turns_to_keep_verbatim=1)
    run(memory, TURNS[:2])
    before, entities = observable(memory), set(memory.entities)
    with pytest.raises(RuntimeError), memory.transaction():
        memory.add_message("user", "Ravi and Meera are my parents.")
        memory.add_message("assistant", "Noted.")  # this reply folds
        assert {"Ravi", "Meera"} <= memory.entities and memory.summary_count == before[3] + 1
        raise RuntimeError("the model call failed")
    assert memory.entities == entities and observable(memory) == before
    run(memory, TURNS[2:])  # and it goes on as if the failed turn had never been
    fresh = EntityMemory(SYSTEM, summarise, max_turns_before_summary=2, turns_to_keep_verbatim=1)
    run(fresh)
    assert observable(memory) == observable(fresh) and memory.entities == fresh.entities


OPERATIONS = {
    "a turn that folds": lambda memory: (memory.add_message("user", "Asha wants an SIP of Rs 10,000. " * 3),
                                         memory.add_message("assistant", "An SIP suits her. " * 3)),
    "a change of defences": lambda memory: setattr(memory, "defences", Defences(
        placement="data", pinned_rules=["Never recommend crypto."], summary_check="report")),
    "an erasure": lambda memory: forget(memory, "Rs 25,000", progress=None),
}


@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize("kind", ["summary memory", "summary buffer memory", "sliding window"])
def test_an_interrupt_at_any_call_leaves_the_memory_as_before_and_it_goes_on(kind, operation):
    prepared = make(kind)
    run(prepared)
    before, at = observable(prepared), 0
    while True:
        at += 1
        memory, interrupt = copy.deepcopy(prepared), InterruptAtCall(at, (summarise,))
        try:
            with interrupt, memory.transaction():
                OPERATIONS[operation](memory)
        except KeyboardInterrupt:
            pass
        if not interrupt.raised:
            break
        assert observable(memory) == before, f"interrupted at call {at}"
        assert observable(from_dict(to_dict(memory), summarise)) == before
    run(memory, TURNS[:1])  # and it goes on
    assert at > 3


@pytest.mark.parametrize("kind", ["summary memory", "summary buffer memory"])
def test_an_interrupt_from_the_summariser_leaves_the_memory_as_before(kind, tmp_path):
    def interrupted(messages, existing):
        raise KeyboardInterrupt("the stop button")

    memory = make(kind)
    run(memory, TURNS[:1])
    before = observable(memory)
    memory.summarise = interrupted
    with pytest.raises(KeyboardInterrupt), memory.transaction():
        run(memory, TURNS[1:])
    assert observable(memory) == before and memory.summarise is interrupted  # the summariser is not copied
    memory.summarise = summarise
    assert observable(load(save(memory, tmp_path / "state.json"), summarise)) == before


def test_a_fold_that_failed_for_good_waits_and_is_remembered_after_the_rollback():
    class TooLong(Exception):
        retry_can_help = False

    calls = []

    def refusing(messages, existing):
        calls.append(len(messages))
        raise TooLong("the request is too long for the server's context")

    memory = SummaryMemory(SYSTEM, refusing, max_turns_before_summary=2, turns_to_keep_verbatim=1)
    run(memory, TURNS[:1])
    with pytest.raises(SummariserError) as failed, memory.transaction():
        run(memory, TURNS[1:2])
    assert not failed.value.will_retry and len(memory.archive) == 2 and memory.fold_waits
    run(memory, TURNS[1:2])  # the same fold is not tried again: nothing changed that could make it work
    assert calls == [2] and memory.fold_waits and memory.summary is None
    memory.summarise = summarise  # a new summariser: the fold is tried, and made
    run(memory, TURNS[2:3])
    assert not memory.fold_waits and memory.summary_count == 1


def test_the_transaction_copies_no_list_that_grows_with_the_conversation(monkeypatch):
    """A turn's cost stays flat: the archive and the fold events are cut back on a rollback, never copied."""
    memory = make("summary memory")
    run(memory, TURNS * 40)
    copied = []
    real = copy.deepcopy
    monkeypatch.setattr(copy, "deepcopy",
                        lambda value, *args: copied.append(value) or real(value, *args))
    with pytest.raises(RuntimeError), memory.transaction():
        run(memory, TURNS[:1])
        raise RuntimeError
    assert sum(len(value) for value in copied) <= 2 and len(memory.archive) == 2 * 5 * 40


def test_state_and_erasure_reach_no_private_field_of_a_memory():
    for module in ("state", "erasure"):
        text = (Path(__file__).parent.parent / "helpers" / "memory" / f"{module}.py").read_text()
        assert not re.findall(r"memory\._\w", text), module
