"""Notebook 02's own ``SummaryMemory`` (its ``lesson-core`` cells) and ``helpers.memory.summary.SummaryMemory``
build the same requests, archives and summariser calls for any conversation and valid settings, and
the comparison fails when either copy's rule is changed (mutants below)."""
import dataclasses

import hypothesis
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.memory.summary import SummaryMemory as Hardened
from tests.notebook_core_support import core_cells, load_core

NOTEBOOK = "02_summary_memory_run.ipynb"
SYSTEM = "You are FinCoach."
CHECK = settings(max_examples=100, deadline=None, derandomize=True)
# A mutant must fail; finding one failing example is enough, so skip shrinking it (it only costs time).
MUTANT = settings(max_examples=200, deadline=None, derandomize=True, database=None, report_multiple_bugs=False,
                  phases=[hypothesis.Phase.generate], suppress_health_check=list(hypothesis.HealthCheck))

words = st.text(alphabet="abcdefghij ₹,0123456789", min_size=1, max_size=30).map(lambda t: t.strip() or "x")
conversations = st.lists(st.tuples(words, words), min_size=1, max_size=14)
lesson_settings = st.integers(min_value=1, max_value=6).flatmap(
    lambda keep: st.tuples(st.integers(min_value=keep + 1, max_value=keep + 6), st.just(keep)))


class LoggingSummariser:
    """A deterministic summariser that records what it was given: the same calls give the same text.

    Like the lesson's, it returns stripped, non-empty text (the hardened class also strips and refuses
    empty text: that is its failure policy, outside the lesson's rule)."""

    def __init__(self):
        self.calls = []

    def __call__(self, messages, existing_summary):
        self.calls.append(([dict(m) for m in messages], existing_summary))
        last = messages[-1]["content"][:12] if messages else "-"
        return f"summary #{len(self.calls)} of {len(messages)} messages, last: {last}".strip()


def assert_same_behaviour(notebook_class, hardened_class, conversation, setting):
    threshold, keep = setting
    left, right = LoggingSummariser(), LoggingSummariser()
    mine = notebook_class(SYSTEM, left, max_turns_before_summary=threshold, turns_to_keep_verbatim=keep)
    theirs = hardened_class(SYSTEM, right, max_turns_before_summary=threshold, turns_to_keep_verbatim=keep)
    for question, reply in conversation:
        for role, content in (("user", question), ("assistant", reply)):
            mine.add_message(role, content)
            theirs.add_message(role, content)
            assert mine.get_messages_for_api() == theirs.get_messages_for_api(), f"request after a {role} message"
            assert mine.archive == theirs.archive
            assert mine.verbatim == theirs.verbatim
            assert mine.summary == theirs.summary
    assert left.calls == right.calls


@pytest.fixture(scope="module")
def core():
    return load_core(NOTEBOOK)


def test_the_notebook_class_is_the_lessons_short_class(core):
    source = "\n\n".join(core_cells(NOTEBOOK))
    assert "class SummaryMemory" in source and "client" not in source  # no model access hidden in it
    code = [line for line in source.splitlines() if line.strip() and not line.strip().startswith("#")]
    assert len(code) <= 45, "the notebook's class is meant to be read in one screen"
    assert core["SummaryMemory"].summary_heading == Hardened.KIND.heading


@CHECK
@given(conversation=conversations, setting=lesson_settings)
def test_notebook_and_hardened_classes_build_the_same_requests(core, conversation, setting):
    assert_same_behaviour(core["SummaryMemory"], Hardened, conversation, setting)


def test_the_lessons_run_folds_where_the_lesson_says(core):
    """Six turns, summarise after 4 and keep 2: folds after turns 4 and 6, 7 then 9 messages sent."""
    summarise = LoggingSummariser()
    memory = core["SummaryMemory"](SYSTEM, summarise, max_turns_before_summary=4, turns_to_keep_verbatim=2)
    sent = []
    for turn in range(1, 7):
        memory.add_message("user", f"question {turn}")
        sent.append(len(memory.get_messages_for_api()))
        memory.add_message("assistant", f"reply {turn}")
    assert sent == [2, 4, 6, 8, 7, 9]
    assert [len(messages) for messages, _ in summarise.calls] == [4, 4]
    assert len(memory.archive) == 12


# ----- the comparison can fail: changed copies of either class ---------------------------------------
NOTEBOOK_MUTANTS = {
    "trigger > instead of >=": (">= self.max_turns_before_summary", "> self.max_turns_before_summary"),
    "keeps one turn too few": ("2 * self.turns_to_keep_verbatim", "2 * self.turns_to_keep_verbatim - 2"),
    "old summary not passed on": ("self.summarise(old, self.summary)", "self.summarise(old, None)"),
    "summary sent after the turns": ("return messages + self.verbatim", "return [messages[0], *self.verbatim, *messages[1:]]"),
    "another heading": ('"CONVERSATION SUMMARY (earlier turns):\\n"', '"SUMMARY:\\n"'),
}


@pytest.mark.parametrize("name", NOTEBOOK_MUTANTS)
def test_a_changed_notebook_class_fails_the_comparison(name):
    old, new = NOTEBOOK_MUTANTS[name]
    source = "\n\n".join(core_cells(NOTEBOOK))
    assert source.count(old) == 1, f"the mutant {name!r} no longer applies: update it to the notebook's code"
    mutant = load_core(NOTEBOOK, mutations=[(old, new)])["SummaryMemory"]

    @MUTANT
    @given(conversation=conversations, setting=lesson_settings)
    def comparison(conversation, setting):
        assert_same_behaviour(mutant, Hardened, conversation, setting)

    with pytest.raises(AssertionError):
        comparison()


class HardenedKeepsOneMore(Hardened):
    def __init__(self, system_prompt, summarise, max_turns_before_summary=4, turns_to_keep_verbatim=2, **kw):
        super().__init__(system_prompt, summarise, max_turns_before_summary + 1, turns_to_keep_verbatim, **kw)


class HardenedOtherHeading(Hardened):
    KIND = dataclasses.replace(Hardened.KIND, heading="Earlier turns:\n")


@pytest.mark.parametrize("mutant", [HardenedKeepsOneMore, HardenedOtherHeading])
def test_a_changed_hardened_class_fails_the_comparison(core, mutant):
    @MUTANT
    @given(conversation=conversations, setting=lesson_settings)
    def comparison(conversation, setting):
        assert_same_behaviour(core["SummaryMemory"], mutant, conversation, setting)

    with pytest.raises(AssertionError):
        comparison()
