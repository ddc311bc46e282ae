"""The code lesson 4's notebooks teach (the cells tagged ``lesson-core``) does what the project's memory does.

Notebook 05's ``SummaryBufferMemory``, ``summarise_messages`` and ``chat`` against
``helpers.memory.summary_buffer.SummaryBufferMemory``, the lessons' summariser request and
``helpers.model.chat``; notebook 04's ``analyse`` against ``helpers.memory.budget`` (what the sliders
run). Hypothesis tries any conversation and settings. The same checks run on copies with a changed
rule must fail: that is what keeps the two from drifting apart. Where the two knowingly differ (a
failed summariser call) the difference is tested too.
"""
from __future__ import annotations

import contextlib
import io
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from helpers.base.tokens import count_tokens, encoding, filler_text
from helpers.display.lines import fold_line
from helpers.display.reference import lesson4_run_sizes
from helpers.lessons.data import lesson4, prompt
from helpers.memory.budget import analyse_budget
from helpers.memory.summary_buffer import SummaryBufferMemory
from helpers.memory.types import SettingError, SummariserError
from helpers.memory.validation import check_count
from helpers.model.chat import chat as measured_chat
from helpers.model.connect import ModelAccess, connect
from helpers.model.summarisers import build_summariser_request, make_summariser, request_templates

from .notebook_core_support import core_cells, load_core, settings_outcome

NOTEBOOK = "05_summary_buffer_run.ipynb"
BUDGET_NOTEBOOK = "04_budget_analysis.ipynb"
WORDS = ("salary", "₹1,20,000", "FD", "risk-averse", "PPF", "NPS", "corpus", "retire", "SIP", "ok", "the", "x")
ANALYSIS_TURNS = lesson4()["budget_analysis"]["user_messages"]


OFFLINE = connect("offline", quiet=True)


def namespace() -> dict:
    """What the notebook's earlier cells define that its core cells use (tests that call a model set their own)."""
    return {"encoding": encoding, "client": OFFLINE.client, "access": OFFLINE, "prompt": prompt,
            "check_count": check_count, "SettingError": SettingError}


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
    """A deterministic summariser that remembers its calls: one line per folded message, after the old summary."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[dict[str, str]], str | None]] = []

    def __call__(self, messages, existing_summary=None) -> str:
        self.calls.append(([dict(m) for m in messages], existing_summary))
        lines = [existing_summary or "summary:"] + [f"{m['role']} said {m['content'][:12]}" for m in messages]
        return "\n".join(lines).strip()


def run_both(core: dict, hardened_class, messages: list[str], budget: int, compress: int) -> None:
    """Feed the same messages to both classes; after every message the memories must agree, and the
    notebook's [COMPRESS] line must be the project's fold line."""
    ours, theirs = Summariser(), Summariser()
    core["summarise_messages"] = ours  # the notebook's class calls the summariser by this global name
    notebook = core["SummaryBufferMemory"]("You are FinCoach.", max_buffer_tokens=budget,
                                           messages_to_compress_on_overflow=compress)
    hardened = hardened_class("You are FinCoach.", theirs, max_buffer_tokens=budget,
                              messages_to_compress_on_overflow=compress)
    for index, content in enumerate(messages):
        role = ("user", "assistant")[index % 2]
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            notebook.add_message(role, content)
        folds = len(hardened.fold_events)
        hardened.add_message(role, content)
        where = f"after message {index + 1} (budget {budget}, compress {compress})"
        assert notebook.get_messages_for_api() == hardened.get_messages_for_api(), f"requests differ {where}"
        assert notebook.archive == hardened.archive, f"archives differ {where}"
        assert notebook.buffer == hardened.buffer, f"buffers differ {where}"
        assert notebook.summary == hardened.summary, f"summaries differ {where}"
        assert notebook.buffer_tokens() == hardened.buffer_tokens, f"buffer tokens differ {where}"
        assert notebook.overflow_count == hardened.overflow_count, f"overflow counts differ {where}"
        assert ours.calls == theirs.calls, f"the summariser was called differently {where}"
        expected = "".join(fold_line(e, hardened.KIND.name) + "\n" for e in hardened.fold_events[folds:])
        assert printed.getvalue() == expected, f"the [COMPRESS] lines differ {where}"


# Enough examples to meet every branch; derandomized so that the suite gives the same verdict every run.
EQUIVALENCE = settings(max_examples=250, deadline=None, derandomize=True, database=None,
                       suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
# For the mutants: stop at the first counterexample (no shrinking), same seed.
MUTANT = settings(max_examples=250, deadline=None, derandomize=True, database=None,
                  phases=[Phase.explicit, Phase.generate],
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@pytest.fixture
def core() -> dict:
    """A fresh copy of the notebook's core cells (tests set its summariser and client)."""
    return load_core(NOTEBOOK, namespace())


