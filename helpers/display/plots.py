"""Charts for the lesson notebooks: matplotlib ``Figure``s (not pyplot, so nothing piles up in its registry), sized
for a projector. A ``LiveChart`` (slider charts) moves its artists in place; ``png()`` is what a widget shows."""
from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

import IPython
import matplotlib
import numpy
import PIL.Image
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection
from matplotlib.colors import ListedColormap
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.text import Text

from helpers.memory.budget import BudgetResult, BudgetTable
from helpers.memory.registry import kind_named
from helpers.memory.schedule import Schedule

MIN_TEXT_SIZE = 16  # points: readable on a projector at 1024x768, tick labels included (tests/test_plots.py)
COLOURS = {"system": "#8c8c8c", "summary": "#f28e2b", "verbatim": "#4e79a7", "future": "#f2f2f2",
           "budget": "#9370DB", "highlight": "#e15759", "reference": "#59a14f", "limit": "#e15759"}
DISPLAY_DPI = 100  # figures shown in notebook outputs
# a request's parts in the order they are sent, whatever a kind calls them: system prompt, memory, recent turns
REQUEST_PART_COLOURS = (COLOURS["system"], COLOURS["summary"], COLOURS["verbatim"])
BAR_WIDTH = 0.6  # leaves room beside each bar for the labels of segments too thin to hold them
STRENGTHS = ("absent", "mentioned", "preference", "rule")  # how a summary words the user's rule, weakest first

matplotlib.rcParams.update({"font.size": 16, "axes.titlesize": 18, "axes.labelsize": 17,
                            "xtick.labelsize": MIN_TEXT_SIZE, "ytick.labelsize": MIN_TEXT_SIZE,
                            "legend.fontsize": MIN_TEXT_SIZE})


def new_figure(width: float, height: float, ncols: int = 1, margins: dict | None = None) -> tuple[Figure, list]:
    """A Figure with its Agg canvas and ``ncols`` axes; fixed ``margins`` skip the layout engine (fast redraws)."""
    fig = Figure(figsize=(width, height), layout=None if margins else "constrained")
    FigureCanvasAgg(fig)
    if margins:
        fig.subplots_adjust(**margins)
    axes = fig.subplots(1, ncols, squeeze=False)[0].tolist()
    for ax in axes:
        ax.tick_params(labelsize=MIN_TEXT_SIZE)
    return fig, axes


