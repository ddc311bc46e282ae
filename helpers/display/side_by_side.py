"""Notebook 07's tables, chart and slider panel: the strategies side by side on one conversation, all read from
``helpers.measure.transcript.StrategyRun`` (measured once), so they show the same figures."""
from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from matplotlib.figure import Figure

from helpers.display.plots import new_figure, png_bytes
from helpers.display.widgets import SliderPanel, slider
from helpers.measure.bill import ratio
from helpers.measure.ledger import STATUSES, Ledger
from helpers.measure.transcript import FULL_BUFFER, MemoryFactory, StrategyRun, Transcript, replay

STATUS_MARKS = {"verbatim": "V", "summary": "S", "softened": "s~", "contradicted": "X", "absent": "."}
STRATEGY_COLOURS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1", "#9c755f")


def _first(runs: Mapping[str, StrategyRun]) -> StrategyRun:
    return next(iter(runs.values()))


def comparison_table(runs: Mapping[str, StrategyRun]) -> str:
    """Per strategy: request and summariser tokens, total (x the full buffer's), facts kept, what should not be sent."""
    full = runs.get(FULL_BUFFER) or _first(runs)
    rows = [("strategy (settings)", "requests", "calls", "summariser in+out", "total", "x full", "facts kept",
             "sent that should not be")]
    for run in runs.values():
        bill, (kept, wanted) = run.bill, run.kept()
        rows.append((run.label(), f"{bill.request_tokens:,}", str(bill.summariser_calls),
                     f"{bill.summariser_prompt_tokens:,}+{bill.summariser_output_tokens:,}", f"{bill.total:,}",
                     f"{ratio(bill, full.bill):.2f}", f"{kept}/{wanted}", ", ".join(run.leaks()) or "-"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(width) if i in (0, 7) else cell.rjust(width)
                               for i, (cell, width) in enumerate(zip(row, widths))).rstrip() for row in rows)


def ledger_table(runs: Mapping[str, StrategyRun], turn: int) -> str:
    """Every planted fact (rows) by strategy (columns) at ``turn``, marked as ``STATUS_MARKS`` says (* if unwanted)."""
    names = list(runs)
    facts = [fact for fact in _first(runs).ledger.facts if fact.turn <= turn]
    width = max(len(fact.id) for fact in facts) + 4
    lines = [f"at turn {turn}".ljust(width) + "  ".join(f"{name[:14]:>14}" for name in names)]
    for fact in facts:
        marks = [STATUS_MARKS[runs[name].turns[turn - 1].statuses[fact.id]] for name in names]
        label = fact.id + ("" if fact.wanted(turn) else " *")
        lines.append(f"{label:<{width}}" + "  ".join(f"{mark:>14}" for mark in marks))
    lines.append("V verbatim, S in the summary, s~ a rule kept only as a preference, X contradicted, . absent; "
                 "* should no longer be sent")
    return "\n".join(lines)


def injection_report(runs: Mapping[str, StrategyRun]) -> str:
    """Per strategy: where the injected instruction was sent word for word, each summary version's hold on it, and
    the first turn it was inside a system message."""
    fact = _first(runs).ledger.injection
    if fact is None:
        return "The ledger plants no instruction."
    lines = [f"The instruction planted at turn {fact.turn} (canary word {fact.canary!r}):"]
    for run in runs.values():
        trail, system = run.injection_trail(), run.first_system_turn()
        verbatim_turns = [t for t, status in enumerate(run.status_trail(fact.id), start=1) if status == "verbatim"]
        where = (f"in the turns sent word for word up to turn {verbatim_turns[-1]}" if verbatim_turns
                 else "never sent word for word")
        versions = [f"turn {turn} {state}" for turn, state in trail]
        if len(versions) > 6:  # the first and last three
            versions = [*versions[:3], f"... ({len(versions) - 6} more) ...", *versions[-3:]]
        if trail:
            summaries = f"{len(trail)} summary version{'s' * (len(trail) > 1)} after it, from {', '.join(versions)}"
        elif run.summary_versions():
            last = run.summary_versions()[-1][0]
            summaries = f"the summary stayed the same from turn {last} on, so no fold took it in"
        else:
            summaries = "no summary"
        lines.append(f"  {run.label()}: {where}; {summaries}; "
                     + (f"inside a system message from turn {system}" if system else "never in a system message"))
    return "\n".join(lines)


def correction_report(runs: Mapping[str, StrategyRun], fact_id: str) -> str:
    """A corrected fact through the run: per strategy, the turns that sent the new value, only the old, or neither."""
    fact = _first(runs).ledger.fact(fact_id)
    lines = [f"{fact_id} (stated at turn {fact.turn}, replacing {fact.replaces!r}), turns {fact.turn} to "
             f"{len(_first(runs).turns)}:"]
    for run in runs.values():
        trail = [status for status in run.status_trail(fact_id) if status is not None]
        counts = Counter(trail)
        lines.append(f"  {run.label()}: " + ", ".join(f"{s} {counts[s]}" for s in STATUSES if counts[s])
                     + f"; at the last turn: {trail[-1]}")
    return "\n".join(lines)


