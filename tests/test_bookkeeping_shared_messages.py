"""What the bookkeeping shares stays the memory's: a request's messages are made once and shared by every request
that holds them, so they refuse changes, and the summariser is given copies it may change freely."""
from __future__ import annotations

import copy
import pickle

import pytest

from helpers.memory.defences import Defences
from helpers.memory.stubs import turn_range_stub
from helpers.memory.summary import SummaryMemory
from helpers.memory.summary_buffer import SummaryBufferMemory

MAKERS = {"summary memory": lambda summarise, defences: SummaryMemory("system", summarise, max_turns_before_summary=2, turns_to_keep_verbatim=1, defences=defences),
          "summary buffer memory": lambda summarise, defences: SummaryBufferMemory("system", summarise, max_buffer_tokens=60, messages_to_compress_on_overflow=2,
                                                                                   defences=defences)}
DEFENCES = {"lessons' design": None, "data placement": Defences(placement="data", pinned_rules=["Be brief."])}
CHANGES = {"setitem": lambda m: m.__setitem__("content", "changed"), "delitem": lambda m: m.__delitem__("role"),
           "update": lambda m: m.update(content="changed"), "pop": lambda m: m.pop("role"),
           "popitem": lambda m: m.popitem(), "clear": lambda m: m.clear(),
           "setdefault": lambda m: m.setdefault("name", "x"), "in-place or": lambda m: m.__ior__({"role": "x"}),
           "attribute": lambda m: setattr(m, "note", "x")}


def conversation(memory, turns: int = 8) -> None:
    for turn in range(1, turns + 1):
        memory.add_message("user", f"Question {turn}: " + "what next? " * turn)
        memory.add_message("assistant", f"Answer {turn}: " + "save more. " * turn)


@pytest.mark.parametrize("defences", DEFENCES.values(), ids=DEFENCES)
@pytest.mark.parametrize("kind", MAKERS)
def test_every_message_of_a_request_refuses_every_change_and_a_copy_is_free(kind, defences):
    memory = MAKERS[kind](turn_range_stub, defences)
    conversation(memory)
    request = memory.get_messages_for_api()
    assert memory.summary is not None and len(request) > 3  # the system prompt, the summary and verbatim turns
    for message in request:
        for name, change in CHANGES.items():
            with pytest.raises((TypeError, AttributeError)):
                change(message)
        assert copy.deepcopy(message) == pickle.loads(pickle.dumps(message)) == dict(message)
        mutable = dict(message)
        mutable["content"] = "changed"
    assert memory.get_messages_for_api() == request and "changed" not in str(request)


@pytest.mark.parametrize("kind", MAKERS)
def test_a_summariser_that_changes_what_it_is_given_changes_nothing_in_the_memory(kind):
    def meddling(messages, existing):
        summary = turn_range_stub(messages, existing)
        for message in messages:
            message["content"] = "changed"
        messages.clear()
        return summary

    meddled, plain = MAKERS[kind](meddling, None), MAKERS[kind](turn_range_stub, None)
    conversation(meddled)
    conversation(plain)
    assert meddled.summary_count == plain.summary_count >= 3
    assert meddled.archive == plain.archive and meddled.get_messages_for_api() == plain.get_messages_for_api()
    assert "changed" not in str(meddled.archive) + str(meddled.get_messages_for_api())
