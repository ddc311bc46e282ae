"""Erasure at any length: ``forget()`` on a conversation whose folded turns do not fit in one summariser
request, with a summariser that refuses any request over a token limit the memory's own folds never reach.
The summary is remade fold by fold, all or nothing (a failure or an interrupt at any call erases nothing, or
everything), and the text is then in no summary, archive, request or saved file."""
from __future__ import annotations

import json

import pytest

from helpers.base.tokens import count_tokens
from helpers.lessons.data import prompt
from helpers.memory.defences import Defences
from helpers.memory.erasure import MESSAGE_FRAME_TOKENS, forget, largest_request
from helpers.memory.registry import KINDS
from helpers.memory.state import from_dict, load, save, to_dict
from helpers.memory.types import SummariserError
from helpers.model.connect import connect
from helpers.model.summarisers import summariser_for
from tests.support.interrupts import InterruptAtCall

SYSTEM = prompt("fincoach_system")
SALARY = "1,20,000"
LIMIT = 1000  # tokens a summariser request may hold (the summariser's context, in this test)
SUMMARISING = [name for name, cls in KINDS.items() if cls.KIND.heading is not None]
DEFENCES = {"lessons' design": None,
            "every defence": Defences(placement="data", pinned_rules=["Never recommend crypto."],
                                      summary_check="refuse", redact=True)}


class ContextTooLong(RuntimeError):
    """What a server answers to a request longer than its context (a retry cannot help)."""

    retry_can_help = False


class LimitedSummariser:
    """The offline stand-in's summariser for a memory kind, refusing any request over ``LIMIT`` tokens;
    it notes the size of every request it was asked, and can be told to fail from its ``fail_at``-th call."""

    def __init__(self, kind: str) -> None:
        self.model = summariser_for(connect("offline", quiet=True, load_env=False), kind)
        self.sizes: list[int] = []
        self.fail_at: int | None = None

    def size(self, messages, existing) -> int:
        return sum(count_tokens(m["content"]) for m in self.model.request(messages, existing))

    def __call__(self, messages, existing):
        self.sizes.append(self.size(messages, existing))
        if self.sizes[-1] > LIMIT:
            raise ContextTooLong(f"this request holds {self.sizes[-1]} tokens; the context holds {LIMIT}")
        if self.fail_at is not None and len(self.sizes) >= self.fail_at:
            raise ConnectionError("network down")
        return self.model(messages, existing)


def conversation(turns: int) -> list[tuple[str, str]]:
    out = [(f"My take-home pay is Rs {SALARY} a month.", f"Noted: Rs {SALARY} a month.")]
    return out + [(f"In month {n} I spent Rs {20000 + 37 * n:,} on rent and food.",
                   f"Month {n}: Rs {20000 + 37 * n:,} noted; keep saving.") for n in range(1, turns)]


def long_memory(kind: str, defences, turns: int = 80):
    summarise = LimitedSummariser(kind)
    cls = KINDS[kind]
    memory = cls.create(SYSTEM, summarise, {**cls.KIND.attack_settings, "max_summary_tokens": 200}, defences)
    for question, reply in conversation(turns):
        memory.add_message("user", question)
        memory.add_message("assistant", reply)
    return memory, summarise


@pytest.mark.parametrize("defences_name", DEFENCES)
@pytest.mark.parametrize("kind", SUMMARISING)
def test_forget_succeeds_on_a_conversation_too_long_for_one_summariser_request(kind, defences_name, tmp_path):
    memory, summarise = long_memory(kind, DEFENCES[defences_name])
    assert SALARY in memory.summary
    own_folds = max(summarise.sizes)
    folded = memory.archive[:2 * memory.turns_folded]
    one_request = summarise.size([m for m in folded if SALARY not in m["content"]], None)
    assert own_folds <= LIMIT < one_request  # the memory never reached the limit; one remake request would
    summarise.sizes.clear()

    report = forget(memory, SALARY)

    assert report.turns_removed == (1,) and report.messages_removed == 2 and report.summary_remade
    assert report.summariser_calls == len(memory.fold_events) > 1 and max(summarise.sizes) <= LIMIT
    path = save(memory, tmp_path / "state.json")
    saved = path.read_text(encoding="utf-8")
    assert SALARY not in json.dumps([memory.summary, memory.archive, memory.get_messages_for_api()]) + saved
    loaded = load(path, summarise, defences=memory.defences)
    assert loaded.get_messages_for_api() == memory.get_messages_for_api() and to_dict(loaded) == to_dict(memory)
    loaded.add_message("user", "What next?")  # and it goes on
    loaded.add_message("assistant", "Keep saving.")


@pytest.mark.parametrize("kind", SUMMARISING)
def test_a_long_remake_that_fails_midway_erases_nothing(kind, tmp_path):
    memory, summarise = long_memory(kind, None)
    before = to_dict(memory)
    saved = save(memory, tmp_path / "state.json").read_bytes()
    summarise.fail_at = len(summarise.sizes) + 2  # a piece remade, then down
    with pytest.raises(SummariserError) as failed:
        forget(memory, SALARY)
    assert failed.value.problem == "raised"
    assert to_dict(memory) == before and SALARY in memory.summary
    assert save(memory, tmp_path / "state.json").read_bytes() == saved


def stub(messages, existing):
    """Keeps the first twelve words of everything it is given (bounded, and the salary stays in)."""
    return " ".join(" ".join(filter(None, [existing, *(m["content"] for m in messages)])).split()[:12])


