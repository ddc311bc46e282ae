"""Notebook 07's table, pictures and slider panel, all read from the same measured ``StrategyRun``s, so they agree."""
import functools
from collections.abc import Mapping, Sequence
from itertools import accumulate
from typing import Any

from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from helpers.display.plots import COLOURS, new_figure
from helpers.display.widgets import SliderPanel, slider
from helpers.measure.ledger import STATUSES, Ledger
from helpers.measure.transcript import FULL_BUFFER, MemoryFactory, StrategyRun, Transcript, replay

STATUS_COLOURS = {**dict(zip(STATUSES, (COLOURS["verbatim"], COLOURS["summary"], "#f6cf9f", COLOURS["highlight"],
                                        "#d9d9d9"))), "not said yet": "white"}


def comparison_table(runs: Mapping[str, StrategyRun]) -> str:
    """Per strategy: request and summariser tokens, total (x the full buffer's), facts kept, what should not be sent."""
    full = runs.get(FULL_BUFFER) or next(iter(runs.values()))
    rows = [("strategy (settings)", "requests", "calls", "summariser in+out", "total", "x full", "facts kept",
             "sent that should not be")]
    for run in runs.values():
        bill, (kept, wanted) = run.bill, run.kept()
        sent, wrote = sum(call.prompt_tokens for call in bill.calls), sum(call.output_tokens for call in bill.calls)
        rows.append((run.label(), f"{bill.request_tokens:,}", str(bill.summariser_calls), f"{sent:,}+{wrote:,}",
                     f"{bill.total:,}", f"{bill.total / full.bill.total:.2f}", f"{kept}/{wanted}",
                     ", ".join(run.leaks()) or "-"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(width) if i in (0, 7) else cell.rjust(width)
                               for i, (cell, width) in enumerate(zip(row, widths))).rstrip() for row in rows)


def ledger_chart(runs: Mapping[str, StrategyRun], fact_ids: Sequence[str], title: str = "") -> Figure:
    """One panel per fact: how every strategy's request (a row) carried it at every turn, a black line at "forget"."""
    fig, axes = new_figure(15, 1.2 + 1.9 * len(fact_ids), nrows=len(fact_ids), sharex=True)
    first, names = next(iter(runs.values())), list(STATUS_COLOURS)
    for ax, fact in zip(axes, map(first.ledger.fact, fact_ids)):
        trails = [[turn.statuses.get(fact.id, "not said yet") for turn in run.turns] for run in runs.values()]
        ax.imshow([[names.index(status) for status in trail] for trail in trails], aspect="auto", vmin=0,
                  vmax=len(names) - 1, cmap=ListedColormap(list(STATUS_COLOURS.values())), interpolation="nearest",
                  extent=(0.5, len(first.turns) + 0.5, len(runs) - 0.5, -0.5))
        ax.set_yticks(range(len(runs)), [run.label() for run in runs.values()])
        forget = f", asked to forget at turn {fact.forget_at}" if fact.forget_at else ""
        never = "; should never be sent" if fact.kind == "injection" else ""
        ax.set_title(f"{fact.id}: said at turn {fact.turn}{forget}{never}", loc="left")
        if fact.forget_at:
            ax.axvline(fact.forget_at - 0.5, color="black", linewidth=3)
    axes[-1].set_xlabel("turn")
    fig.legend(handles=[Patch(facecolor=colour, edgecolor="#999999", label=name) for name, colour in
                        STATUS_COLOURS.items()], loc="outside upper center", ncols=len(names), title=title or None)
    return fig


