"""Every "try it" of lesson 4 works as worded: each edit a notebook (or the lesson page) suggests is made in
the notebook's source, the notebook is run, and the result the text promises is checked; the cells after the
edit still run. The figures the notebooks' text states are checked against what the code computes."""
from __future__ import annotations

import contextlib
import io
import re

import nbformat
import pytest

from helpers.base.tokens import count_tokens, encoding
from helpers.display.reference import lesson4_run_sizes
from helpers.lessons.data import lesson4
from helpers.memory.budget import analyse_budget
from tests.support.notebook_text import cell_text
from tests.test_lesson3_suggestions import edited_run  # edit one cell as a student does, run the whole notebook

from .notebook_core_support import NOTEBOOKS

ANALYSIS_TURNS = lesson4()["budget_analysis"]["user_messages"]


def output_of(outputs: list[str], book_name: str, marker: str) -> str:
    """The output of the code cell whose source holds ``marker`` (outputs as ``edited_run`` returns them)."""
    book = nbformat.read(NOTEBOOKS / f"{book_name}.ipynb", as_version=4)
    cells = [cell for cell in book.cells if cell.cell_type == "code"]
    return outputs[next(i for i, cell in enumerate(cells) if marker in cell.source)]


def markdown(name: str) -> str:
    book = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    return "\n".join(cell.source for cell in book.cells if cell.cell_type == "markdown")


def table_row(budget: int, overflows: int) -> re.Pattern:
    return re.compile(rf"^\s*{budget} \|\s+{overflows} \|", re.M)


def sliders_agree(outputs: list[str]) -> bool:
    """The Going-deeper cell that sets the sliders' memory beside analyse() still shows the two agreeing."""
    memory, ours = output_of(outputs, "04_budget_analysis", "the memory class:").splitlines()
    return memory.split(":", 1)[1].strip() == ours.split(":", 1)[1].strip()


# ----- notebook 04 ---------------------------------------------------------------------------------

TABLE = "results = [analyse(budget)"  # the cell that prints the lesson's table


def test_04_replies_of_150_tokens_overflow_9_times_at_300_and_once_at_1500(tmp_path):
    """The page: 'change avg_response_tokens = 100 to 150: a 300-token budget now overflows 9 times in 10
    turns, and even 1,500 tokens overflows once.'"""
    outputs = edited_run(tmp_path, "04_budget_analysis.ipynb", "avg_response_tokens = 100",
                         "avg_response_tokens = 100", "avg_response_tokens = 150")
    table = output_of(outputs, "04_budget_analysis", TABLE)
    assert table_row(300, 9).search(table) and table_row(1500, 1).search(table), table
    assert sliders_agree(outputs)


def test_04_compressing_2_messages_overflows_5_times_at_600(tmp_path):
    """The page: 'change messages_to_compress=4 to 2 in analyse: a 600-token budget overflows 5 times instead of 3'."""
    outputs = edited_run(tmp_path, "04_budget_analysis.ipynb", "def analyse(", "messages_to_compress=4",
                         "messages_to_compress=2")
    table = output_of(outputs, "04_budget_analysis", TABLE)
    assert table_row(600, 5).search(table), table
    assert sliders_agree(outputs)


def test_04_deleting_the_while_lines_gives_the_pages_rule_and_the_buffer_passes_its_budget(tmp_path):
    """The notebook: 'delete the two while lines in analyse and run that cell and this one again: (3, 819)'."""
    book = nbformat.read(NOTEBOOKS / "04_budget_analysis.ipynb", as_version=4)
    (cell,) = [c for c in book.cells if c.cell_type == "code" and "def analyse(" in c.source]
    lines = [line for line in cell.source.splitlines(keepends=True) if line.strip().startswith(("while n", "n += 2"))]
    assert len(lines) == 2
    outputs = edited_run(tmp_path, "04_budget_analysis.ipynb", "def analyse(", "".join(lines), "")
    assert "(3, 819)" in output_of(outputs, "04_budget_analysis", "with_statement = ")
    assert "`(3, 819)`" in markdown("04_budget_analysis")
    assert sliders_agree(outputs)  # the page's rule gives the lesson's table too


