"""Charts for the lesson notebooks: matplotlib ``Figure``s (not pyplot, so nothing piles up in its registry), sized
for a projector. The slider charts (``ScheduleChart``, ``BudgetChart``) move their artists in place on ``update``."""
from __future__ import annotations

import io
from collections.abc import Sequence

import IPython
import matplotlib
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from helpers.memory.budget import BudgetResult, BudgetTable
from helpers.memory.registry import kind_named
from helpers.memory.schedule import Schedule

MIN_TEXT_SIZE = 16  # points: readable on a projector at 1024x768, tick labels included
COLOURS = {"system": "#8c8c8c", "summary": "#f28e2b", "verbatim": "#4e79a7", "future": "#f2f2f2",
           "budget": "#9370DB", "highlight": "#e15759", "reference": "#59a14f", "limit": "#e15759"}
DISPLAY_DPI = 100  # figures shown in notebook outputs
matplotlib.rcParams.update({"font.size": 16, "axes.titlesize": 18, "axes.labelsize": 17, "legend.fontsize": 16,
                            "xtick.labelsize": MIN_TEXT_SIZE, "ytick.labelsize": MIN_TEXT_SIZE})


def new_figure(width: float, height: float, ncols: int = 1, margins: dict | None = None, nrows: int = 1,
               sharex: bool = False) -> tuple[Figure, list]:
    """A Figure with its Agg canvas and axes, row by row; fixed ``margins`` skip the layout engine (fast redraws)."""
    fig = Figure(figsize=(width, height), layout=None if margins else "constrained")
    FigureCanvasAgg(fig)
    if margins:
        fig.subplots_adjust(**margins)
    return fig, fig.subplots(nrows, ncols, squeeze=False, sharex=sharex).ravel().tolist()


def png_bytes(fig: Figure, dpi: int = 72) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, pil_kwargs={"compress_level": 1})
    return buffer.getvalue()


if IPython.get_ipython() is not None:  # a bare Figure shows as a PNG (its text form stays "<Figure size ...>")
    IPython.get_ipython().display_formatter.formatters["image/png"].for_type(
        Figure, lambda fig: png_bytes(fig, DISPLAY_DPI))


def _points(points: list[tuple[float, float]]) -> list:
    return points or [(float("nan"), float("nan"))]


class ScheduleChart:
    """Which turns each request sends as summary and which verbatim, and after which replies the summariser runs."""

    def __init__(self) -> None:
        self.fig, (self.ax,) = new_figure(13, 7, margins=dict(left=0.08, right=0.72, bottom=0.11, top=0.92))
        cmap = ListedColormap([COLOURS["future"], COLOURS["summary"], COLOURS["verbatim"]])
        self.image = self.ax.imshow([[0]], cmap=cmap, vmin=0, vmax=2, aspect="auto", interpolation="nearest")
        self.marks = self.ax.scatter([], [], marker="*", s=320, color=COLOURS["highlight"], zorder=3,
                                     label="summariser runs\nafter the reply")
        self.ax.set(xlabel="conversation turn (the messages it contains)", ylabel="request sent at turn")
        legend = [Patch(color=COLOURS["summary"], label="in the summary"),
                  Patch(color=COLOURS["verbatim"], label="sent verbatim"),
                  Patch(facecolor=COLOURS["future"], edgecolor="#bbbbbb", label="not said yet"), self.marks]
        self.ax.legend(handles=legend, loc="upper left", bbox_to_anchor=(1.02, 1), frameon=False)

    def update(self, schedule: Schedule) -> Figure:
        """Redraw for ``schedule``; returns the figure."""
        n = schedule.total_turns
        self.image.set_data([[2 if turn in row.verbatim_turns else int(turn <= row.summarised_up_to)
                              for turn in range(1, n + 1)] for row in schedule.rows])  # 0 future, 1 summary
        self.image.set_extent((0.5, n + 0.5, n + 0.5, 0.5))
        self.marks.set_offsets(_points([(n + 1, row.turn) for row in schedule.rows if row.summariser_called_after]))
        ticks = list(range(1, n + 1, 1 if n <= 15 else 2 if n <= 30 else 5))
        self.ax.set(xlim=(0.5, n + 1.5), ylim=(n + 0.5, 0.5), yticks=ticks)
        self.ax.set_xticks([*ticks, n + 1], [*map(str, ticks), "★"])
        calls = f"{schedule.calls} summariser call{'' if schedule.calls == 1 else 's'}"
        self.ax.set_title(f"Summarise after {schedule.max_turns_before_summary} turns, keep "
                          f"{schedule.turns_to_keep_verbatim} verbatim: {calls} in {n} turn{'' if n == 1 else 's'}")
        return self.fig


