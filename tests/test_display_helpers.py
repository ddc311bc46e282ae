"""What the display and measure helpers show: the sliders answer with the lessons' figures (the page's try-its by
slider) and print them as text too; charts titled, labelled and readable on a projector; the lessons' published
runs labelled as theirs; drift read as rule or preference; a request shown message by message."""
from __future__ import annotations

import matplotlib.text
import pytest

from helpers.base.tokens import count_tokens
from helpers.display import plots
from helpers.display.lines import (HEADING, audit_report, lesson3_run_lines, lesson4_run_lines, lesson4_run_sizes,
                                   request_text)
from helpers.display.widgets import PANEL_DPI, budget_panel, render_budget, render_schedule, schedule_panel
from helpers.lessons.data import lesson3, lesson4, published_run
from helpers.measure import drift
from helpers.memory.budget import analyse_budget, budget_table
from helpers.memory.schedule import summary_schedule
from helpers.memory.types import SettingError

MESSAGES, BUDGETS = lesson4()["budget_analysis"]["user_messages"], lesson4()["budget_analysis"]["budgets"]
SUMMARIES = [cycle["summary"] for cycle in published_run(3)["drift_run"]["cycles"]]


# ----- sliders -----------------------------------------------------------------------------------------------
def test_the_schedule_sliders_give_the_lessons_figures_and_keep_stays_below_the_threshold(capsys):
    panel = schedule_panel()
    assert capsys.readouterr().out.splitlines()[-2] == " summariser calls in 10 turns: 4"  # printed for any front end
    assert [s.description for s in panel.sliders.values()] == ["threshold", "keep verbatim", "turns"]
    panel.sliders["keep"].value = 3
    assert "summariser calls in 10 turns: 7" in panel.text
    panel.sliders["keep"].value, panel.sliders["threshold"].value = 2, 6  # the lesson's try-it, by slider
    assert "summariser calls in 10 turns: 2" in panel.text and "turn 10 holds 6 verbatim turns" in panel.text
    panel.sliders["threshold"].value = 2
    assert panel.sliders["keep"].value == 1 and "Summarise after 2 turns, keep 1 verbatim:" in panel.text
    panel.sliders["turns"].value = 1
    assert panel.text.endswith("summariser calls in 1 turn: 0\n request at turn 1 holds 1 verbatim turns")
    assert bytes(panel.image.value).startswith(b"\x89PNG") and panel.text == render_schedule(2, 1, 1)[0]


def test_the_budget_sliders_do_the_pages_try_its(capsys):
    panel = budget_panel()
    assert "budget 600: overflows: 3, largest buffer: 592 tokens" in capsys.readouterr().out  # for any front end
    before = panel.image.value
    panel.sliders["reply_tokens"].value = 150  # the page: 9 overflows at 300, and one even at 1,500
    assert "   300 |         9 |" in panel.text and "  1500 |         1 |" in panel.text
    assert panel.image.value != before
    panel.sliders["reply_tokens"].value, panel.sliders["compress"].value = 100, 2  # the page: 5 instead of 3
    assert "budget 600: overflows: 5" in panel.text
    panel.sliders["compress"].value, panel.sliders["budget"].value = 4, 1500
    assert "budget 1500: overflows: 0, largest buffer: 1142 tokens" in panel.text


def test_a_buffer_over_its_budget_is_explained_where_the_readout_shows_it():
    text, _ = render_budget(budget=100, reply_tokens=150)
    assert "largest buffer: 170 tokens (over the budget: a turn bigger than the whole budget" in text
    assert "over the budget" not in render_budget()[0]


# ----- charts ---------------------------------------------------------------------------------------------------
def charts():
    yield "schedule (slider)", plots.ScheduleChart().update(summary_schedule(10, 4, 2)), PANEL_DPI
    yield "budget bars", plots.overflow_bar_chart(BUDGETS, [4, 4, 3, 2, 1, 0]), plots.DISPLAY_DPI
    yield "budget (slider)", plots.BudgetChart(BUDGETS, 20).update(budget_table(MESSAGES, BUDGETS, 150),
                                                                   analyse_budget(MESSAGES, 300, 150)), PANEL_DPI
    yield "flowchart", plots.summary_buffer_flowchart(), plots.DISPLAY_DPI


@pytest.mark.parametrize("name, fig, dpi", list(charts()), ids=lambda v: v if isinstance(v, str) else "")
def test_every_chart_is_titled_readable_on_a_projector_and_not_cut_off(name, fig, dpi):
    fig.canvas.draw()
    texts = [t for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()]
    assert all(ax.get_title() for ax in fig.axes if ax.axison) and fig.get_figwidth() >= 8
    assert min(t.get_fontsize() for t in texts) >= plots.MIN_TEXT_SIZE, name
    scale = min(1.0, 900 / (fig.get_figwidth() * dpi))  # a 1024x768 projector shows about 900 px of output
    assert min(t.get_fontsize() for t in texts) * dpi / 72 * scale >= 14, f"{name}: letters under 14 px"
    drawn = fig.get_tightbbox(fig.canvas.get_renderer())
    assert drawn.x0 >= -0.02 and drawn.y0 >= -0.02 and drawn.x1 <= fig.get_figwidth() + 0.02, name
    assert drawn.y1 <= fig.get_figheight() + 0.02, name