@pytest.mark.parametrize("defences_name", DEFENCES)
@pytest.mark.parametrize("kind", SUMMARISING)
def test_an_interrupt_at_any_call_of_forget_erases_all_or_nothing(kind, defences_name, tmp_path):
    defences = DEFENCES[defences_name]
    cls = KINDS[kind]

    def made():
        memory = cls.create(SYSTEM, stub, {**cls.KIND.attack_settings, "max_buffer_tokens": 60}
                            if "max_buffer_tokens" in cls.KIND.attack_settings else dict(cls.KIND.attack_settings),
                            defences)
        for question, reply in conversation(8):
            memory.add_message("user", question)
            memory.add_message("assistant", reply)
        return memory
    forget(made(), SALARY)  # once first, so that the check's compiled patterns are cached as in the runs
    erased = made()
    forget(erased, SALARY)
    at, tried = 0, 0
    while True:
        at += 1
        memory = made()
        before = to_dict(memory)
        interrupt = InterruptAtCall(at, (stub,))
        try:
            with interrupt:
                forget(memory, SALARY)
        except KeyboardInterrupt:
            pass
        if not interrupt.raised:
            break
        tried += 1
        now = to_dict(memory)
        where = f"interrupted at call {at} of forget()"
        assert now in (before, to_dict(erased)), where  # nothing erased, or all of it
        assert to_dict(from_dict(now, stub, defences=memory.defences)) == now, where
        assert to_dict(load(save(memory, tmp_path / "state.json"), stub, defences=memory.defences)) == now, where
        assert memory.get_messages_for_api() == from_dict(now, stub, defences=memory.defences).get_messages_for_api(), where
    assert tried > 20


# ----- erasure that scales: many turns a call, progress shown, resumable (issue 25 item 7) ----------

class CountingStub:
    """``stub`` that notes each request's size as ``forget`` bounds it, and can raise an interrupt at a call."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.interrupt_at: int | None = None

    def __call__(self, messages, existing):
        self.sizes.append(sum(count_tokens(m["content"]) + MESSAGE_FRAME_TOKENS for m in messages)
                          + (count_tokens(existing) if existing else 0))
        if self.interrupt_at is not None and len(self.sizes) == self.interrupt_at:
            raise KeyboardInterrupt("the stop button")
        return stub(messages, existing)


def ten_thousand_turns():
    summarise = CountingStub()
    memory = KINDS["summary memory"].create(SYSTEM, summarise, dict(KINDS["summary memory"].KIND.attack_settings))
    for question, reply in conversation(10_000):
        memory.add_message("user", question)
        memory.add_message("assistant", reply)
    summarise.sizes.clear()
    return memory, summarise


CONTEXT = 4000  # the summariser's context, as the caller states it


def test_forget_on_10000_turns_makes_a_tenth_of_the_calls_with_progress_shown():
    memory, summarise = ten_thousand_turns()
    fold_by_fold = len(memory.fold_events)  # what a remake fold by fold calls: one call a fold
    assert fold_by_fold > 4000
    lines = []
    report = forget(memory, SALARY, max_request_tokens=CONTEXT, progress=lines.append)
    assert report.summary_remade and len(summarise.sizes) == report.summariser_calls <= fold_by_fold // 10
    assert max(summarise.sizes) <= CONTEXT  # the stated bound on every request
    assert 5 <= len(lines) <= 12 and "100%" in lines[-1] and all("forget: summary remade up to turn" in ln for ln in lines)
    assert SALARY not in json.dumps([memory.summary, memory.archive, to_dict(memory)])


def test_forget_by_default_makes_no_request_larger_than_the_memorys_own_folds():
    memory, summarise = long_memory("summary memory", None)
    own = largest_request(memory)
    summarise.sizes.clear()
    stub_sizes = CountingStub()
    memory.summarise = stub_sizes
    report = forget(memory, SALARY, progress=None)
    assert report.summary_remade and max(stub_sizes.sizes) <= own


def test_an_interrupted_forget_resumes_and_ends_with_the_fact_gone_everywhere(tmp_path):
    memory, summarise = ten_thousand_turns()
    path = save(memory, tmp_path / "state.json")
    before = to_dict(memory)
    summarise.interrupt_at = 20
    with pytest.raises(KeyboardInterrupt):
        forget(memory, SALARY, max_request_tokens=CONTEXT, progress=None)
    assert to_dict(memory) == before and SALARY in memory.summary  # nothing erased, nothing half erased
    assert SALARY in path.read_text(encoding="utf-8")
    summarise.interrupt_at, made = None, len(summarise.sizes)
    report = forget(memory, SALARY, max_request_tokens=CONTEXT, progress=None)
    assert report.calls_before_resume == made - 1  # the interrupted call is made again, the others are not
    assert len(summarise.sizes) - made == report.summariser_calls - report.calls_before_resume
    assert "before the interruption" in report.describe()
    save(memory, path)
    loaded = load(path, summarise)
    for where in (memory.summary, memory.archive, path.read_text(encoding="utf-8"), loaded.get_messages_for_api()):
        assert SALARY not in json.dumps(where)


def test_a_changed_memory_does_not_resume_an_older_remake():
    memory, summarise = ten_thousand_turns()
    summarise.interrupt_at = 5
    with pytest.raises(KeyboardInterrupt):
        forget(memory, SALARY, max_request_tokens=CONTEXT, progress=None)
    summarise.interrupt_at = None
    memory.add_message("user", "One more question.")
    report = forget(memory, SALARY, max_request_tokens=CONTEXT, progress=None)
    assert report.calls_before_resume == 0 and report.summary_remade
