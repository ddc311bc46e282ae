"""Lesson 4's figures drawn by helpers: the flowchart and the bar chart from a notebook's own lists, sized for a
projector; and the lesson's published run, labelled as the lesson's, its [COMPRESS] lines as rebuilt."""
from __future__ import annotations

from matplotlib.figure import Figure

from helpers.display.plots import FLOWCHART_TITLE as TITLE, summary_buffer_flowchart
from helpers.display.plots import MIN_TEXT_SIZE, overflow_bar_chart
from helpers.display.reference import lesson4_run_lines
from helpers.lessons.data import lesson4
from helpers.memory.budget import budget_table


def texts_of(fig: Figure) -> list:
    return [text for ax in fig.axes for text in ax.texts] + [ax.title for ax in fig.axes]


def test_the_flowchart_shows_the_four_steps_large_enough_for_a_projector():
    fig = summary_buffer_flowchart()
    assert isinstance(fig, Figure) and fig.get_figwidth() >= 8
    assert fig.axes[0].get_title() == TITLE
    words = " ".join(text.get_text() for text in texts_of(fig))
    for step in ("1 appended", "2 would pass", "3 new summary", "4 assembled", "running summary",
                 "system prompt", "reply appended", "summariser LLM"):
        assert step in words
    assert all(text.get_fontsize() >= MIN_TEXT_SIZE for text in texts_of(fig) if text.get_text())
    arrows = [child for child in fig.axes[0].get_children() if type(child).__name__ == "Annotation"]
    assert len(arrows) == 7


def test_the_bar_chart_from_lists_is_the_bar_chart_from_the_memory():
    analysis = lesson4()["budget_analysis"]
    table = budget_table(analysis["user_messages"], analysis["budgets"])
    ours = overflow_bar_chart(analysis["budgets"], [4, 4, 3, 2, 1, 0])
    theirs = overflow_bar_chart([r.max_buffer_tokens for r in table.results], [r.overflows for r in table.results])
    for fig in (ours, theirs):
        ax = fig.axes[0]
        assert [round(p.get_height()) for p in ax.patches] == [4, 4, 3, 2, 1, 0]
        assert [t.get_text() for t in ax.get_xticklabels()] == [str(b) for b in analysis["budgets"]]
        assert ax.get_title() == "Summary buffer memory: overflows per token budget"


def test_the_lessons_run_is_labelled_and_its_compress_lines_say_they_are_rebuilt():
    lines = lesson4_run_lines()
    assert lines[0].startswith("From the lesson's run of openai/gpt-oss-120b") and "reference data" in lines[0]
    heading = next(i for i, line in enumerate(lines) if "[COMPRESS] lines rebuilt" in line)
    assert all("[COMPRESS]" in line for line in lines[heading + 1:heading + 4])
    assert "[COMPRESS] 4 messages (550 tokens) -> new summary (141 tokens)" in lines[heading + 1]