def test_the_bar_chart_is_the_lessons_and_the_budget_chart_marks_each_overflow_above_the_budget():
    ax = plots.overflow_bar_chart(BUDGETS, [4, 4, 3, 2, 1, 0]).axes[0]
    assert [round(p.get_height()) for p in ax.patches] == [4, 4, 3, 2, 1, 0]
    assert ax.get_title() == "Summary buffer memory: overflows per token budget"
    chart, chosen = plots.BudgetChart(BUDGETS, 20), analyse_budget(MESSAGES, 300, 150)
    chart.update(budget_table(MESSAGES, BUDGETS, 150), chosen)
    assert len(chart.would.get_offsets()) == chosen.overflows == 9
    assert all(y > 300 for _, y in chart.would.get_offsets())


def test_the_flowchart_shows_the_pages_four_steps():
    fig = plots.summary_buffer_flowchart()
    words = " ".join(t.get_text() for t in fig.axes[0].texts)
    for step in ("1 appended", "2 would pass", "3 new summary", "4 assembled", "running summary", "summariser LLM"):
        assert step in words


# ----- the lessons' published runs, drift, a request -----------------------------------------------------------
def test_the_lessons_runs_are_labelled_and_printed_in_their_own_format():
    lines = lesson3_run_lines()
    assert lines[0] == HEADING and "reference data" in HEADING
    assert lines[1] == "[Turn 1] messages sent: 2 | prompt_tokens: 229 | summary sent: False | salary in a verbatim turn: True"
    assert lines[5] == "  [SUMMARISE] 4 messages (489 tokens) -> summary (131 tokens)"
    four = lesson4_run_lines()
    assert "  [COMPRESS] 4 messages (550 tokens) -> new summary (141 tokens)" in four
    assert "  [COMPRESS] 2 messages + old summary (370 tokens) -> new summary (148 tokens)" in four
    assert lesson4_run_sizes() == [19, 213, 19, 299, 20, 209, 14, 375, 14, 384, 14]


def test_drift_measures_the_lessons_run_as_the_lesson_does_and_reads_the_rule_becoming_a_preference():
    cycles = drift.measure(SUMMARIES, [82, 71, 66])
    assert [(c.summary_tokens, c.mentions_keyword) for c in cycles][:2] == [(58, True), (99, True)]
    assert cycles[2].words == 82 and [c.strength for c in cycles] == ["rule", "rule", "preference"]
    assert drift.keyword_sentences(SUMMARIES[2]) == ["He avoids equities, preferring fixed‑income."]
    with pytest.raises(SettingError) as refused:
        drift.measure(SUMMARIES, [1, 2])
    assert refused.value.setting == "batch_tokens"


@pytest.mark.parametrize("sentence, strength", [("He never wants equity funds.", "rule"), ("He holds an FD.", "absent"),
                                                ("She prefers to stay away from equities.", "preference"),
                                                ("He holds some equity.", "mentioned")])
def test_rule_strength(sentence, strength):
    assert drift.rule_strength(sentence)[0] == strength


def test_run_drift_folds_each_batch_into_the_summary_before_it():
    calls = []

    def summarise(messages, existing):
        calls.append((len(messages), existing))
        return (existing or "") + f" Batch of {len(messages)}; he never wants equity."

    cycles = drift.run_drift(summarise, lesson3()["drift_run"]["batches"])
    assert [c.batch_tokens for c in cycles] == lesson3()["drift_run"]["published_batch_tokens"]
    assert calls[0] == (4, None) and calls[1][1] == cycles[0].summary and cycles[0].strength == "rule"


def test_a_request_is_shown_message_by_message_and_the_audit_speaks_of_user_messages():
    messages = [{"role": "system", "content": "LONG PROMPT"}, {"role": "user", "content": "Hi there.\nSecond line."}]
    shown = request_text(messages, known={"LONG PROMPT": "the prompt, shown above"}, first_line_over=4)
    assert shown.splitlines() == [f"[1] system ({count_tokens('LONG PROMPT')} tokens): the prompt, shown above",
                                  f"[2] user ({count_tokens(messages[1]['content'])} tokens)", "    Hi there. [...]"]
    head, line = audit_report("He earns ₹1,20,000 and saves ₹30,000.", [{"role": "user", "content": "I earn ₹1,20,000."}]).splitlines()
    assert head.endswith("none of the 1 user messages states: 1") and "'₹30,000'" in line


@pytest.mark.parametrize("function, value, setting", [("prompt", "nope", "prompt"), ("published_run", 5, "lesson"),
                                                      ("summariser_templates", "lesson5", "lesson")])
def test_the_lessons_data_refuses_an_unknown_name_by_naming_the_setting(function, value, setting):
    from helpers.lessons import data

    with pytest.raises(SettingError) as refused:
        getattr(data, function)(value)
    assert (refused.value.setting, refused.value.value) == (setting, value) and isinstance(refused.value, ValueError)
