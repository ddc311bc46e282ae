"""The code the notebooks teach (cells tagged ``lesson-core``, as the lesson pages write it) does what the project's
classes do: for any conversation and valid settings the same requests, archives, summaries and summariser calls,
and the comparison fails when either side's rule is changed. Where the page's rule and the project's part (lesson
4's extra turns; a failed summariser), the difference is the one the notebooks state."""
from __future__ import annotations

import contextlib
import io
import re
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from helpers.base.tokens import count_tokens, encoding, filler_text
from helpers.display.lines import schedule_text, turn_text
from helpers.lessons.data import lesson3, lesson4, prompt, summariser_templates
from helpers.memory.budget import analyse_budget
from helpers.memory.schedule import summary_schedule
from helpers.memory.summary import SummaryMemory as ProjectSummary
from helpers.memory.summary_buffer import SummaryBufferMemory as ProjectBuffer
from helpers.model.chat import chat as project_chat
from helpers.model.connect import connect
from helpers.model.summarisers import make_summariser
from tests.notebook_core_support import core_cells, load_core

CHECK = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                 suppress_health_check=list(HealthCheck))
MUTANT = settings(CHECK, max_examples=150, phases=[Phase.explicit, Phase.generate])  # stop at the first failure
OFFLINE = connect("offline", quiet=True, load_env=False)
WORDS = ("salary", "₹1,20,000", "FD", "risk-averse", "PPF", "NPS", "ok", "the", "x")
texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=60).map(" ".join)
conversations = st.lists(texts, min_size=1, max_size=16).map(lambda items: [f"m{i}: {t}" for i, t in enumerate(items)])


class Summariser:
    """Deterministic, and keeps its calls: the same calls give the same summaries."""

    def __init__(self):
        self.calls = []

    def __call__(self, messages, existing_summary=None):
        self.calls.append(([dict(m) for m in messages], existing_summary))
        return (f"summary {len(self.calls)}: " + "; ".join(m["content"][:10] for m in messages)).strip()


def recording_client():
    """A stand-in for ``client`` that keeps every create() call's arguments."""
    calls = []

    def create(**arguments):
        calls.append(arguments)
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=" a summary \n"))])

    return SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=create))), calls


def expected_request(lesson, system, messages, existing):
    """The lesson's summariser request, from the templates in data/ (its prompt, its user message)."""
    templates = summariser_templates(lesson)
    turns = "\n".join(templates["line"].format(ROLE=m["role"].upper(), content=m["content"]) for m in messages)
    user = (templates["update"].format(summary=existing, turns=turns) if existing
            else templates["first"].format(turns=turns))
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


# ----- 01: schedule() ------------------------------------------------------------------------------
def notebook_schedule(setting, mutations=()):
    with contextlib.redirect_stdout(io.StringIO()) as out:
        calls = load_core("01_summary_schedule.ipynb", mutations=mutations)["schedule"](*setting)
    return out.getvalue().splitlines(), calls


@given(setting=st.integers(1, 6).flatmap(lambda keep: st.tuples(st.integers(1, 16), st.integers(keep + 1, keep + 8),
                                                                 st.just(keep))))
@CHECK
def test_the_pages_schedule_prints_what_the_memory_class_does(setting):
    schedule = summary_schedule(*setting)
    assert notebook_schedule(setting) == (schedule_text(schedule).splitlines()[:-1], schedule.calls)


def test_the_schedule_refuses_to_keep_as_many_turns_as_its_threshold_and_a_changed_one_is_caught():
    with pytest.raises(AssertionError) as stopped:
        notebook_schedule((10, 4, 6))
    assert "keep fewer turns than the threshold" in str(stopped.value)  # what to change, said
    for mutant in [(">= max_turns_before_summary", "> max_turns_before_summary"), ("recent[cut:]", "recent[cut - 1:]")]:
        assert notebook_schedule((10, 4, 3), [mutant])[0] != schedule_text(summary_schedule(10, 4, 3)).splitlines()[:-1]


# ----- 02: SummaryMemory, summarise_turns, chat ------------------------------------------------------
def compare_summary(core, project_class, conversation, threshold, keep):
    left, right = Summariser(), Summariser()
    core["summarise_turns"] = left  # the page's class calls the summariser by its global name
    page = core["SummaryMemory"]("s", max_turns_before_summary=threshold, turns_to_keep_verbatim=keep)
    project = project_class("s", right, max_turns_before_summary=threshold, turns_to_keep_verbatim=keep)
    for index, content in enumerate(conversation):
        role = ("user", "assistant")[index % 2]
        page.add_message(role, content)
        project.add_message(role, content)
        assert page.get_messages_for_api() == project.get_messages_for_api(), f"after message {index + 1}"
        assert (page.archive, page.recent_turns, page.current_summary) == (project.archive, project.verbatim,
                                                                           project.summary)
    assert left.calls == right.calls


SUMMARY_SETTINGS = st.integers(1, 4).flatmap(lambda keep: st.tuples(st.integers(keep + 1, keep + 4), st.just(keep)))