def test_the_notebook_class_has_the_lessons_names_and_defaults(core):
    memory = core["SummaryBufferMemory"]("You are FinCoach.")
    assert (memory.max_buffer_tokens, memory.messages_to_compress_on_overflow) == (600, 4)  # the lesson's
    assert (memory.buffer, memory.summary, memory.archive, memory.overflow_count) == ([], None, [], 0)
    assert memory.buffer_tokens() == 0 and callable(memory.handle_overflow)
    assert memory.get_messages_for_api() == [{"role": "system", "content": "You are FinCoach."}]


@pytest.mark.parametrize("budget", [-5, 0, 1, 600, 2.5, True])
@pytest.mark.parametrize("compress", [-2, 0, 1, 2, 3, 4, 5, 4.0, False])
def test_the_notebook_class_refuses_the_settings_the_projects_refuses_with_one_line(core, budget, compress):
    """An odd messages_to_compress_on_overflow would split a turn, a budget under 1 holds nothing: both refuse."""
    outcomes = [settings_outcome(lambda: core["SummaryBufferMemory"]("s", budget, compress)),
                settings_outcome(lambda: SummaryBufferMemory("s", Summariser(), max_buffer_tokens=budget, messages_to_compress_on_overflow=compress))]
    assert outcomes[0] == outcomes[1], (budget, compress, outcomes)
    valid = budget in (1, 600) and budget is not True and compress in (2, 4) and isinstance(compress, int) \
        and compress is not False
    assert outcomes[0] == ("made" if valid else "refused")


def test_the_class_is_one_cell_so_running_it_again_keeps_its_methods():
    """Re-running (or editing) the class cell must leave a working class: no method attached from a later cell."""
    cells = [cell for cell in core_cells(NOTEBOOK) if "class SummaryBufferMemory" in cell]
    assert len(cells) == 1
    for method in ("def add_message", "def handle_overflow", "def get_messages_for_api", "def buffer_tokens"):
        assert method in cells[0]
    assert "SummaryBufferMemory." not in "\n".join(core_cells(NOTEBOOK))  # nothing attached afterwards


@EQUIVALENCE
@given(case=conversations())
def test_notebook_class_and_project_class_build_the_same_requests(core, case):
    run_both(core, SummaryBufferMemory, *case)


def test_the_lessons_run_folds_the_same_messages_under_the_pages_rule_and_this_one(core):
    """The notebook says the lesson's six turns (its reply sizes, worked out from the page) fold the same
    messages under both rules: the page's stops at messages_to_compress_on_overflow."""
    conversation = [filler_text(size) for size in lesson4_run_sizes()]
    run_both(core, SummaryBufferMemory, conversation, 600, 4)
    page = load_core(NOTEBOOK, namespace(), [PAGE_RULE])
    run_both(page, SummaryBufferMemory, conversation, 600, 4)