def png_bytes(fig: Figure, dpi: int = 72) -> bytes:
    """The whole figure as PNG bytes (how notebook outputs show a Figure)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, pil_kwargs={"compress_level": 1})
    return buffer.getvalue()


if IPython.get_ipython() is not None:  # a bare Figure shows as a PNG (its text form stays "<Figure size ...>")
    IPython.get_ipython().display_formatter.formatters["image/png"].for_type(
        Figure, lambda fig: png_bytes(fig, DISPLAY_DPI))


class LiveChart:
    """A chart that sliders redraw in place; with ``blit=True`` the ``animate``d artists are drawn over a background
    saved per ``static_key()`` (which changes whenever axis limits or ticks must be redrawn)."""

    def __init__(self, fig: Figure, blit: bool) -> None:
        self.fig, self.blit = fig, blit
        self.dynamic: list = []
        self._backgrounds: dict[object, object] = {}  # static key -> saved background (a few dozen at most)

    def animate(self, *artists) -> None:
        """Mark artists as the ones that change on every update."""
        self.dynamic.extend(artists)
        for artist in artists:
            artist.set_animated(self.blit)

    def static_key(self) -> object:
        """What the drawn background depends on."""

    def png(self, dpi: int = 72) -> bytes:
        """The current chart as PNG at ``dpi``; with blitting, only the changing artists are redrawn."""
        canvas = self.fig.canvas
        if self.fig.dpi != dpi:
            self.fig.set_dpi(dpi)
            self._backgrounds.clear()
        if not self.blit:
            canvas.draw()
        else:
            key = self.static_key()
            if key in self._backgrounds:
                canvas.restore_region(self._backgrounds[key])
            else:
                canvas.draw()  # everything except the animated artists
                if len(self._backgrounds) >= 32:
                    self._backgrounds.clear()
                self._backgrounds[key] = canvas.copy_from_bbox(self.fig.bbox)
            for artist in self.dynamic:
                self.fig.draw_artist(artist)
        image = PIL.Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
        out = io.BytesIO()
        image.convert("RGB").save(out, format="png", compress_level=1)
        return out.getvalue()


def _ceil_to(value: float, step: int) -> int:
    return max(step, int(-(-value // step) * step))


def _offsets(points: list[tuple[float, float]]) -> list | numpy.ndarray:
    return points or numpy.empty((0, 2))


# ----- lesson 3: the summary schedule --------------------------------------------------------------
class ScheduleChart(LiveChart):
    """Which turns each request sends as summary and which verbatim, and where the summariser runs."""

    LEGEND = [Patch(color=COLOURS["summary"], label="in the summary"),
              Patch(color=COLOURS["verbatim"], label="sent verbatim"),
              Patch(facecolor=COLOURS["future"], edgecolor="#bbbbbb", label="not said yet")]

    def __init__(self, blit: bool = False) -> None:
        fig, (self.ax,) = new_figure(13, 7, margins=dict(left=0.08, right=0.72, bottom=0.11, top=0.92))
        super().__init__(fig, blit)
        cmap = ListedColormap([COLOURS["future"], COLOURS["summary"], COLOURS["verbatim"]])
        self.image = self.ax.imshow([[0]], cmap=cmap, vmin=0, vmax=2, aspect="auto", interpolation="nearest")
        self.marks = self.ax.scatter([], [], marker="*", s=320, color=COLOURS["highlight"], zorder=3,
                                     label="summariser runs\nafter the reply")
        self.ax.set(xlabel="conversation turn (the messages it contains)", ylabel="request sent at turn")
        self.ax.legend(handles=[*self.LEGEND, self.marks], loc="upper left", bbox_to_anchor=(1.02, 1),
                       frameon=False)
        self.animate(self.image, self.marks, self.ax.title)
        self.turns = 0

    def static_key(self) -> object:
        return self.turns

    def update(self, schedule: Schedule) -> Figure:
        """Redraw for ``schedule``; returns the figure."""
        n = self.turns = schedule.total_turns
        self.image.set_data([[2 if turn in row.verbatim_turns else int(turn <= row.summarised_up_to)
                              for turn in range(1, n + 1)] for row in schedule.rows])  # 0 future, 1 summary
        self.image.set_extent((0.5, n + 0.5, n + 0.5, 0.5))
        self.marks.set_offsets(_offsets([(n + 1, row.turn) for row in schedule.rows if row.summariser_called_after]))
        if self.ax.get_xlim() != (0.5, n + 1.5):
            self.ax.set(xlim=(0.5, n + 1.5), ylim=(n + 0.5, 0.5))
            ticks = list(range(1, n + 1, 1 if n <= 15 else 2 if n <= 30 else 5))
            self.ax.set_xticks([*ticks, n + 1], [*map(str, ticks), "★"])
            self.ax.set_yticks(ticks)
        self.ax.set_title(f"Summarise after {schedule.max_turns_before_summary} turns, keep "
                          f"{schedule.turns_to_keep_verbatim} verbatim: {schedule.calls} summariser calls in {n} turns")
        return self.fig


# ----- lesson 4: the token budget --------------------------------------------------------------------
def overflow_bars(ax: Axes, budgets: Sequence[int], overflows: Sequence[int]) -> tuple[BarContainer, list[Text]]:
    """Lesson 4's bars: summariser calls (overflows) per budget, each with its count on top (cell and slider)."""
    bars = ax.bar([str(b) for b in budgets], overflows, color=COLOURS["budget"])
    ax.set_xlabel("max_buffer_tokens")
    return bars, [ax.text(bar.get_x() + bar.get_width() / 2, value, str(value), ha="center", va="bottom",
                          fontsize=MIN_TEXT_SIZE) for bar, value in zip(bars, overflows)]


