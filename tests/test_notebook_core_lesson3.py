"""Notebook 02's own code (its ``lesson-core`` cells: the summariser prompt, ``summarise_turns``, ``SummaryMemory``
and ``chat``) and the project's helpers do the same thing:

- the notebook's class and ``helpers.memory.summary.SummaryMemory`` build the same requests, archives and
  summariser calls for any conversation and valid settings, and the comparison fails when either copy's rule
  is changed (mutants below);
- ``summarise_turns`` sends the request ``helpers.model.summarisers`` sends, with the lesson's prompt;
- the six-turn run prints, offline, the lines the project's ``chat`` and ``turn_text`` print.
"""
import contextlib
import dataclasses
import io

import hypothesis
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.base.tokens import encoding
from helpers.display.lines import turn_text
from helpers.lessons.data import lesson3, prompt
from helpers.memory.summary import SummaryMemory as Hardened
from helpers.memory.types import SettingError
from helpers.model.chat import chat as project_chat
from helpers.model.connect import connect
from helpers.model.summarisers import make_summariser
from tests.notebook_core_support import core_cells, load_core, settings_outcome

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


def notebook_class(mutations=()):
    """The notebook's ``SummaryMemory`` and the namespace its methods look ``summarise_turns`` up in."""
    scope = load_core(NOTEBOOK, mutations=mutations)
    return scope["SummaryMemory"], scope


def assert_same_behaviour(notebook, hardened_class, conversation, setting):
    notebook_class_, scope = notebook
    threshold, keep = setting
    left, right = LoggingSummariser(), LoggingSummariser()
    scope["summarise_turns"] = left  # the notebook's class calls the summariser by its global name
    mine = notebook_class_(SYSTEM, max_turns_before_summary=threshold, turns_to_keep_verbatim=keep)
    theirs = hardened_class(SYSTEM, right, max_turns_before_summary=threshold, turns_to_keep_verbatim=keep)
    for question, reply in conversation:
        for role, content in (("user", question), ("assistant", reply)):
            mine.add_message(role, content)
            theirs.add_message(role, content)
            assert mine.get_messages_for_api() == theirs.get_messages_for_api(), f"request after a {role} message"
            assert mine.archive == theirs.archive
            assert mine.recent_turns == theirs.verbatim
            assert mine.current_summary == theirs.summary
    assert left.calls == right.calls


@pytest.fixture(scope="module")
def core():
    return notebook_class()


def test_the_notebook_class_is_the_lessons_short_class_with_the_lessons_names():
    source = core_cells(NOTEBOOK)[2]
    assert "\nclass SummaryMemory" in source
    for name in ("recent_turns", "current_summary", "archive", "def add_message", "def get_messages_for_api",
                 "summarise_turns(old, self.current_summary)"):
        assert name in source
    assert "client" not in source  # the model call is summarise_turns', not hidden in the class
    code = [line for line in source.splitlines() if line.strip() and not line.strip().startswith("#")]
    assert len(code) <= 30, "the notebook's class is meant to be read in one screen"


@CHECK
@given(conversation=conversations, setting=lesson_settings)
def test_notebook_and_hardened_classes_build_the_same_requests(core, conversation, setting):
    assert_same_behaviour(core, Hardened, conversation, setting)


def test_the_lessons_run_folds_where_the_lesson_says(core):
    """Six turns, summarise after 4 and keep 2: folds after turns 4 and 6, 7 then 9 messages sent, 12 archived."""
    memory_class, scope = core
    scope["summarise_turns"] = summarise = LoggingSummariser()
    memory = memory_class(SYSTEM, max_turns_before_summary=4, turns_to_keep_verbatim=2)
    sent = []
    for turn in range(1, 7):
        memory.add_message("user", f"question {turn}")
        sent.append(len(memory.get_messages_for_api()))
        memory.add_message("assistant", f"reply {turn}")
    assert sent == [2, 4, 6, 8, 7, 9]
    assert [len(messages) for messages, _ in summarise.calls] == [4, 4]
    assert len(memory.archive) == lesson3()["summary_run"]["published_archive_length"] == 12


def test_a_failed_summariser_call_leaves_the_notebook_memory_as_it_was(core):
    """The one place the notebook's class departs from the page's code, as the notebook says."""
    memory_class, scope = core

    def fails(turns, existing_summary=None):
        raise TimeoutError("no answer")

    scope["summarise_turns"] = fails
    memory = memory_class(SYSTEM, max_turns_before_summary=2, turns_to_keep_verbatim=1)
    for role, content in (("user", "q1"), ("assistant", "r1"), ("user", "q2")):
        memory.add_message(role, content)
    with pytest.raises(TimeoutError):
        memory.add_message("assistant", "r2")
    assert [m["content"] for m in memory.recent_turns] == ["q1", "r1", "q2", "r2"]


SETTINGS_TRIED = [(threshold, keep) for threshold in (-1, 0, 1, 2, 3, 4, 6, 2.5, True)
                  for keep in (-1, 0, 1, 2, 3, 4, 6, 1.5, False)]


@pytest.mark.parametrize("threshold, keep", SETTINGS_TRIED)
def test_the_notebook_class_refuses_the_settings_the_projects_refuses_with_one_line(core, threshold, keep):
    """Keeping 0 turns, or as many as the threshold, would fold nothing: both classes refuse it, in one line."""
    memory_class, _ = core
    outcomes = [settings_outcome(lambda: memory_class(SYSTEM, threshold, keep)),
                settings_outcome(lambda: Hardened(SYSTEM, LoggingSummariser(), max_turns_before_summary=threshold,
                                                  turns_to_keep_verbatim=keep))]
    assert outcomes[0] == outcomes[1], (threshold, keep, outcomes)
    valid = isinstance(threshold, int) and isinstance(keep, int) and not isinstance(keep, bool) \
        and not isinstance(threshold, bool) and 1 <= keep < threshold
    assert outcomes[0] == ("made" if valid else "refused")