def test_a_message_that_still_does_not_fit_folds_another_turn_in_the_same_overflow(core):
    """Two turns of 45 + 45 tokens in a 200-token buffer, then a 150-token question: folding one turn leaves
    240 tokens, so the second turn goes too, in the same single summariser call (the page's rule stops)."""
    conversation = [filler_text(45)] * 4 + [filler_text(150)]
    run_both(core, SummaryBufferMemory, conversation, 200, 2)
    summarise = core["summarise_messages"] = Summariser()
    memory = core["SummaryBufferMemory"]("s", max_buffer_tokens=200, messages_to_compress_on_overflow=2)
    with contextlib.redirect_stdout(io.StringIO()):
        for index, content in enumerate(conversation):
            memory.add_message(("user", "assistant")[index % 2], content)
    assert memory.overflow_count == 1 and len(summarise.calls) == 1 and len(summarise.calls[0][0]) == 4
    assert memory.buffer_tokens() == 150


def failing_summariser(messages, existing_summary=None):
    raise RuntimeError("the summariser is down")


def test_a_failed_summariser_call_changes_nothing_in_the_notebooks_class_and_keeps_the_message_in_the_projects(core):
    """The one difference the notebook states: its class raises and stores nothing; the project's class stores
    the message over budget and retries the fold later. Neither loses a message."""
    conversation = [filler_text(40)] * 3
    core["summarise_messages"] = Summariser()
    notebook = core["SummaryBufferMemory"]("s", max_buffer_tokens=100, messages_to_compress_on_overflow=2)
    project = SummaryBufferMemory("s", failing_summariser, max_buffer_tokens=100, messages_to_compress_on_overflow=2)
    for index, content in enumerate(conversation[:2]):
        notebook.add_message(("user", "assistant")[index % 2], content)
        project.add_message(("user", "assistant")[index % 2], content)
    core["summarise_messages"] = failing_summariser
    before = (list(notebook.buffer), list(notebook.archive), notebook.summary, notebook.overflow_count)
    with pytest.raises(RuntimeError):
        notebook.add_message("user", conversation[2])
    assert (notebook.buffer, notebook.archive, notebook.summary, notebook.overflow_count) == before
    with pytest.raises(SummariserError):
        project.add_message("user", conversation[2])
    assert len(project.archive) == len(project.buffer) == 3 and project.over_budget and project.summary is None


# ----- the summariser call and the turn, through the real SDK -----------------------------------------

def recording_client(reply: str = "a summary") -> tuple[SimpleNamespace, list[dict]]:
    """A stand-in for ``client`` that keeps the keyword arguments of every create() call."""
    calls: list[dict] = []

    def create(**options):
        calls.append(options)
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=f"  {reply} \n"))])

    return SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=create))), calls


def test_the_summariser_prompt_written_out_is_the_lessons(core):
    assert core["FINCOACH_SUMMARY_PROMPT"] == prompt("summary_buffer")