@given(conversation=conversations, setting=SUMMARY_SETTINGS)
@CHECK
def test_the_pages_summary_memory_builds_the_projects_requests(conversation, setting):
    compare_summary(load_core("02_summary_memory_run.ipynb"), ProjectSummary, conversation, *setting)


@pytest.mark.parametrize("old, new", [
    (">= self.max_turns_before_summary", "> self.max_turns_before_summary"),
    ("keep = self.turns_to_keep_verbatim * 2", "keep = self.turns_to_keep_verbatim * 2 + 2"),
    ("summarise_turns(old, self.current_summary)", "summarise_turns(old, None)"),
    ('"CONVERSATION SUMMARY (earlier turns):\\n"', '"SUMMARY:\\n"')])
def test_a_changed_summary_memory_fails_the_comparison(old, new):
    mutant = load_core("02_summary_memory_run.ipynb", mutations=[(old, new)])

    @given(conversation=conversations, setting=SUMMARY_SETTINGS)
    @MUTANT
    def compare(conversation, setting):
        compare_summary(mutant, ProjectSummary, conversation, *setting)

    with pytest.raises(AssertionError):
        compare()


def test_the_pages_class_loses_the_folded_turns_from_its_request_when_the_summariser_fails_and_the_projects_keeps_them():
    def fails(turns, existing_summary=None):
        raise TimeoutError("no answer")

    core = load_core("02_summary_memory_run.ipynb")
    core["summarise_turns"] = fails
    page = core["SummaryMemory"]("s", max_turns_before_summary=2, turns_to_keep_verbatim=1)
    project = ProjectSummary("s", fails, max_turns_before_summary=2, turns_to_keep_verbatim=1)
    for role, content in (("user", "q1"), ("assistant", "r1"), ("user", "q2")):
        page.add_message(role, content)
        project.add_message(role, content)
    with pytest.raises(TimeoutError):
        page.add_message("assistant", "r2")
    with pytest.raises(Exception):
        project.add_message("assistant", "r2")
    assert [m["content"] for m in page.recent_turns] == ["q2", "r2"] and len(page.archive) == 4
    assert [m["content"] for m in project.get_messages_for_api()[1:]] == ["q1", "r1", "q2", "r2"]


@pytest.mark.parametrize("notebook, function, lesson, prompt_name", [
    ("02_summary_memory_run.ipynb", "summarise_turns", "lesson3", "summary_memory"),
    ("05_summary_buffer_run.ipynb", "summarise_messages", "lesson4", "summary_buffer")])
@pytest.mark.parametrize("existing", [None, "Chiru earns ₹1,20,000 a month."])
def test_the_summariser_makes_the_pages_call(notebook, function, lesson, prompt_name, existing):
    client, calls = recording_client()
    core = load_core(notebook, {"client": client, "MODEL": "openai/gpt-oss-120b", "TOKENISER": encoding(),
                                "encoding": encoding, "prompt": prompt})
    assert core["FINCOACH_SUMMARY_PROMPT"] == prompt(prompt_name)
    messages = [{"role": "user", "content": "I have an FD of ₹50,000."}, {"role": "assistant", "content": "Noted."}]
    with contextlib.redirect_stdout(io.StringIO()):
        assert core[function](messages, existing) == "a summary"
    assert calls == [{"model": "openai/gpt-oss-120b", "max_tokens": 1000, "temperature": 0, "reasoning_effort": "low",
                      "messages": expected_request(lesson, prompt(prompt_name), messages, existing)}]


def test_the_six_turn_run_prints_what_the_projects_chat_prints():
    core = load_core("02_summary_memory_run.ipynb", {"client": OFFLINE.client, "MODEL": OFFLINE.model,
                                                     "TOKENISER": encoding()})
    turns = lesson3()["summary_run"]["user_turns"]
    page = core["SummaryMemory"](prompt("fincoach_system"), max_turns_before_summary=4, turns_to_keep_verbatim=2)
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        replies = [core["chat"](page, text) for text in turns]
    twin = ProjectSummary(prompt("fincoach_system"), make_summariser(OFFLINE, "summary_memory"),
                          max_turns_before_summary=4, turns_to_keep_verbatim=2)
    with contextlib.redirect_stdout(io.StringIO()):
        records = [project_chat(twin, text, OFFLINE, watch="1,20,000", watch_label="salary") for text in turns]
    assert printed.getvalue().splitlines() == [line for r in records for line in turn_text(r).splitlines()]
    assert replies == [r.reply for r in records] and len(page.archive) == 12


# ----- 05: SummaryBufferMemory -----------------------------------------------------------------------
@st.composite
def buffer_cases(draw):
    """A conversation, a budget (a third of them the exact size of the first k messages) and a compress setting."""
    messages, compress = draw(conversations), draw(st.sampled_from([2, 4, 6]))
    if draw(st.booleans()):
        budget = sum(map(count_tokens, messages[:draw(st.integers(1, len(messages)))]))
    else:
        budget = draw(st.integers(1, 400))
    return messages, budget, compress


COMPRESS = re.compile(r"\[COMPRESS\] (\d+) messages.*\((\d+) tokens\) -> new summary \((\d+) tokens\)")