def test_a_notebook_class_without_its_settings_check_is_caught():
    memory_class, _ = notebook_class(mutations=[("check_count(\"max_turns_before_summary\"", "print(\"max_turns_before_summary\"")])
    memory_class(SYSTEM, 2, 2)  # accepted: keep == threshold, which folds nothing, is what the check refuses
    with pytest.raises(SettingError):
        Hardened(SYSTEM, LoggingSummariser(), max_turns_before_summary=2, turns_to_keep_verbatim=2)


# ----- summarise_turns and chat against the project's summariser and chat -----------------------------

@pytest.fixture
def offline_notebook():
    """The notebook's core cells, with what its set-up cells define: the offline client, MODEL, the tokenizer."""
    access = connect("offline", quiet=True)
    scope = load_core(NOTEBOOK, namespace={"access": access, "client": access.client, "MODEL": access.model,
                                           "TOKENISER": encoding(), "FINCOACH_SYSTEM_PROMPT": prompt("fincoach_system")})
    scope.update(sent_requests=[], summariser_requests=[])
    return scope, access


def test_the_notebooks_summariser_prompt_is_the_lessons(offline_notebook):
    scope, _ = offline_notebook
    assert scope["FINCOACH_SUMMARY_PROMPT"] == prompt("summary_memory")


@pytest.mark.parametrize("existing", [None, "Chiru earns ₹1,20,000 a month."])
def test_summarise_turns_sends_what_the_projects_summariser_sends(offline_notebook, existing):
    scope, access = offline_notebook
    turns = [{"role": "user", "content": "I have an FD of ₹50,000 that matures in 3 months."},
             {"role": "assistant", "content": "Noted."}]
    project = make_summariser(access, "summary_memory")
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        summary = scope["summarise_turns"](turns, existing)
    assert scope["summariser_requests"] == [project.request(turns, existing)]
    assert summary == project(turns, existing)
    assert printed.getvalue().startswith(f"  [SUMMARISE] 2 messages (")


def test_the_six_turn_run_prints_what_the_projects_chat_prints(offline_notebook):
    scope, access = offline_notebook
    memory = scope["SummaryMemory"](prompt("fincoach_system"), max_turns_before_summary=4, turns_to_keep_verbatim=2)
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        replies = [scope["chat"](memory, text) for text in lesson3()["summary_run"]["user_turns"]]
    twin = Hardened(prompt("fincoach_system"), make_summariser(access, "summary_memory"), max_turns_before_summary=4,
                    turns_to_keep_verbatim=2)
    records = [project_chat(twin, text, access, watch="1,20,000", watch_label="salary") for text in lesson3()["summary_run"]["user_turns"]]
    assert printed.getvalue().splitlines() == [line for r in records for line in turn_text(r).splitlines()]
    assert replies == [r.reply for r in records]
    assert scope["sent_requests"] == [r.request for r in records]
    assert "From the summary" in replies[-1] and "1,20,000" in replies[-1]  # turn 6's salary, from the summary


# ----- the comparison can fail: changed copies of either class ---------------------------------------
NOTEBOOK_MUTANTS = {
    "trigger > instead of >=": (">= self.max_turns_before_summary", "> self.max_turns_before_summary"),
    "messages counted as turns": ("len(self.recent_turns) // 2 >=", "len(self.recent_turns) >="),
    "keeps one turn more": ("[:-2 * self.turns_to_keep_verbatim]", "[:-2 * (self.turns_to_keep_verbatim + 1)]"),
    "old summary not passed on": ("summarise_turns(old, self.current_summary)", "summarise_turns(old, None)"),
    "summary sent after the turns": ("return messages + self.recent_turns",
                                     "return [messages[0], *self.recent_turns, *messages[1:]]"),
    "another heading": ('"CONVERSATION SUMMARY (earlier turns):\\n"', '"SUMMARY:\\n"'),
}


@pytest.mark.parametrize("name", NOTEBOOK_MUTANTS)
def test_a_changed_notebook_class_fails_the_comparison(name):
    old, new = NOTEBOOK_MUTANTS[name]
    assert "\n\n".join(core_cells(NOTEBOOK)).count(old) == 1, f"the mutant {name!r} no longer applies"
    mutant = notebook_class(mutations=[(old, new)])

    @MUTANT
    @given(conversation=conversations, setting=lesson_settings)
    def comparison(conversation, setting):
        assert_same_behaviour(mutant, Hardened, conversation, setting)

    with pytest.raises(AssertionError):
        comparison()


class HardenedKeepsOneMore(Hardened):
    def __init__(self, system_prompt, summarise, max_turns_before_summary=4, turns_to_keep_verbatim=2, **kw):
        super().__init__(system_prompt, summarise, max_turns_before_summary=max_turns_before_summary + 1,
                         turns_to_keep_verbatim=turns_to_keep_verbatim, **kw)


class HardenedOtherHeading(Hardened):
    KIND = dataclasses.replace(Hardened.KIND, heading="Earlier turns:\n")


@pytest.mark.parametrize("mutant", [HardenedKeepsOneMore, HardenedOtherHeading])
def test_a_changed_hardened_class_fails_the_comparison(core, mutant):
    @MUTANT
    @given(conversation=conversations, setting=lesson_settings)
    def comparison(conversation, setting):
        assert_same_behaviour(core, mutant, conversation, setting)

    with pytest.raises(AssertionError):
        comparison()
