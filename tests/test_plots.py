"""Charts: titled, labelled, projector-sized; slider charts redraw to the same picture as a fresh one."""
import io

import matplotlib.text
import numpy
import PIL.Image
import pytest

from helpers.display import plots
from helpers.display.attack_chart import attack_chart
from helpers.lessons.data import lesson4
from helpers.measure.attacks import AttackRate
from helpers.memory.budget import analyse_budget, budget_table
from helpers.memory.schedule import summary_schedule

MESSAGES = lesson4()["budget_analysis"]["user_messages"]
BUDGETS = lesson4()["budget_analysis"]["budgets"]


def labelled(fig) -> None:
    """Every axes has a title and both axis labels (a horizontal bar chart may leave its category axis bare)."""
    assert fig.get_figwidth() >= 8, "too small for a projector"
    for ax in fig.axes:
        assert ax.get_title(), "every chart needs a title"
        assert ax.get_xlabel() or ax.get_ylabel()
        sizes = [ax.title.get_fontsize(), ax.xaxis.label.get_fontsize(), ax.yaxis.label.get_fontsize()]
        assert min(sizes) >= 14
        assert all(t.get_fontsize() >= 16 for t in ax.get_xticklabels() + ax.get_yticklabels())


def pixels(data: bytes) -> numpy.ndarray:
    return numpy.asarray(PIL.Image.open(io.BytesIO(data)).convert("RGB"), dtype=int)


def test_schedule_chart():
    fig = plots.ScheduleChart().update(summary_schedule(10, 4, 2))
    labelled(fig)
    assert "4 summariser calls in 10 turns" in fig.axes[0].get_title()
    assert fig.axes[0].get_xlabel() and fig.axes[0].get_ylabel()


def test_budget_bar_chart_is_the_lessons():
    table = budget_table(MESSAGES, BUDGETS)
    fig = plots.overflow_bar_chart([r.max_buffer_tokens for r in table.results], [r.overflows for r in table.results])
    labelled(fig)
    ax = fig.axes[0]
    assert [round(p.get_height()) for p in ax.patches] == [4, 4, 3, 2, 1, 0]
    assert ax.get_xlabel() == "max_buffer_tokens"
    assert ax.get_title() == "Summary buffer memory: overflows per token budget"


def test_budget_chart_two_panels():
    chart = plots.BudgetChart(BUDGETS, 20)
    fig = chart.update(budget_table(MESSAGES, BUDGETS), analyse_budget(MESSAGES, 600))
    labelled(fig)
    assert "budget 600: 3 overflows" in fig.axes[1].get_title()


def test_stacked_and_drift_charts():
    labelled(plots.stacked_token_bars(["1", "2"], {"system prompt": [136, 136], "buffer": [19, 251]},
                                      "Request", "turn", caps=("budget", [600, 600])))
    series = {"run": {"batch_tokens": [82, 71, 66], "summary_tokens": [58, 99, 137], "words": [39, 65, 82],
                      "strength": ["rule", "rule", "preference"]}}
    fig = plots.drift_chart(series)
    labelled(fig)
    assert len(fig.axes) == 3


@pytest.mark.parametrize("make, updates", [
    (lambda blit: plots.ScheduleChart(blit=blit),
     [lambda c: c.update(summary_schedule(10, 4, 2)), lambda c: c.update(summary_schedule(10, 6, 2)),
      lambda c: c.update(summary_schedule(14, 5, 3))]),
    (lambda blit: plots.BudgetChart(BUDGETS, 20, blit=blit),
     [lambda c: c.update(budget_table(MESSAGES, BUDGETS), analyse_budget(MESSAGES, 600)),
      lambda c: c.update(budget_table(MESSAGES, BUDGETS, 150), analyse_budget(MESSAGES, 300, 150)),
      lambda c: c.update(budget_table(MESSAGES, BUDGETS, 100, 2), analyse_budget(MESSAGES, 1500, 100, 2))]),
])
def test_blitted_redraws_match_a_full_redraw(make, updates):
    live, fresh = make(True), make(False)
    for update in updates:
        update(live)
        update(fresh)
        difference = numpy.abs(pixels(live.png()) - pixels(fresh.png()))
        assert difference.mean() < 0.5, "the blitted picture drifted from a full redraw"


# ----- the projector test --------------------------------------------------------------------------
# A 1024x768 projector shows a notebook output about 900 pixels wide; a wider figure is scaled down.
PROJECTOR_CONTENT_WIDTH = 900
MIN_PIXELS = 14  # letters smaller than this on the projected image cannot be read from the back of a room


