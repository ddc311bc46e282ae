"""Charts: titled, labelled, projector-sized; slider charts redraw to the same picture as a fresh one."""
import io

import numpy
import PIL.Image
import pytest

from helpers.display import plots
from helpers.lessons.data import lesson4
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
        assert all(t.get_fontsize() >= 12 for t in ax.get_xticklabels() + ax.get_yticklabels())


def pixels(data: bytes) -> numpy.ndarray:
    return numpy.asarray(PIL.Image.open(io.BytesIO(data)).convert("RGB"), dtype=int)


def test_schedule_chart():
    fig = plots.schedule_chart(summary_schedule(10, 4, 2))
    labelled(fig)
    assert "4 summariser calls in 10 turns" in fig.axes[0].get_title()
    assert fig.axes[0].get_xlabel() and fig.axes[0].get_ylabel()


def test_budget_bar_chart_is_the_lessons():
    fig = plots.budget_bar_chart(budget_table(MESSAGES, BUDGETS))
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
                                      "Request", "turn", limit=("budget", 600)))
    series = {"run": {"batch_tokens": [82, 71, 66], "summary_tokens": [58, 99, 137], "words": [39, 65, 82]}}
    fig = plots.drift_chart(series)
    labelled(fig)
    assert len(fig.axes) == 2


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