# ----- the trade-off chart and its sliders ------------------------------------------------------------------
class TradeoffChart:
    """Cost against facts kept (a point per strategy and setting) beside the per-turn token curves."""

    def __init__(self) -> None:
        self.fig, (self.scatter, self.curves) = new_figure(15, 6.5, ncols=2)

    def update(self, runs: Sequence[StrategyRun], moved: Sequence[StrategyRun] = (), title: str = "") -> Figure:
        """Redraw for these runs (filled points and curves) and the sliders' runs (hollow points, dashed curves)."""
        ax, curves = self.scatter, self.curves
        ax.clear()
        curves.clear()
        colours: dict[str, str] = {}
        for index, run in enumerate([*runs, *moved]):
            colour = colours.setdefault(run.name, STRATEGY_COLOURS[len(colours) % len(STRATEGY_COLOURS)])
            hollow = index >= len(runs)
            ax.scatter([run.bill.total / 1000], [run.kept()[0]], s=160, zorder=3, edgecolors=colour, linewidths=2.5,
                       facecolors="none" if hollow else colour, label=run.label())
            curves.plot(range(1, len(run.turns) + 1), run.bill.per_turn(), color=colour,
                        linestyle="--" if hollow else "-", linewidth=2, label=run.label())
        wanted = runs[0].kept()[1] if runs else 0
        ax.set(xlabel="tokens for the whole conversation (thousands)",
               ylabel=f"facts kept at the last turn (of {wanted})", ylim=(-0.5, wanted + 0.5), xlim=(0, None),
               title="cost against facts kept")
        ax.grid(alpha=0.3)
        ax.legend(loc="center right", fontsize=16, framealpha=0.9)
        curves.set(xlabel="turn", ylabel="tokens that turn (request + summariser)", yscale="log",
                   title="per-turn tokens (colours as on the left)")
        curves.grid(alpha=0.3)
        if title:
            self.fig.suptitle(title, fontsize=18)
        return self.fig

    def png(self, dpi: int = 72) -> bytes:
        """The chart as PNG bytes (what the slider panel shows)."""
        return png_bytes(self.fig, dpi)


def tradeoff_chart(runs: Sequence[StrategyRun], moved: Sequence[StrategyRun] = (), title: str = "") -> Figure:
    """The trade-off figure for these runs (a new Figure)."""
    return TradeoffChart().update(runs, moved, title)


def render_tradeoff(make: MemoryFactory, transcript: Transcript, ledger: Ledger, runs: Sequence[StrategyRun],
                    threshold: int = 4, keep: int = 2, budget: int = 600, window: int = 4,
                    chart: TradeoffChart | None = None) -> tuple[str, Figure]:
    """Replay the three strategies the sliders set (each kind named as ``strategies()`` names it) and draw them
    hollow beside ``runs``; the text gives each one's cost, its multiple of the full buffer's and the facts kept."""
    settings = {"summary memory": {"max_turns_before_summary": threshold,
                                   "turns_to_keep_verbatim": min(keep, threshold - 1)},
                "summary buffer memory": {"max_buffer_tokens": budget}, "sliding window": {"window_turns": window}}
    moved = [_replayed(make, transcript, ledger, kind, tuple(sorted(kind_settings.items())))
             for kind, kind_settings in settings.items()]
    full = next((run for run in runs if run.name == FULL_BUFFER), runs[0])
    lines = []
    for run in moved:
        kept, wanted = run.kept()
        lines.append(f"{run.label()}: {run.bill.total:,} tokens ({ratio(run.bill, full.bill):.2f}x the full "
                     f"buffer), {run.bill.summariser_calls} summariser calls, {kept}/{wanted} facts kept")
    chart = chart or TradeoffChart()
    return "\n".join(lines), chart.update(runs, moved, "hollow points, dashed lines: the sliders' settings")


@functools.lru_cache(maxsize=64)
def _replayed(make: MemoryFactory, transcript: Transcript, ledger: Ledger, kind: str,
              settings: tuple[tuple[str, Any], ...]) -> StrategyRun:
    """A replay, cached while the same settings come back (a slider moved and moved back)."""
    return replay(make(kind, dict(settings)), transcript, ledger, kind)


class TradeoffPanel(SliderPanel):
    """Notebook 07's sliders: each move replays the strategies it sets and moves their points."""


def tradeoff_panel(make: MemoryFactory, transcript: Transcript, ledger: Ledger, runs: Sequence[StrategyRun],
                   threshold: int = 4, keep: int = 2, budget: int = 600, window: int = 4) -> TradeoffPanel:
    """Sliders for the summary memory's threshold and turns kept, the buffer's budget and the window."""
    turns, narrow = len(transcript), functools.partial(slider, continuous=False, width="300px")
    sliders = {"threshold": narrow("threshold", threshold, 2, turns),
               "keep": narrow("keep verbatim", keep, 1, turns - 1),
               "budget": narrow("budget", budget, 100, 8000, 100),
               "window": narrow("window turns", window, 1, turns)}
    render = functools.partial(render_tradeoff, make, transcript, ledger, runs)
    return TradeoffPanel(sliders, render, TradeoffChart(), rows=2, image_height=None)