class TradeoffChart:
    """Cost against facts kept (a point per strategy and setting) beside the tokens spent so far, turn by turn."""

    def __init__(self) -> None:
        self.fig, (self.scatter, self.curves) = new_figure(15, 6.5, ncols=2)

    def update(self, runs: Sequence[StrategyRun], moved: Sequence[StrategyRun] = (), title: str = "") -> Figure:
        """Redraw for these runs (filled points, solid lines) and the sliders' runs (hollow points, dashed lines)."""
        ax, curves, colours = self.scatter, self.curves, {}
        for axes in (ax, curves):
            axes.clear()
            axes.grid(alpha=0.3)
        for index, run in enumerate([*runs, *moved]):
            colour = colours.setdefault(run.name, f"C{len(colours) % 10}")  # a strategy's colour, filled or hollow
            ax.scatter([run.bill.total / 1000], [run.kept()[0]], s=160, zorder=3, edgecolors=colour, linewidths=2.5,
                       facecolors="none" if index >= len(runs) else colour)
            curves.plot(range(1, len(run.turns) + 1), [t / 1000 for t in accumulate(turn.tokens for turn in run.turns)],
                        color=colour, linestyle="--" if index >= len(runs) else "-", linewidth=2.5, label=run.label())
        wanted = runs[0].kept()[1] if runs else 0
        ax.set(xlabel="tokens for the whole conversation (thousands)", ylim=(-0.5, wanted + 0.5), xlim=(0, None),
               ylabel=f"facts kept at the last turn (of {wanted})", title="cost against facts kept")
        curves.set(xlabel="turn", ylabel="tokens so far (thousands)", title="the bill, turn by turn")
        curves.legend(loc="upper left", framealpha=0.9)
        self.fig.suptitle(title, fontsize=18)
        return self.fig


def tradeoff_chart(runs: Sequence[StrategyRun], moved: Sequence[StrategyRun] = (), title: str = "") -> Figure:
    """The trade-off figure for these runs (a new Figure)."""
    return TradeoffChart().update(runs, moved, title)


def render_tradeoff(make: MemoryFactory, transcript: Transcript, ledger: Ledger, runs: Sequence[StrategyRun],
                    threshold: int = 4, keep: int = 2, budget: int = 600, window: int = 4,
                    chart: TradeoffChart | None = None) -> tuple[str, Figure]:
    """Replay the three strategies the sliders set, drawn hollow beside ``runs``, with their figures as text."""
    settings = {"summary memory": {"max_turns_before_summary": threshold,
                                   "turns_to_keep_verbatim": min(keep, threshold - 1)},
                "summary buffer memory": {"max_buffer_tokens": budget}, "sliding window": {"window_turns": window}}
    moved = [_replayed(make, transcript, ledger, kind, tuple(sorted(kind_settings.items())))
             for kind, kind_settings in settings.items()]
    full = next((run for run in runs if run.name == FULL_BUFFER), runs[0])
    text = "\n".join(f"{run.label()}: {run.bill.total:,} tokens ({run.bill.total / full.bill.total:.2f}x the full "
                     f"buffer), {run.bill.summariser_calls} summariser calls, {'/'.join(map(str, run.kept()))} facts "
                     "kept" for run in moved)
    return text, (chart or TradeoffChart()).update(runs, moved, "hollow points, dashed lines: the sliders' settings")


@functools.lru_cache(maxsize=64)
def _replayed(make: MemoryFactory, transcript: Transcript, ledger: Ledger, kind: str,
              settings: tuple[tuple[str, Any], ...]) -> StrategyRun:
    """A replay, kept while the same settings come back (a slider moved back, the cell after the panel)."""
    return replay(make(kind, dict(settings)), transcript, ledger, kind)


def tradeoff_panel(make: MemoryFactory, transcript: Transcript, ledger: Ledger, runs: Sequence[StrategyRun],
                   threshold: int = 4, keep: int = 2, budget: int = 600, window: int = 4) -> SliderPanel:
    """Sliders for the summary memory's threshold and turns kept, the buffer's budget and the window."""
    n, narrow = len(transcript), functools.partial(slider, continuous=False, width="300px")  # n turns
    sliders = {"threshold": narrow("threshold", threshold, 2, n), "keep": narrow("keep verbatim", keep, 1, n - 1),
               "budget": narrow("budget", budget, 100, 8000, 100), "window": narrow("window turns", window, 1, n)}
    panel = SliderPanel(sliders, functools.partial(render_tradeoff, make, transcript, ledger, runs), TradeoffChart(),
                        rows=2, image_height=None)
    print(panel.text)  # the figures, as text, for a front end that cannot draw widgets
    return panel
