"""A memory's state is one value: a failed or interrupted turn, fold, defences change or erasure inside
``transaction()`` leaves a memory equal to the one before (a kind's own fields, changed in place, included),
and that memory saves and loads."""
from __future__ import annotations

import dataclasses

import pytest

import helpers.memory.rolling as rolling
import helpers.memory.summarising as summarising
from helpers.memory.defences import Defences
from helpers.memory.erasure import forget
from helpers.memory.registry import KINDS
from helpers.memory.state import load, save, to_dict
from helpers.memory.summary import SummaryMemory
from helpers.memory.types import SummariserError

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


class Interrupt:
    """``count_tokens`` (as the memory modules call it) raising ``KeyboardInterrupt`` at its ``at``-th call."""

    def __init__(self, monkeypatch, at: int) -> None:
        self.at, self.calls, self.raised = at, 0, False
        real = rolling.count_tokens

        def counting(text: str) -> int:
            self.calls += 1
            if self.calls == self.at:
                self.raised = True
                raise KeyboardInterrupt(f"interrupted at count {self.at}")
            return real(text)

        for module in (rolling, summarising):
            monkeypatch.setattr(module, "count_tokens", counting)


OPERATIONS = {
    "a question": lambda memory: memory.add_message("user", "Asha wants an SIP of Rs 10,000."),
    "a turn that folds": lambda memory: (memory.add_message("user", "Asha wants an SIP of Rs 10,000. " * 3),
                                         memory.add_message("assistant", "An SIP suits her. " * 3)),
    "a change of defences": lambda memory: setattr(memory, "defences", Defences(
        placement="data", pinned_rules=["Never recommend crypto."], summary_check="report")),
    "an erasure": lambda memory: forget(memory, "Rs 25,000", progress=None),
}


@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize("kind", ["summary memory", "summary buffer memory", "sliding window"])
def test_an_interrupt_at_any_count_leaves_the_memory_as_before_and_it_loads(kind, operation, monkeypatch, tmp_path):
    tried = 0
    for at in range(1, 200):
        memory = make(kind, Defences(summary_check="report"))
        run(memory)
        before = observable(memory)
        with monkeypatch.context() as patch:
            interrupt = Interrupt(patch, at)
            try:
                with memory.transaction():
                    OPERATIONS[operation](memory)
            except KeyboardInterrupt:
                pass
        if not interrupt.raised:
            break
        tried += 1
        assert observable(memory) == before, f"interrupted at count {at}"
        loaded = load(save(memory, tmp_path / "state.json"), summarise, defences=memory.defences)
        assert observable(loaded) == before
        run(memory, TURNS[:1])  # and it goes on
    assert tried > 0 or operation == "an erasure" and kind == "sliding window"


@pytest.mark.parametrize("kind", ["summary memory", "summary buffer memory"])
def test_an_interrupt_from_the_summariser_leaves_the_memory_as_before(kind, tmp_path):
    calls = []

    def interrupted(messages, existing):
        calls.append(len(messages))
        raise KeyboardInterrupt("the stop button")

    memory = make(kind)
    run(memory, TURNS[:1])
    before = observable(memory)
    memory.summarise = interrupted
    with pytest.raises(KeyboardInterrupt), memory.transaction():
        run(memory, TURNS[1:])
    assert calls and observable(memory) == before and memory.summarise is interrupted
    memory.summarise = summarise
    assert observable(load(save(memory, tmp_path / "state.json"), summarise)) == before


def test_a_fold_that_failed_for_good_is_remembered_after_the_rollback():
    class TooLong(Exception):
        retry_can_help = False

    def refusing(messages, existing):
        raise TooLong("the request is too long for the server's context")

    memory = SummaryMemory(SYSTEM, refusing, max_turns_before_summary=2, turns_to_keep_verbatim=1)
    memory.add_message("user", "one")
    memory.add_message("assistant", "reply one")
    with pytest.raises(SummariserError), memory.transaction():
        memory.add_message("user", "two")
        memory.add_message("assistant", "reply two")
    assert len(memory.archive) == 2 and memory.fold_waits


def test_state_and_erasure_reach_no_private_field_of_a_memory():
    """``state.py`` and ``erasure.py`` work through the memory's public API only."""
    import re
    from pathlib import Path

    for module in ("state", "erasure"):
        text = Path(rolling.__file__).with_name(f"{module}.py").read_text()
        assert not re.findall(r"memory\._\w", text), module