def every_chart():
    """One figure from every chart helper, as the notebooks and the slider panels make them."""
    from helpers.display.widgets import PANEL_DPI
    from helpers.memory.registry import KINDS
    from helpers.memory.turn_record import TurnRecord
    from helpers.memory.types import MemorySnapshot

    def record(turn, summary_tokens, buffer):
        snapshot = MemorySnapshot(kind="summary buffer memory", turn=turn, summary="s" if summary_tokens else None,
                                  summary_tokens=summary_tokens, pinned_tokens=0,
                                  summary_block_tokens=summary_tokens + 11 if summary_tokens else 0,
                                  system_prompt_tokens=136, verbatim_tokens=buffer, verbatim_messages=3,
                                  request_tokens=0, folds=0, budget=600)
        return TurnRecord(user_message="u", reply="r", request=[], prompt_tokens=None, completion_tokens=None,
                          model="m", finish_reason="stop", snapshot=snapshot)

    records = [record(1, 0, 19), record(2, 0, 251), record(3, 0, 570), record(4, 141, 300), record(5, 148, 420),
               record(6, 180, 412)]
    series = {"run": {"batch_tokens": [82, 71, 66], "summary_tokens": [58, 99, 137], "words": [39, 65, 82],
                      "strength": ["rule", "rule", "preference"]},
              "lesson": {"batch_tokens": [82, 71, 66], "summary_tokens": [60, 101, 140], "words": [40, 70, 96],
                         "strength": ["rule", "preference", "absent"]}}
    yield "schedule chart (slider)", plots.ScheduleChart().update(summary_schedule(10, 4, 2)), PANEL_DPI
    yield "budget bar chart", plots.overflow_bar_chart(BUDGETS, [4, 4, 3, 2, 1, 0]), plots.DISPLAY_DPI
    yield "budget chart (slider)", plots.BudgetChart(BUDGETS, 20).update(
        budget_table(MESSAGES, BUDGETS, 150), analyse_budget(MESSAGES, 300, 150)), PANEL_DPI
    yield "budget chart (cell)", plots.BudgetChart(BUDGETS, 20).update(
        budget_table(MESSAGES, BUDGETS), analyse_budget(MESSAGES, 600)), plots.DISPLAY_DPI
    yield "request chart", plots.request_chart(records, "Tokens in each request", budget=600), plots.DISPLAY_DPI
    yield "drift chart", plots.drift_chart(series), plots.DISPLAY_DPI
    rates = [AttackRate(setting, memory, 33, 31, 31, 20, 24, 0) for setting in
             ("lessons' design", "data placement", "structured input + data prompt", "summary check (refuse)",
              "all of them") for memory in KINDS]
    yield "attack chart (notebook 06)", attack_chart(rates, "Where the payloads land (offline stand-in)"), \
        plots.DISPLAY_DPI


def visible_texts(fig):
    fig.canvas.draw()
    return [t for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()]


@pytest.mark.parametrize("name, fig, dpi", list(every_chart()), ids=lambda v: v if isinstance(v, str) else "")
def test_every_chart_is_readable_on_a_projector(name, fig, dpi):
    axis_label_size_before = 16  # the axis labels' size before this test; tick labels must now reach it
    texts = visible_texts(fig)
    ticks = [t for ax in fig.axes for t in ax.get_xticklabels() + ax.get_yticklabels() if t.get_text()]
    assert ticks and min(t.get_fontsize() for t in ticks) >= axis_label_size_before, name
    small = [t.get_text() for t in texts if t.get_fontsize() < plots.MIN_TEXT_SIZE]
    assert not small, f"{name}: text under {plots.MIN_TEXT_SIZE} pt: {small}"
    scale = min(1.0, PROJECTOR_CONTENT_WIDTH / (fig.get_figwidth() * dpi))
    pixels_high = min(t.get_fontsize() for t in texts) * dpi / 72 * scale
    assert pixels_high >= MIN_PIXELS, f"{name}: letters {pixels_high:.1f} px high at 1024x768"


@pytest.mark.parametrize("name, fig, dpi", list(every_chart()), ids=lambda v: v if isinstance(v, str) else "")
def test_no_text_of_any_chart_is_cut_off_at_the_figure_edge(name, fig, dpi):
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    drawn = fig.get_tightbbox(renderer)  # in inches: everything drawn (ticks outside the view are not)
    tolerance = 0.02
    assert (drawn.x0 >= -tolerance and drawn.y0 >= -tolerance and drawn.x1 <= fig.get_figwidth() + tolerance
            and drawn.y1 <= fig.get_figheight() + tolerance), (
        f"{name}: something is drawn outside the {fig.get_figwidth()}x{fig.get_figheight()} in figure: {drawn}; "
        f"legend entries: {[t.get_text() for legend in fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend()] for t in legend.get_texts()]}")


def test_segment_labels_never_cover_each_other_or_another_bar():
    parts = {"system prompt": [136] * 6, "summary block": [0, 0, 0, 9, 20, 55], "verbatim turns": [19, 145, 288, 434, 583, 473]}
    fig = plots.stacked_token_bars([str(i) for i in range(1, 7)], parts, "t", "turn", size=(11, 5.5))
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    labels = [t for t in ax.texts if t.get_text().strip()]
    assert sorted(int(t.get_text()) for t in labels) == sorted(v for values in parts.values() for v in values if v)
    boxes = [t.get_window_extent(renderer) for t in labels]
    for i, box in enumerate(boxes):
        assert not any(box.overlaps(other) for other in boxes[i + 1:]), f"label {labels[i].get_text()} covers another"
    bars = [p.get_window_extent(renderer) for p in ax.patches]
    for label, box in zip(labels, boxes):
        hosts = [bar for bar in bars if bar.overlaps(box)]
        # a label sits inside exactly one segment (its own), or clear of every bar
        assert len(hosts) <= 1, f"label {label.get_text()} spills onto a neighbouring segment"
        if hosts:
            assert hosts[0].fully_contains(box.x0 + 1, box.y0 + 1) and hosts[0].fully_contains(box.x1 - 1, box.y1 - 1)


def test_request_chart_names_the_heading_and_marks_the_budget():
    records = list(every_chart())[4][1]
    legend = [t.get_text() for t in records.legends[0].get_texts()]
    assert "memory block: summary + 11-token heading" in legend
    assert any("budget 600" in text for text in legend)


def test_budget_chart_shows_what_each_overflow_would_have_reached():
    chart = plots.BudgetChart(BUDGETS, 20)
    chosen = analyse_budget(MESSAGES, 300, 150)
    chart.update(budget_table(MESSAGES, BUDGETS, 150), chosen)
    would = chart.would.get_offsets()
    assert len(would) == chosen.overflows == 9
    assert all(y > 300 for _, y in would)  # every cross is above the budget: the reason for the fold
    assert all(step.buffer_tokens <= 300 for step in chosen.steps)  # while the line after the fold is below it