@settings(max_examples=100, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(messages=texts(), existing=st.one_of(st.none(), st.text(min_size=1, max_size=60)), reasoning=st.booleans())
def test_summarise_messages_sends_the_lessons_request_in_one_call(core, messages, existing, reasoning):
    folded = [{"role": ("user", "assistant")[i % 2], "content": m} for i, m in enumerate(messages)]
    client, calls = recording_client()
    access = ModelAccess(client=client, model="openai/gpt-oss-120b", mode="live", label="", endpoint="", provider="groq",
                         accepts_reasoning_effort=reasoning)
    core["client"], core["access"] = client, access
    assert core["summarise_messages"](folded, existing) == "a summary"
    expected = build_summariser_request(folded, existing, system_prompt=prompt("summary_buffer"),
                                        templates=request_templates("lesson4"))
    assert len(calls) == 1
    assert calls[0] == {"model": "openai/gpt-oss-120b", "messages": expected, "max_tokens": 1000, "temperature": 0,
                        **({"reasoning_effort": "low"} if reasoning else {})}


@pytest.mark.parametrize("budget", [45, 90, 600, 2000])
def test_the_notebooks_chat_prints_what_the_projects_chat_prints(budget):
    """Offline, the notebook's run and the project's chat() print the same turn and [COMPRESS] lines (the
    project's chat adds warnings, such as a reply that took the buffer over budget; the lesson's line has none)."""
    access = connect("offline")
    core = load_core(NOTEBOOK, {**namespace(), "client": access.client, "access": access})
    memory = core["SummaryBufferMemory"](prompt("fincoach_system"), max_buffer_tokens=budget)
    project = SummaryBufferMemory(prompt("fincoach_system"), make_summariser(access, "summary_buffer"),
                                  max_buffer_tokens=budget)
    ours, theirs = io.StringIO(), []
    for text in lesson4()["buffer_run"]["user_turns"]:
        with contextlib.redirect_stdout(ours):
            reply, request = core["chat"](memory, text)
        record = measured_chat(project, text, access)
        theirs += [fold_line(e, record.kind) for e in record.folds_before] + [project.KIND.turn_line(record)]
        theirs += [fold_line(e, record.kind) for e in record.folds_after]  # the page's lines, no project warnings
        assert (reply, request) == (record.reply, record.request)
    assert ours.getvalue() == "\n".join(theirs) + "\n"


# ----- the check can fail: changed copies are caught ---------------------------------------------

PAGE_RULE = ("while n < whole and tokens_of", "while False and tokens_of")  # the page's handle_overflow stops at n
MUTATIONS = {
    "the trigger fires when the message fits exactly": (
        "if self.buffer_tokens() + count(content) > self.max_buffer_tokens:",
        "if self.buffer_tokens() + count(content) >= self.max_buffer_tokens:"),
    "the page's rule: no extra turn folded when the message still does not fit": PAGE_RULE,
    "a question may be folded without its reply": (
        "whole = len(self.buffer) // 2 * 2", "whole = len(self.buffer)"),
    "the summary is sent without its heading": (
        '"CONVERSATION MEMORY (earlier turns, compressed):\\n" + self.summary',
        'self.summary'),
    "the overflow folds one turn fewer": (
        "n = min(self.messages_to_compress_on_overflow, whole)",
        "n = min(self.messages_to_compress_on_overflow - 2, whole)"),
    "an overflow with nothing to fold still calls the summariser": ("        if n == 0:\n            return\n", ""),
    "the old summary is not merged": ("summarise_messages(old, self.summary)", "summarise_messages(old, None)"),
    "the [COMPRESS] line always says '+ old summary'": (
        'merged = "" if self.summary is None else " + old summary"', 'merged = " + old summary"'),
}


@pytest.mark.parametrize("change", MUTATIONS)
def test_a_changed_rule_in_the_notebook_is_caught(change):
    mutant = load_core(NOTEBOOK, namespace(), [MUTATIONS[change]])

    @MUTANT
    @given(case=conversations())
    def check(case):
        run_both(mutant, SummaryBufferMemory, *case)

    with pytest.raises(Exception):  # an AssertionError, or the mutant crashing, is a counterexample
        check()


class HardenedWithoutExtraTurns(SummaryBufferMemory):
    """The project's class with its rule changed: an overflow folds exactly the configured messages."""

    def messages_to_fold(self, incoming_tokens: int) -> int:
        if self.buffer_tokens + incoming_tokens <= self.max_buffer_tokens:
            return 0
        return min(self.messages_to_compress_on_overflow, len(self.buffer) // 2 * 2)


# Four 9-token messages fill a 40-token buffer; a 28-token message then needs two turns folded, not one.
NEEDS_TWO_TURNS = (["one two three four five six seven eight nine"] * 4 + [" ".join(["word"] * 28)], 40, 2)


def test_a_changed_rule_in_the_project_class_is_caught(core):
    @MUTANT
    @given(case=conversations())
    @example(case=NEEDS_TWO_TURNS)  # the smallest case where the mutant differs, so the verdict never rests on chance
    def check(case):
        run_both(core, HardenedWithoutExtraTurns, *case)

    with pytest.raises(AssertionError):
        check()


# ----- notebook 04's analyse() and the sliders' helpers.memory.budget ----------------------------

def load_analyse(mutations=()) -> dict:
    return load_core(BUDGET_NOTEBOOK, {"count": count_tokens, "analysis_turns": ANALYSIS_TURNS,
                                        "avg_response_tokens": 100}, mutations)


@st.composite
def budget_settings(draw) -> tuple[list[str], int, int, int]:
    """User turns (the lesson's, or random ones with long pastes), a budget, a reply length and a compress
    setting. A third of the budgets equal the size of the first k messages (an exact fit), a third are small
    next to the long turns (more than one turn must leave), a third are anything."""
    turns = draw(st.one_of(st.just(ANALYSIS_TURNS), texts(min_size=1)))
    reply, compress = draw(st.integers(1, 400)), draw(st.sampled_from([2, 4, 6, 8, 10]))
    sizes = [size for turn in turns for size in (count_tokens(turn), reply)]
    kind = draw(st.sampled_from(["prefix", "small", "any"]))
    if kind == "prefix":
        budget = sum(sizes[:draw(st.integers(1, len(sizes)))])
    else:
        budget = draw(st.integers(20, 400 if kind == "small" else 2000))
    return turns, budget, reply, compress


def check_analyse(scope: dict, turns: list[str], budget: int, reply: int, compress: int) -> None:
    scope["avg_response_tokens"] = reply  # analyse() reads it when it runs, as after a student's edit
    result = analyse_budget(turns, budget, reply, compress)
    assert scope["analyse"](budget, compress, turns) == (result.overflows, result.peak_buffer_tokens), (
        f"analyse() and the memory differ: budget {budget}, replies {reply}, compress {compress}, {len(turns)} turns")


@EQUIVALENCE
@given(case=budget_settings())
def test_the_notebooks_analyse_gives_what_the_sliders_memory_gives(case):
    check_analyse(load_analyse(), *case)


def test_analyse_with_its_defaults_gives_the_lessons_table():
    scope = load_analyse()
    assert [scope["analyse"](b) for b in (300, 400, 600, 800, 1000, 1500)] == [
        (4, 250), (4, 365), (3, 592), (2, 798), (1, 934), (0, 1142)]


ANALYSE_MUTATIONS = {
    "the page's rule (no extra turns)": ("while n < whole and sum(buffer[n:])", "while False and sum(buffer[n:])"),
    "the page's count of an empty fold": ("                if n:", "                if True:"),
    ">= instead of >": ("if sum(buffer) + size > budget:", "if sum(buffer) + size >= budget:"),
    "not whole turns": ("whole = len(buffer) // 2 * 2", "whole = len(buffer)"),
}


@pytest.mark.parametrize("change", ANALYSE_MUTATIONS)
def test_a_changed_analyse_is_caught(change):
    mutant = load_analyse([ANALYSE_MUTATIONS[change]])

    @MUTANT
    @given(case=budget_settings())
    def check(case):
        check_analyse(mutant, *case)

    with pytest.raises(AssertionError):
        check()


def test_an_empty_summary_is_stored_by_the_notebooks_class_and_refused_by_the_projects(core):
    """The second difference the notebook states: an empty summary drops the folded turns from every request in
    the notebook's class (they stay in the archive); the project's class refuses it and keeps them verbatim."""
    conversation = [filler_text(40)] * 3
    core["summarise_messages"] = lambda messages, existing_summary=None: ""
    notebook = core["SummaryBufferMemory"]("s", max_buffer_tokens=100, messages_to_compress_on_overflow=2)
    project = SummaryBufferMemory("s", lambda messages, existing: "", max_buffer_tokens=100,
                                  messages_to_compress_on_overflow=2)
    with contextlib.redirect_stdout(io.StringIO()):
        for index, content in enumerate(conversation[:2]):
            notebook.add_message(("user", "assistant")[index % 2], content)
            project.add_message(("user", "assistant")[index % 2], content)
        notebook.add_message("user", conversation[2])
    assert notebook.summary == "" and len(notebook.archive) == 3
    assert notebook.get_messages_for_api() == [{"role": "system", "content": "s"}, notebook.archive[2]]
    with pytest.raises(SummariserError) as failed:
        project.add_message("user", conversation[2])
    assert failed.value.problem == "empty text"
    assert project.get_messages_for_api()[1:] == project.archive  # all three still sent, word for word
