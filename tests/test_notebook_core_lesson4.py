"""Notebook 05's own ``SummaryBufferMemory`` (the cells tagged ``lesson-core``, the class a student reads)
and the hardened class in ``helpers.memory.summary_buffer`` build the same requests and archives, fold the
same messages with the same summariser, for any conversation and settings (hypothesis).

The same check run on copies with a changed rule (in the notebook's source, or in the hardened class)
must fail: that is what keeps the two from drifting apart.
"""
from __future__ import annotations

import contextlib
import io

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from helpers.base.tokens import count_tokens, filler_text
from helpers.lessons.data import lesson4, prompt
from helpers.memory.summary_buffer import SummaryBufferMemory
from helpers.model.summarisers import build_summariser_request, request_templates

from .notebook_core_support import load_core

NOTEBOOK = "05_summary_buffer_run.ipynb"
NAMESPACE = {"lesson4": lesson4, "SUMMARY_PROMPT": prompt("summary_buffer")}
WORDS = ("salary", "₹1,20,000", "FD", "risk-averse", "PPF", "NPS", "corpus", "retire", "SIP", "ok", "the", "x")


def texts(min_size: int = 1) -> st.SearchStrategy[list[str]]:
    """Short messages (a few tokens) and long ones (up to about 300), numbered so no two are the same."""
    short = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8)
    long = st.lists(st.sampled_from(WORDS), min_size=30, max_size=150)
    return st.lists(st.one_of(short, long).map(" ".join), min_size=min_size, max_size=22).map(
        lambda items: [f"m{i}: {t}" for i, t in enumerate(items)])


@st.composite
def conversations(draw) -> tuple[list[str], int, int]:
    """A conversation, a budget and a compress setting. A third of the budgets equal the size of the first
    k messages, so a message that fits the budget exactly (the edge of the trigger) comes up often; a third
    are small, so long messages need more than one turn folded."""
    messages = draw(texts())
    compress = draw(st.sampled_from([2, 4, 6, 8]))
    kind = draw(st.sampled_from(["prefix", "small", "any"]))
    if kind == "prefix":
        k = draw(st.integers(1, len(messages)))
        budget = sum(count_tokens(m) for m in messages[:k])
    else:
        budget = draw(st.integers(1, 300 if kind == "small" else 1200))
    return messages, budget, compress


class Summariser:
    """A deterministic summariser that remembers its calls: one line per folded message, after the old summary.

    Its text comes back stripped, as every summariser of the notebook does (``.strip()``); the hardened
    class also strips what it gets, a policy the notebook's class leaves to the summariser.
    """

    def __init__(self) -> None:
        self.calls: list[tuple[list[dict[str, str]], str | None]] = []

    def __call__(self, messages, existing_summary=None) -> str:
        self.calls.append(([dict(m) for m in messages], existing_summary))
        lines = [existing_summary or "summary:"] + [f"{m['role']} said {m['content'][:12]}" for m in messages]
        return "\n".join(lines).strip()


def run_both(notebook_class, hardened_class, messages: list[str], budget: int, compress: int) -> None:
    """Feed the same messages to both classes; after every message the memories must agree."""
    ours, theirs = Summariser(), Summariser()
    notebook = notebook_class("You are FinCoach.", ours, max_buffer_tokens=budget,
                              messages_to_compress_on_overflow=compress)
    hardened = hardened_class("You are FinCoach.", theirs, max_buffer_tokens=budget,
                              messages_to_compress_on_overflow=compress)
    for index, content in enumerate(messages):
        role = ("user", "assistant")[index % 2]
        with contextlib.redirect_stdout(io.StringIO()):  # the notebook's class prints its [COMPRESS] lines
            notebook.add_message(role, content)
        hardened.add_message(role, content)
        where = f"after message {index + 1} (budget {budget}, compress {compress})"
        assert notebook.get_messages_for_api() == hardened.get_messages_for_api(), f"requests differ {where}"
        assert notebook.archive == hardened.archive, f"archives differ {where}"
        assert notebook.buffer == hardened.buffer, f"buffers differ {where}"
        assert notebook.summary == hardened.summary, f"summaries differ {where}"
        assert notebook.buffer_tokens == hardened.buffer_tokens, f"buffer tokens differ {where}"
        assert notebook.overflow_count == hardened.overflow_count, f"overflow counts differ {where}"
        assert ours.calls == theirs.calls, f"the summariser was called differently {where}"


# Enough examples to meet every branch; derandomized so that the suite gives the same verdict every run.
EQUIVALENCE = settings(max_examples=250, deadline=None, derandomize=True, database=None,
                       suppress_health_check=[HealthCheck.too_slow])