def overflow_bars(ax: Axes, budgets: Sequence[int], overflows: Sequence[int]) -> tuple:
    """Lesson 4's bars: summariser calls (overflows) per budget, each with its count on top (cell and slider)."""
    bars = ax.bar([str(b) for b in budgets], overflows, color=COLOURS["budget"])
    ax.set_xlabel("max_buffer_tokens")
    return bars, [ax.text(bar.get_x() + bar.get_width() / 2, value, str(value), ha="center", va="bottom")
                  for bar, value in zip(bars, overflows)]


def overflow_bar_chart(budgets: Sequence[int], overflows: Sequence[int], turns: int = 10) -> Figure:
    """The lesson's bar chart: summariser calls (overflows) per token budget, from two lists."""
    fig, (ax,) = new_figure(10, 5.5)
    overflow_bars(ax, budgets, list(overflows))
    ax.set(ylabel=f"summariser calls in {turns} turns", yticks=range(0, max(overflows, default=0) + 2),
           title="Summary buffer memory: overflows per token budget")
    return fig


class BudgetChart:
    """Overflows per budget beside one budget's buffer, message by message, with what each overflow would reach."""

    def __init__(self, budgets: Sequence[int], messages: int) -> None:
        self.fig, (self.bar_ax, ax) = new_figure(13, 6.5, ncols=2,
                                                 margins=dict(left=0.07, right=0.98, bottom=0.3, top=0.9, wspace=0.28))
        self.trace_ax, self.budgets = ax, list(budgets)
        self.bars, self.bar_texts = overflow_bars(self.bar_ax, self.budgets, [0] * len(self.budgets))
        self.bar_ax.set_ylabel("summariser calls (overflows)")
        self.bar_ax.tick_params(axis="x", labelrotation=45)
        (self.trace,) = ax.step(range(1, messages + 1), [0] * messages, where="mid", color=COLOURS["verbatim"],
                                linewidth=3, label="buffer after the message")
        self.limit = ax.axhline(0, color=COLOURS["limit"], linestyle="--", linewidth=2.5, label="budget")
        self.would = ax.scatter([], [], marker="X", s=170, color=COLOURS["highlight"], zorder=3,
                                label="would have reached: overflow")
        self.folds = ax.scatter([], [], marker="v", s=180, color=COLOURS["summary"], zorder=3,
                                label="after folding the oldest turns")
        ax.set_xticks(range(1, messages + 1, 2), [str(i // 2 + 1) for i in range(0, messages, 2)])
        ax.set(xlim=(0.5, messages + 0.5), xlabel="turn (user message, then reply)", ylabel="tokens in the buffer")
        self.fig.legend(handles=[self.trace, self.limit, self.would, self.folds], loc="lower center", ncols=2,
                        frameon=False, bbox_to_anchor=(0.55, 0.0))

    def update(self, table: BudgetTable, chosen: BudgetResult) -> Figure:
        """Redraw for the lesson's budgets in ``table`` and the slider's budget in ``chosen``."""
        overflows = [r.overflows for r in table.results]
        for bar, text, budget, value in zip(self.bars, self.bar_texts, self.budgets, overflows):
            bar.set(height=value, color=COLOURS["highlight" if budget == chosen.max_buffer_tokens else "budget"])
            text.set(y=value, text=str(value))
        self.bar_ax.set_ylim(0, max(5, -(-(max(overflows, default=0) + 1) // 5) * 5))
        self.bar_ax.set_title(f"replies {chosen.reply_tokens} tokens, compress {chosen.messages_to_compress}")
        sizes = [step.buffer_tokens for step in chosen.steps]
        folded = [(i, step) for i, step in enumerate(chosen.steps, start=1) if step.overflow]
        self.trace.set_ydata(sizes)
        self.limit.set_ydata([chosen.max_buffer_tokens] * 2)
        self.folds.set_offsets(_points([(i, step.buffer_tokens) for i, step in folded]))
        self.would.set_offsets(_points([(i, step.would_reach) for i, step in folded]))
        highest = max([chosen.max_buffer_tokens, *sizes, *(step.would_reach for _, step in folded)])
        self.trace_ax.set_ylim(0, max(250, -(-highest * 1.12 // 250) * 250))
        self.trace_ax.set_title(f"budget {chosen.max_buffer_tokens}: {chosen.overflows} overflows, "
                                f"largest {chosen.peak_buffer_tokens}")
        return self.fig


def request_chart(records: Sequence, title: str, budget: int | None = None) -> Figure:
    """What each turn's request (``TurnRecord``s) was made of, stacked in the order sent; with a budget, a ceiling."""
    kind = kind_named(records[0].kind).KIND
    shots = [r.snapshot for r in records]
    headings = {s.summary_block_tokens - s.summary_tokens for s in shots if s.summary_tokens}
    block = kind.block_label
    if len(headings) == 1 and not any(s.pinned_tokens for s in shots):
        block = f"{kind.block_label}: summary + {headings.pop()}-token heading"
    parts = {"system prompt": [s.system_prompt_tokens for s in shots],
             block: [s.pinned_tokens + s.summary_block_tokens for s in shots],
             kind.recent_label: [s.verbatim_tokens for s in shots]}
    budget = budget if budget is not None else shots[0].budget
    fig, (ax,) = new_figure(11, 5.5 if budget is None else 6.5)
    labels, base = [str(s.turn) for s in shots], [0] * len(shots)
    top = max(map(sum, zip(*parts.values())))
    for (name, values), colour in zip(parts.items(), (COLOURS["system"], COLOURS["summary"], COLOURS["verbatim"])):
        bars = ax.bar(labels, values, 0.6, color=colour, label=name, bottom=base)
        ax.bar_label(bars, [str(value) if value >= top * 0.09 else "" for value in values],  # room for a line of text
                     label_type="center", color="white")
        base = [b + v for b, v in zip(base, values)]
    ax.set(xlabel="turn", ylabel="tokens (o200k_base)", title=title)
    if budget is not None:
        caps = [s.system_prompt_tokens + s.pinned_tokens + s.summary_block_tokens + budget for s in shots]
        ax.hlines(caps, [p - 0.3 for p in range(len(labels))], [p + 0.3 for p in range(len(labels))],
                  color=COLOURS["limit"], linestyle="--", linewidth=2.5,
                  label=f"ceiling: system prompt + memory + budget {budget}")
        ax.set_ylim(0, max([*caps, *base]) * 1.08)
    fig.legend(loc="outside lower center", ncols=1, frameon=False)
    return fig


FLOW_BOXES = (  # (key, text, x, y, colour) in a 14 x 7 drawing area
    ("message", "user message", 1.1, 5.6, "#ffffff"),
    ("buffer", "buffer: recent messages,\nword for word,\nwithin max_buffer_tokens", 5.0, 5.6, COLOURS["verbatim"]),
    ("summariser", "summariser LLM:\none call merges them\ninto the old summary", 9.3, 5.6, "#ffffff"),
    ("summary", "running summary", 12.5, 3.6, COLOURS["summary"]),
    ("prompt", "prompt: system prompt,\nthen the summary,\nthen the buffer", 7.4, 1.4, "#ffffff"),
    ("model", "LLM (FinCoach)", 2.2, 1.4, "#ffffff"),
)
FLOW_ARROWS = (  # (from, to, label, where the label goes)
    ("message", "buffer", "1 appended", (2.45, 5.05)),
    ("buffer", "summariser", "2 would pass the\nbudget: the oldest\nturns leave", (7.15, 6.7)),
    ("summariser", "summary", "3 new summary", (12.4, 4.95)),
    ("summary", "prompt", "", None),
    ("buffer", "prompt", "4 assembled", (6.95, 3.5)),
    ("prompt", "model", "request", (4.8, 1.95)),
    ("model", "buffer", "reply appended", (2.4, 3.6)),
)


def summary_buffer_flowchart() -> Figure:
    """The lesson's flowchart as a Figure (boxes for the regions and calls, numbered arrows for the steps)."""
    fig, (ax,) = new_figure(14, 7)
    ax.set(xlim=(0, 14), ylim=(0, 7.4), title="Summary buffer memory: one message, four steps")
    ax.axis("off")
    boxes = {key: ax.text(x, y, text, ha="center", va="center", color="#222222" if colour == "#ffffff" else "white",
                          bbox={"boxstyle": "round,pad=0.6", "facecolor": colour, "edgecolor": "#444444",
                                "linewidth": 2})
             for key, text, x, y, colour in FLOW_BOXES}
    for start, end, label, where in FLOW_ARROWS:
        ax.annotate("", xy=(0.5, 0.5), xycoords=boxes[end], xytext=(0.5, 0.5), textcoords=boxes[start],
                    arrowprops={"arrowstyle": "-|>", "linewidth": 2.5, "color": "#444444", "mutation_scale": 25,
                                "patchA": boxes[start].get_bbox_patch(), "patchB": boxes[end].get_bbox_patch()})
        if label:
            ax.text(*where, label, ha="center", va="center", color="#222222")
    return fig
