"""Slider panels: sliders, a text readout and a chart from ``render_*(...) -> (text, figure)``, the function a
notebook's fixed-value cell calls; each panel also prints its starting figures, for front ends without widgets."""
from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets
from matplotlib.figure import Figure

from helpers.display.lines import budget_table_text, schedule_text
from helpers.display.plots import BudgetChart, ScheduleChart, png_bytes
from helpers.lessons.data import lesson4
from helpers.memory.budget import analyse_budget, budget_table
from helpers.memory.schedule import summary_schedule

PANEL_DPI = 72  # PNG resolution of slider charts: sharp enough, and quick to redraw
_MESSAGES, _BUDGETS = lesson4()["budget_analysis"]["user_messages"], lesson4()["budget_analysis"]["budgets"]


def render_schedule(threshold: int = 4, keep: int = 2, turns: int = 10,
                    chart: ScheduleChart | None = None) -> tuple[str, Figure]:
    """Lesson 3's schedule for one setting: its lines, how many verbatim turns the last request holds, the chart."""
    schedule = summary_schedule(turns, threshold, keep)
    held = len(schedule.rows[-1].verbatim_turns)
    text = f"{schedule_text(schedule)}\n request at turn {turns} holds {held} verbatim turns"
    return text, (chart or ScheduleChart()).update(schedule)


def render_budget(budget: int = 600, reply_tokens: int = 100, compress: int = 4,
                  chart: BudgetChart | None = None) -> tuple[str, Figure]:
    """Lesson 4's budget table for one reply length and compression, and the buffer for one budget."""
    table = budget_table(_MESSAGES, _BUDGETS, reply_tokens, compress)
    chosen = analyse_budget(_MESSAGES, budget, reply_tokens, compress)
    text = (f"Replies of {reply_tokens} tokens, {compress} messages compressed per overflow, {len(_MESSAGES)} turns:\n"
            f"{budget_table_text(table)}\nbudget {budget}: overflows: {chosen.overflows}, "
            f"largest buffer: {chosen.peak_buffer_tokens} tokens")
    if chosen.peak_buffer_tokens > budget:
        text += " (over the budget: a turn bigger than the whole budget is kept until the next overflow)"
    return text, (chart or BudgetChart(_BUDGETS, 2 * len(_MESSAGES))).update(table, chosen)


def slider(description: str, value: int, low: int, high: int, step: int = 1, continuous: bool = True,
           width: str = "340px") -> widgets.IntSlider:
    """An integer slider with its whole description shown."""
    return widgets.IntSlider(value=value, min=low, max=high, step=step, description=description,
                             continuous_update=continuous, style={"description_width": "initial"},
                             layout=widgets.Layout(width=width))


class SliderPanel(widgets.VBox):
    """Sliders (in ``rows`` rows), a ``<pre>`` readout and a chart image, redrawn whenever a slider moves."""

    def __init__(self, sliders: dict[str, widgets.IntSlider], render: Callable[..., tuple[str, Figure]],
                 chart: Any, rows: int = 1, image_height: str | None = "auto") -> None:
        super().__init__()
        self.sliders, self._render, self._chart = sliders, render, chart
        self.readout = widgets.HTML()
        self.image = widgets.Image(format="png", layout=widgets.Layout(max_width="100%", height=image_height))
        row = -(-len(sliders) // rows)
        boxes = [widgets.HBox(list(sliders.values())[i:i + row]) for i in range(0, len(sliders), row)]
        self.children = [*boxes, self.readout, self.image]
        for one in sliders.values():
            one.observe(self.refresh, names="value")
        self.refresh()

    def constrain(self) -> None:  # adjust limits that depend on other sliders
        pass

    def refresh(self, _change: dict | None = None) -> None:
        """Recompute and redraw for the sliders' current values; ``text`` is the readout as plain text."""
        self.constrain()  # may clamp another slider, whose own change then refreshes first
        self.text, _ = self._render(**{name: one.value for name, one in self.sliders.items()}, chart=self._chart)
        self.readout.value = f"<pre>{html.escape(self.text)}</pre>"
        self.image.value = png_bytes(self._chart.fig, PANEL_DPI)


class SchedulePanel(SliderPanel):
    """Lesson 3's schedule: threshold, turns kept verbatim and the number of turns."""

    def constrain(self) -> None:
        self.sliders["keep"].max = self.sliders["threshold"].value - 1  # keep < threshold; ipywidgets clamps keep


def schedule_panel(threshold: int = 4, keep: int = 2, turns: int = 10) -> SchedulePanel:
    """Sliders "threshold", "keep verbatim", "turns"; readout ends "summariser calls in N turns: C"."""
    sliders = {"threshold": slider("threshold", threshold, 2, 12),
               "keep": slider("keep verbatim", keep, 1, threshold - 1), "turns": slider("turns", turns, 1, 30)}
    panel = SchedulePanel(sliders, render_schedule, ScheduleChart())
    lines = panel.text.splitlines()
    print(lines[0], *lines[-2:], sep="\n")  # the figures, as text (the rows are the schedule printed above)
    return panel


def budget_panel(budget: int = 600, reply_tokens: int = 100, compress: int = 4) -> SliderPanel:
    """Sliders "budget", "reply tokens", "compress"; readout: the table and "budget B: overflows: N"."""
    sliders = {"budget": slider("budget", budget, 100, 2000, 50),
               "reply_tokens": slider("reply tokens", reply_tokens, 10, 300, 10),
               "compress": slider("compress", compress, 2, 10, 2)}
    panel = SliderPanel(sliders, render_budget, BudgetChart(_BUDGETS, 2 * len(_MESSAGES)))
    print(panel.text)  # the figures, as text, for a front end that cannot draw widgets
    return panel