def test_04_the_statement_figures_in_the_text_are_what_the_rules_give():
    book = nbformat.read(NOTEBOOKS / "04_budget_analysis.ipynb", as_version=4)
    (cell,) = [c for c in book.cells if c.cell_type == "code" and c.source.startswith("TOKENISER")]
    scope: dict = {"encoding": encoding}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(cell.source, scope)  # the notebook's own statement, as the student sees it
    statement = scope["statement"]
    turns = ANALYSIS_TURNS[:5] + [statement] + ANALYSIS_TURNS[5:]
    sizes = [size for turn in turns for size in (count_tokens(turn), 100)]
    ours = analyse_budget(turns, 600)
    arriving = ours.steps[10]  # the statement, message 11
    before = arriving.would_reach - arriving.message_tokens
    left = before - sum(sizes[:4])
    page_buffers, buffer = [], []
    for size in sizes:  # the page's rule: fold at most 4, store anyway
        if sum(buffer) + size > 600:
            buffer = buffer[min(4, len(buffer)) // 2 * 2:]
        buffer.append(size)
        page_buffers.append(sum(buffer))
    text = markdown("04_budget_analysis")
    assert f"holds turns 1 to 5, {before} tokens" in text
    assert f"leave {left} tokens, and {left} + {count_tokens(statement)} = {left + count_tokens(statement)}" in text
    assert f"the statement, {arriving.buffer_tokens} tokens" in text and ours.peak_buffer_tokens <= 600
    assert f"buffer at {page_buffers[10]} tokens, {page_buffers[10] - 600} over its budget" in text
    assert f"leaves it at {page_buffers[11]}" in text
    replies = lesson4_run_sizes()[1::2]
    assert f"replied with {min(replies)} to {max(replies)} tokens" in text


# ----- notebook 05 ---------------------------------------------------------------------------------

def test_05_a_2000_token_budget_never_overflows_and_request_1_is_the_first_user_message(tmp_path):
    """The page: 'set max_buffer_tokens=2000: nothing overflows in six turns, no summary is written, and
    request[1] is then the first user message.' The edit is the page's: the 600 in the constructor."""
    name = "05_summary_buffer_run"
    outputs = edited_run(tmp_path, f"{name}.ipynb", "sb_memory = SummaryBufferMemory(", "max_buffer_tokens=600",
                         "max_buffer_tokens=2000")
    ran = output_of(outputs, name, "sb_memory = SummaryBufferMemory(")
    turn_lines = [line for line in ran.splitlines() if line.startswith("[Turn")]
    assert len(turn_lines) == 6 and all(line.endswith("overflows: 0") for line in turn_lines), ran
    assert "[COMPRESS]" not in ran
    first = lesson4()["buffer_run"]["user_turns"][0]
    assert f"request[1] at turn 6 (user): {first}" in ran
    assert "request[1] user" in output_of(outputs, name, "lesson4_request_at_turn_6()")
    assert "No summary was sent at turn 6" in output_of(outputs, name, "audit_report(")
    assert "No overflow at this budget" in output_of(outputs, name, "max_summary_tokens=cap")


def test_05_the_offline_run_overflows_where_the_lessons_did_and_the_text_says_so():
    """Stored offline run: the lesson's 600 tokens as the page writes it, three overflows before turn 6 (storing
    replies 3, 4 and 5, the later two folding one turn each), as the text after the run says."""
    book = nbformat.read(NOTEBOOKS / "05_summary_buffer_run.ipynb", as_version=4)
    (cell,) = [c for c in book.cells if c.cell_type == "code" and "sb_memory = SummaryBufferMemory(" in c.source]
    assert "max_buffer_tokens=600" in cell.source and "BUDGET" not in cell.source
    lines = cell_text(cell).splitlines()
    turns = [line for line in lines if line.startswith("[Turn")]
    assert [int(line.rsplit(" ", 1)[1]) for line in turns] == [0, 0, 0, 1, 2, 3]
    assert all("/600 tokens" in line for line in turns)
    folds = [line.split(" (")[0] for line in lines if "[COMPRESS]" in line][:3]
    assert folds == ["  [COMPRESS] 4 messages", "  [COMPRESS] 2 messages + old summary",
                     "  [COMPRESS] 2 messages + old summary"]
    assert "Three overflows before turn 6" in markdown("05_summary_buffer_run")


def pages_analyse(budget: int, reply: int, compress: int, turns=ANALYSIS_TURNS) -> tuple[int, int]:
    """The lesson page's analyse(), as it prints it: at most ``compress`` messages folded, a fold of nothing counted."""
    buffer, overflows, peak = [], 0, 0
    for user_msg in turns:
        for size in (count_tokens(user_msg), reply):
            if sum(buffer) + size > budget:
                n = min(compress, len(buffer)) // 2 * 2
                buffer, overflows = buffer[n:], overflows + 1
            buffer.append(size)
            peak = max(peak, sum(buffer))
    return overflows, peak


@pytest.mark.parametrize("reply, compress", [(100, 4), (150, 4), (100, 2)])
def test_04_the_pages_analyse_and_this_rule_agree_on_the_lessons_table_and_its_try_its(reply, compress):
    """The notebook says neither of its two changed lines changes a figure of the table or of its try-its."""
    for budget in lesson4()["budget_analysis"]["budgets"]:
        result = analyse_budget(ANALYSIS_TURNS, budget, reply, compress)
        assert pages_analyse(budget, reply, compress) == (result.overflows, result.peak_buffer_tokens)


@pytest.mark.parametrize("name", ["04_budget_analysis", "05_summary_buffer_run"])
def test_the_glossary_link_opens_from_the_notebooks_folder(name):
    """`jupyter lab notebooks/` serves only notebooks/: the glossary is linked as notebooks/glossary.md."""
    links = re.findall(r"\]\(([^)]+)\)", markdown(name))
    assert "glossary.md" in links and (NOTEBOOKS / "glossary.md").is_file()
    assert all((NOTEBOOKS / link).is_file() for link in links if not link.startswith(("http", "#")))
