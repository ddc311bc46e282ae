"""Slider latency of the notebook panels: update, recompute and redraw, per slider move.

Prints figures; asserts nothing. Each move sets one slider (as the browser does), which runs the
panel's callback: recompute the schedule or budget table, update the chart's artists, render the
PNG and set the readout and image widgets. Target: a median well under 100 ms. The sweep walks
each slider across its range and back. Browser-side time (sending and showing the PNG) is not included.

    python benchmarks/slider_latency.py [--rounds 3]
"""
from __future__ import annotations

import argparse
import statistics
import time

from helpers.display import widgets


def sweep(low: int, high: int, step: int, start: int) -> list[int]:
    """From ``start`` up to ``high``, down to ``low`` and back to ``start``, one step per move."""
    up = list(range(start + step, high + 1, step))
    down = list(range(high - step, low - 1, -step))
    back = list(range(low + step, start + 1, step))
    return up + down + back


def time_moves(panel: widgets.SliderPanel, name: str, values: list[int], rounds: int) -> list[float]:
    times = []
    slider = panel.sliders[name]
    for _ in range(rounds):
        for value in values:
            if value < slider.min or value > slider.max or value == slider.value:
                continue
            started = time.perf_counter()
            slider.value = value
            times.append((time.perf_counter() - started) * 1000)
    return times


def panels() -> dict[str, widgets.SliderPanel]:
    return {"01 schedule": widgets.schedule_panel(), "04 budget": widgets.budget_panel()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="sweeps per slider (default 3)")
    args = parser.parse_args()
    plan = {"01 schedule": {"threshold": sweep(5, 10, 1, 6), "keep": sweep(1, 4, 1, 2), "turns": sweep(6, 24, 1, 10)},
            "04 budget": {"budget": sweep(200, 2000, 50, 600), "reply_tokens": sweep(50, 300, 10, 100),
                          "compress": sweep(2, 10, 2, 4)}}
    # For 01 the threshold is raised first so that "keep verbatim" can move freely.
    built = panels()
    built["01 schedule"].sliders["threshold"].value = 6
    print(f"slider latency (update + recompute + redraw), "
          f"{args.rounds} sweeps per slider")
    print(f"{'panel':<12} {'slider':<14} {'moves':>5} {'median ms':>9} {'p90 ms':>7} {'max ms':>7}")
    every = []
    for panel_name, sliders in plan.items():
        panel = built[panel_name]
        for name, values in sliders.items():
            times = time_moves(panel, name, values, args.rounds)
            every += times
            p90 = statistics.quantiles(times, n=10)[-1]
            print(f"{panel_name:<12} {panel.sliders[name].description:<14} {len(times):>5} "
                  f"{statistics.median(times):>9.1f} {p90:>7.1f} {max(times):>7.1f}")
    print(f"{'all':<12} {'':<14} {len(every):>5} {statistics.median(every):>9.1f} "
          f"{statistics.quantiles(every, n=10)[-1]:>7.1f} {max(every):>7.1f}")


if __name__ == "__main__":
    main()