def compare_buffer(core, conversation, budget, compress, project_class=ProjectBuffer):
    """Both classes message by message. They agree until the page's class stores a message that still does not fit
    after its fold, where the project's folds more whole turns (returns False then); True if they agree throughout."""
    left, right = Summariser(), Summariser()
    core["summarise_messages"] = left
    page = core["SummaryBufferMemory"]("s", max_buffer_tokens=budget, messages_to_compress_on_overflow=compress)
    project = project_class("s", right, max_buffer_tokens=budget, messages_to_compress_on_overflow=compress)
    for index, content in enumerate(conversation):
        role = ("user", "assistant")[index % 2]
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            page.add_message(role, content)
        folds = len(project.fold_events)
        project.add_message(role, content)
        if page.buffer != project.buffer and page.buffer_tokens() > budget:
            assert len(project.buffer) < len(page.buffer) and project.overflow_count == page.overflow_count
            return False
        assert page.get_messages_for_api() == project.get_messages_for_api(), f"after message {index + 1}"
        assert (page.archive, page.summary, page.overflow_count) == (project.archive, project.summary,
                                                                      project.overflow_count)
        assert page.buffer_tokens() == project.buffer_tokens and left.calls == right.calls
        assert COMPRESS.findall(printed.getvalue()) == [(str(e.messages_folded), str(e.tokens_in), str(e.summary_tokens))
                                                        for e in project.fold_events[folds:]]
    return True


LESSON_RUN = ([filler_text(size) for size in [19, 213, 19, 299, 20, 209, 14, 375, 14, 384, 14]], 600, 4)


@given(case=buffer_cases())
@example(case=LESSON_RUN)
@CHECK
def test_the_pages_summary_buffer_memory_builds_the_projects_requests_until_its_rule_stores_a_message_over_budget(case):
    compare_buffer(load_core("05_summary_buffer_run.ipynb", {"encoding": encoding, "prompt": prompt}), *case)


def test_the_lessons_run_folds_the_same_messages_under_both_rules_and_a_long_message_parts_them():
    core = load_core("05_summary_buffer_run.ipynb", {"encoding": encoding, "prompt": prompt})
    assert compare_buffer(core, *LESSON_RUN)  # the reply sizes worked out from lesson 4's page
    assert not compare_buffer(core, [filler_text(45)] * 4 + [filler_text(150)], 200, 2)


@pytest.mark.parametrize("old, new", [
    ("if self.buffer_tokens() + count(content) > self.max_buffer_tokens:",
     "if self.buffer_tokens() + count(content) >= self.max_buffer_tokens:"),
    ("len(self.buffer)) // 2 * 2", "len(self.buffer))"),
    ("summarise_messages(old, self.summary)", "summarise_messages(old, None)"),
    ('"CONVERSATION MEMORY (earlier turns, compressed):\\n" + self.summary', "self.summary")])
def test_a_changed_summary_buffer_memory_fails_the_comparison(old, new):
    mutant = load_core("05_summary_buffer_run.ipynb", {"encoding": encoding, "prompt": prompt}, [(old, new)])

    @given(case=buffer_cases())
    @MUTANT
    def compare(case):
        compare_buffer(mutant, *case)

    with pytest.raises(Exception):  # an AssertionError, or the mutant crashing
        compare()


# ----- 04: analyse() ---------------------------------------------------------------------------------
ANALYSIS = lesson4()["budget_analysis"]


def page_analyse(budget, reply, compress, turns=ANALYSIS["user_messages"]):
    core = load_core("04_budget_analysis.ipynb", {"TOKENISER": encoding(), "analysis_turns": turns,
                                                  "avg_response_tokens": reply})
    return core["analyse"](budget, compress)


@pytest.mark.parametrize("reply, compress", [(100, 4), (150, 4), (100, 2), (250, 6)])
def test_the_pages_analyse_gives_what_the_sliders_memory_gives_on_the_lessons_turns(reply, compress):
    for budget in ANALYSIS["budgets"]:
        result = analyse_budget(ANALYSIS["user_messages"], budget, reply, compress)
        assert page_analyse(budget, reply, compress) == (result.overflows, result.peak_buffer_tokens)


def test_analyse_gives_the_lessons_table_and_a_pasted_statement_parts_it_from_the_class():
    assert [page_analyse(b, 100, 4) for b in ANALYSIS["budgets"]] == [
        (4, 250), (4, 365), (3, 592), (2, 798), (1, 934), (0, 1142)]
    turns = ANALYSIS["user_messages"][:5] + [filler_text(480)] + ANALYSIS["user_messages"][5:]
    pasted = analyse_budget(turns, 600)
    assert page_analyse(600, 100, 4, turns) == (3, 819) and (pasted.overflows, pasted.peak_buffer_tokens) == (3, 597)


def test_the_notebooks_classes_are_the_pages_with_nothing_added():
    for notebook in ("02_summary_memory_run.ipynb", "05_summary_buffer_run.ipynb", "04_budget_analysis.ipynb"):
        source = "\n".join(core_cells(notebook))
        assert "check_count" not in source and "not on the page" not in source and "request_options" not in source