# For the mutants: stop at the first counterexample (no shrinking), same seed.
MUTANT = settings(max_examples=250, deadline=None, derandomize=True, database=None,
                  phases=[Phase.explicit, Phase.generate], suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def core() -> dict:
    return load_core(NOTEBOOK, NAMESPACE)


def test_the_notebook_class_takes_the_hardened_class_arguments(core):
    notebook = core["SummaryBufferMemory"]("You are FinCoach.", Summariser())
    hardened = SummaryBufferMemory("You are FinCoach.", Summariser())
    assert (notebook.max_buffer_tokens, notebook.messages_to_compress_on_overflow) == (
        hardened.max_buffer_tokens, hardened.messages_to_compress_on_overflow) == (600, 4)  # the lesson's defaults


@EQUIVALENCE
@given(case=conversations())
def test_notebook_class_and_hardened_class_build_the_same_requests(core, case):
    run_both(core["SummaryBufferMemory"], SummaryBufferMemory, *case)


def test_the_lessons_run_gives_the_lessons_fold_pattern(core):
    """With the lesson's budget, a reply that would pass it folds the two oldest turns (its first fold)."""
    turns = lesson4()["buffer_run"]["user_turns"]
    long_reply = "x" + " x" * 239  # 240 tokens, about the lesson's replies
    conversation = [text for turn in turns[:3] for text in (turn, long_reply)]
    run_both(core["SummaryBufferMemory"], SummaryBufferMemory, conversation, 600, 4)


@settings(max_examples=100, deadline=None, derandomize=True, database=None)
@given(messages=texts(min_size=0), existing=st.one_of(st.none(), st.text(min_size=1, max_size=60)))
def test_the_notebooks_summariser_request_is_the_helpers(core, messages, existing):
    folded = [{"role": ("user", "assistant")[i % 2], "content": m} for i, m in enumerate(messages)]
    if not folded:
        return  # nothing to fold: the helpers' condense request is not part of the notebook's class
    expected = build_summariser_request(folded, existing, system_prompt=prompt("summary_buffer"),
                                        templates=request_templates("lesson4"))
    assert core["summariser_request"](folded, existing) == expected


# ----- the check can fail: changed copies are caught ---------------------------------------------

MUTATIONS = {
    "the trigger fires when the message fits exactly": (
        "if self.buffer_tokens + incoming_tokens <= self.max_buffer_tokens:",
        "if self.buffer_tokens + incoming_tokens < self.max_buffer_tokens:"),
    "no extra turn folded when the message still does not fit": (
        "while n < whole_turns and rest", "while False and rest"),
    "a question may be folded without its reply": (
        "whole_turns = len(self.buffer) // 2 * 2", "whole_turns = len(self.buffer) // 2 * 2 + 1"),
    "the summary is sent without its heading": (
        'request.append({"role": "system", "content": HEADING + self.summary})',
        'request.append({"role": "system", "content": self.summary})'),
    "the overflow folds one turn fewer": (
        "n = min(self.messages_to_compress_on_overflow, whole_turns)",
        "n = min(self.messages_to_compress_on_overflow - 2, whole_turns)"),
}


@pytest.mark.parametrize("change", MUTATIONS)
def test_a_changed_rule_in_the_notebook_is_caught(change):
    mutant = load_core(NOTEBOOK, NAMESPACE, [MUTATIONS[change]])["SummaryBufferMemory"]

    @MUTANT
    @given(case=conversations())
    def check(case):
        run_both(mutant, SummaryBufferMemory, *case)

    with pytest.raises(Exception):  # an AssertionError, or the mutant crashing, is a counterexample
        check()


class HardenedWithoutExtraTurns(SummaryBufferMemory):
    """The hardened class with its rule changed: an overflow folds exactly the configured messages."""

    def messages_to_fold(self, incoming_tokens: int) -> int:
        if self.buffer_tokens + incoming_tokens <= self.max_buffer_tokens:
            return 0
        return min(self.messages_to_compress_on_overflow, len(self.buffer) // 2 * 2)


def test_a_changed_rule_in_the_hardened_class_is_caught(core):
    @MUTANT
    @given(case=conversations())
    def check(case):
        run_both(core["SummaryBufferMemory"], HardenedWithoutExtraTurns, *case)

    with pytest.raises(AssertionError):
        check()


def test_a_message_that_still_does_not_fit_folds_another_turn_in_the_same_overflow(core):
    """Two turns of 45 + 45 tokens in a 200-token buffer, then a 150-token question: folding one turn leaves
    240 tokens, so the second turn goes too, in the same single summariser call."""
    conversation = [filler_text(45)] * 4 + [filler_text(150)]
    run_both(core["SummaryBufferMemory"], SummaryBufferMemory, conversation, 200, 2)
    summarise = Summariser()
    memory = core["SummaryBufferMemory"]("s", summarise, max_buffer_tokens=200, messages_to_compress_on_overflow=2)
    with contextlib.redirect_stdout(io.StringIO()):
        for index, content in enumerate(conversation):
            memory.add_message(("user", "assistant")[index % 2], content)
    assert memory.overflow_count == 1 and len(summarise.calls) == 1 and len(summarise.calls[0][0]) == 4
    assert memory.buffer_tokens == 150