def overflow_bar_chart(budgets: Sequence[int], overflows: Sequence[int], turns: int = 10) -> Figure:
    """The lesson's bar chart: summariser calls (overflows) per token budget, from two lists."""
    fig, (ax,) = new_figure(10, 5.5)
    overflows = list(overflows)
    overflow_bars(ax, budgets, overflows)
    ax.set(ylabel=f"summariser calls in {turns} turns", yticks=range(0, max(overflows, default=0) + 2),
           title="Summary buffer memory: overflows per token budget")
    return fig


class BudgetChart(LiveChart):
    """Overflows per budget beside one budget's buffer, message by message, with what each overflow would reach."""

    def __init__(self, budgets: Sequence[int], messages: int, blit: bool = False) -> None:
        fig, (self.bar_ax, self.trace_ax) = new_figure(
            13, 6.5, ncols=2, margins=dict(left=0.07, right=0.98, bottom=0.3, top=0.9, wspace=0.28))
        super().__init__(fig, blit)
        self.budgets = list(budgets)
        self.bars, self.bar_texts = overflow_bars(self.bar_ax, self.budgets, [0] * len(self.budgets))
        self.bar_ax.set_ylabel("summariser calls (overflows)")
        self.bar_ax.tick_params(axis="x", labelrotation=45)
        positions = list(range(1, messages + 1))
        trace_ax = self.trace_ax
        (self.trace,) = trace_ax.step(positions, [0] * messages, where="mid", color=COLOURS["verbatim"],
                                      linewidth=3, label="buffer after the message")
        self.limit = trace_ax.axhline(0, color=COLOURS["limit"], linestyle="--", linewidth=2.5, label="budget")
        self.reasons = LineCollection([], colors=COLOURS["highlight"], linestyles=":", linewidths=2)
        trace_ax.add_collection(self.reasons)
        self.would = trace_ax.scatter([], [], marker="X", s=170, color=COLOURS["highlight"], zorder=3,
                                      label="would have reached: overflow")
        self.folds = trace_ax.scatter([], [], marker="v", s=180, color=COLOURS["summary"], zorder=3,
                                      label="after folding the oldest turns")
        trace_ax.set_xticks(positions[::2], [str(i // 2 + 1) for i in range(0, messages, 2)])
        trace_ax.set(xlim=(0.5, messages + 0.5), xlabel="turn (user message, then reply)",
                     ylabel="tokens in the buffer")
        self.fig.legend(handles=[self.trace, self.limit, self.would, self.folds], loc="lower center", ncols=2,
                        frameon=False, bbox_to_anchor=(0.55, 0.0))
        self.animate(*self.bars, *self.bar_texts, self.bar_ax.title, self.trace, self.limit, self.reasons,
                     self.would, self.folds, trace_ax.title)

    def static_key(self) -> object:
        return self.bar_ax.get_ylim(), self.trace_ax.get_ylim()

    def update(self, table: BudgetTable, chosen: BudgetResult) -> Figure:
        """Redraw for the lesson's budgets in ``table`` and the slider's budget in ``chosen``."""
        overflows = [r.overflows for r in table.results]
        for bar, text, budget, value in zip(self.bars, self.bar_texts, self.budgets, overflows):
            bar.set(height=value, color=COLOURS["highlight" if budget == chosen.max_buffer_tokens else "budget"])
            text.set(y=value, text=str(value))
        self.bar_ax.set_ylim(0, _ceil_to(max(overflows, default=0) + 1, 5))
        self.bar_ax.set_title(f"replies {chosen.reply_tokens} tokens, compress {chosen.messages_to_compress}")
        sizes = [step.buffer_tokens for step in chosen.steps]
        self.trace.set_ydata(sizes)
        self.limit.set_ydata([chosen.max_buffer_tokens] * 2)
        folded = [(i, step) for i, step in enumerate(chosen.steps, start=1) if step.overflow]
        self.folds.set_offsets(_offsets([(i, step.buffer_tokens) for i, step in folded]))
        self.would.set_offsets(_offsets([(i, step.would_reach) for i, step in folded]))
        self.reasons.set_segments([[(i, step.would_reach), (i, step.buffer_tokens)] for i, step in folded])
        highest = max([chosen.max_buffer_tokens, *sizes, *(step.would_reach for _, step in folded)])
        self.trace_ax.set_ylim(0, _ceil_to(highest * 1.12, 250))
        self.trace_ax.set_title(f"budget {chosen.max_buffer_tokens}: {chosen.overflows} overflows, "
                                f"largest {chosen.peak_buffer_tokens}")
        return self.fig


# ----- what a request is made of ----------------------------------------------------------------------
def _label_segments(fig: Figure, ax: Axes, segments: Sequence[tuple]) -> None:
    """Each (patch, value) segment's value inside it if it fits, else right of the bar, moved up clear of the rest."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    placed: list = []
    boxes = [patch.get_window_extent(renderer) for patch, _ in segments]
    for index, (patch, value) in enumerate(segments):
        if not value:
            continue
        x, y = patch.get_x() + patch.get_width() / 2, patch.get_y() + patch.get_height() / 2
        label = ax.text(x, y, str(value), ha="center", va="center", fontsize=MIN_TEXT_SIZE, color="white")
        box, inside = label.get_window_extent(renderer), boxes[index]
        if box.width + 4 <= inside.width and box.height + 2 <= inside.height and not _overlaps(box, placed):
            placed.append(box)
            continue
        label.set(color="#222222", position=(patch.get_x() + patch.get_width(), y), ha="left", text=" " + str(value))
        avoid = placed + boxes[:index] + boxes[index + 1:]
        for _ in range(30):
            box = label.get_window_extent(renderer)
            if not _overlaps(box, avoid):
                break
            px, py = ax.transData.transform(label.get_position())
            label.set_position(ax.transData.inverted().transform((px, py + box.height * 0.5)))
        placed.append(label.get_window_extent(renderer))


def _overlaps(box, others) -> bool:
    return any(box.overlaps(other) for other in others)


def stacked_token_bars(labels: Sequence[str], parts: Mapping[str, Sequence[int]], title: str, xlabel: str,
                       size: tuple[float, float] = (11, 5.5), legend_names: Mapping[str, str] | None = None,
                       caps: tuple[str, Sequence[int]] | None = None) -> Figure:
    """Tokens in each request stacked by part (label -> values, in order, coloured by ``REQUEST_PART_COLOURS``);
    ``caps`` = (label, heights) marks a ceiling over each bar, ``legend_names`` renames parts in the legend."""
    fig, (ax,) = new_figure(*size)
    base = [0] * len(labels)
    segments = []
    for (name, values), colour in zip(parts.items(), REQUEST_PART_COLOURS):
        bars = ax.bar(labels, values, BAR_WIDTH, color=colour, label=(legend_names or {}).get(name, name), bottom=base)
        segments += list(zip(bars.patches, values))
        base = [b + v for b, v in zip(base, values)]
    ax.set(xlabel=xlabel, ylabel="tokens (o200k_base)", title=title)
    if caps is not None:
        positions = range(len(labels))
        ax.hlines(caps[1], [p - BAR_WIDTH / 2 for p in positions], [p + BAR_WIDTH / 2 for p in positions],
                  color=COLOURS["limit"], linestyle="--", linewidth=2.5, label=caps[0])
        ax.set_ylim(0, max([*caps[1], *base]) * 1.08)
    legend = fig.legend(loc="outside lower center", ncols=2, frameon=False)  # below: the bars get the whole width
    if legend.get_window_extent(fig.canvas.get_renderer()).width > fig.bbox.width:
        legend.remove()  # long entries side by side would run off the figure: one under another
        fig.legend(loc="outside lower center", ncols=1, frameon=False)
    _label_segments(fig, ax, segments)
    return fig


def request_chart(records: Sequence, title: str, budget: int | None = None) -> Figure:
    """What each turn's request was made of (``TurnRecord``s), its parts named as their kind names them, the memory
    part as sent (heading, pinned rules); with a budget (``budget`` or the records') a ceiling over each bar."""
    kind = kind_named(records[0].kind).KIND
    shots = [r.snapshot for r in records]
    headings = {s.summary_block_tokens - s.summary_tokens for s in shots if s.summary_tokens}
    names = {}
    if len(headings) == 1 and not any(s.pinned_tokens for s in shots):
        names[kind.block_label] = f"{kind.block_label}: summary + {headings.pop()}-token heading"
    budget = budget if budget is not None else shots[0].budget
    caps = None if budget is None else (f"ceiling: system prompt + memory + budget {budget}", [
        s.system_prompt_tokens + s.pinned_tokens + s.summary_block_tokens + budget for s in shots])
    return stacked_token_bars([str(s.turn) for s in shots],
                              {"system prompt": [s.system_prompt_tokens for s in shots],
                               kind.block_label: [s.pinned_tokens + s.summary_block_tokens for s in shots],
                               kind.recent_label: [s.verbatim_tokens for s in shots]},
                              title, "turn", legend_names=names, caps=caps,
                              size=(11, 6.5) if budget is not None else (11, 5.5))  # room for a longer legend


# ----- lesson 3: drift over summary cycles -----------------------------------------------------------
def drift_chart(series: Mapping[str, Mapping[str, Sequence]], word_limit: int = 80) -> Figure:
    """Per cycle and run (label -> ``drift.chart_series``): summary tokens, words against the limit, the rule's hold."""
    runs = list(series.items())
    fig = Figure(figsize=(14, 10.5), layout="constrained")  # the rule panel below, full width: 14 in wide
    FigureCanvasAgg(fig)
    grid = fig.add_gridspec(2, 2, height_ratios=[1.15, 1])
    tok_ax, word_ax, rule_ax = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1]), fig.add_subplot(grid[1, :])
    cycles = len(runs[0][1]["summary_tokens"])
    width = 0.8 / (len(runs) + 1)
    xs = list(range(1, cycles + 1))
    palette = [COLOURS["reference"], COLOURS["verbatim"], COLOURS["summary"], COLOURS["budget"]]
    tok_ax.bar([x - 0.4 + width / 2 for x in xs], runs[0][1]["batch_tokens"], width, color=COLOURS["system"],
               label="batch folded in")
    for k, (label, data) in enumerate(runs, start=1):
        style = {"marker": "os^D"[(k - 1) % 4], "markersize": 15 - 2 * k, "linewidth": 2.5,
                 "linestyle": ["-", "--", ":", "-."][(k - 1) % 4], "color": palette[(k - 1) % 4]}
        shift = -0.4 + width / 2 + k * width
        tok_ax.bar([x + shift for x in xs], data["summary_tokens"], width, color=palette[(k - 1) % 4],
                   label=f"summary: {label}")
        word_ax.plot(xs, data["words"], label=label, **style)
        offset = (k - (len(runs) + 1) / 2) * 0.08  # runs on the same level stay visible side by side
        rule_ax.plot(xs, [STRENGTHS.index(s) + offset for s in data["strength"]], label=label, **style)
    word_ax.axhline(word_limit, color=COLOURS["limit"], linestyle="--", linewidth=2,
                    label=f"{word_limit}-word limit")
    rule_ax.set_yticks(range(len(STRENGTHS)), list(STRENGTHS))
    rule_ax.set_ylim(-0.5, len(STRENGTHS) - 0.2)
    rule_ax.axhspan(2.5, len(STRENGTHS) - 0.2, color=COLOURS["reference"], alpha=0.08)
    for ax, ylabel, title in [(tok_ax, "tokens (o200k_base)", "Summary size per cycle"),
                              (word_ax, "words in the summary", "Words against the prompt's limit"),
                              (rule_ax, "", "How the equity rule reads")]:
        ax.tick_params(labelsize=MIN_TEXT_SIZE)
        ax.set_xticks(xs, [str(x) for x in xs])
        ax.set(xlabel="summary cycle", ylabel=ylabel, title=title)
    tok_ax.legend(loc="upper left", frameon=False, fontsize=MIN_TEXT_SIZE)
    word_ax.legend(loc="lower right", frameon=True, framealpha=0.9, fontsize=MIN_TEXT_SIZE)
    rule_ax.legend(loc="lower left", frameon=True, framealpha=0.9, fontsize=MIN_TEXT_SIZE)
    rule_ax.set_xlim(0.7, cycles + 0.3)
    word_ax.set_ylim(0, max([word_limit, *(w for _, d in runs for w in d["words"])]) * 1.35)
    tok_ax.set_ylim(0, max(v for _, d in runs for key in ("batch_tokens", "summary_tokens") for v in d[key]) * 1.6)
    return fig


# ----- lesson 4: the flowchart, its four steps numbered like the page's list -----------------------------
FLOW_BOXES = (  # (key, text, x, y, colour) in a 14 x 7 drawing area
    ("message", "user message", 1.1, 5.6, "#ffffff"),
    ("buffer", "buffer: recent messages,\nword for word,\nwithin max_buffer_tokens", 5.0, 5.6, COLOURS["verbatim"]),
    ("summariser", "summariser LLM:\none call merges them\ninto the old summary", 9.3, 5.6, "#ffffff"),
    ("summary", "running summary", 12.5, 3.6, COLOURS["summary"]),
    ("prompt", "prompt: system prompt,\nthen the summary,\nthen the buffer", 7.4, 1.4, "#ffffff"),
    ("model", "LLM (FinCoach)", 2.2, 1.4, "#ffffff"),
)
FLOW_ARROWS = (  # (from, to, label, where the label goes as (x, y))
    ("message", "buffer", "1 appended", (2.45, 5.05)),
    ("buffer", "summariser", "2 would pass the\nbudget: the oldest\nturns leave", (7.15, 6.7)),
    ("summariser", "summary", "3 new summary", (12.4, 4.95)),
    ("summary", "prompt", "", None),
    ("buffer", "prompt", "4 assembled", (6.95, 3.5)),
    ("prompt", "model", "request", (4.8, 1.95)),
    ("model", "buffer", "reply appended", (2.4, 3.6)),
)
FLOWCHART_TITLE = "Summary buffer memory: one message, four steps"


def summary_buffer_flowchart() -> Figure:
    """The lesson's flowchart as a Figure (boxes for the regions and calls, numbered arrows for the steps)."""
    fig, (ax,) = new_figure(14, 7)
    ax.set(xlim=(0, 14), ylim=(0, 7.4))
    ax.axis("off")
    boxes: dict[str, Text] = {}
    for key, text, x, y, colour in FLOW_BOXES:
        boxes[key] = ax.text(x, y, text, ha="center", va="center", fontsize=MIN_TEXT_SIZE,
                             color="#222222" if colour == "#ffffff" else "white",
                             bbox={"boxstyle": "round,pad=0.6", "facecolor": colour, "edgecolor": "#444444",
                                   "linewidth": 2})
    for start, end, label, where in FLOW_ARROWS:
        ax.annotate("", xy=(0.5, 0.5), xycoords=boxes[end], xytext=(0.5, 0.5), textcoords=boxes[start],
                    arrowprops={"arrowstyle": "-|>", "linewidth": 2.5, "color": "#444444", "mutation_scale": 25,
                                "shrinkA": 0, "shrinkB": 0, "patchA": boxes[start].get_bbox_patch(),
                                "patchB": boxes[end].get_bbox_patch()})
        if label:
            ax.text(*where, label, ha="center", va="center", fontsize=MIN_TEXT_SIZE, color="#222222")
    ax.set_title(FLOWCHART_TITLE)
    return fig
