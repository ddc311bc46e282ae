"""Notebook 06's attack table and chart, and the summary check measured both ways."""
from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from helpers.display.plots import COLOURS, MIN_TEXT_SIZE, new_figure
from helpers.measure.attacks import AttackRate, CheckMeasure

_MEASURES = (("reached_system", "reaches a system message", "reach system"),
             ("in_summary", "survives into the summary", "in summary"),
             ("in_last_request", "still sent at the last turn", "at last turn"),
             ("flagged", "flagged by the check", "flagged"))


def attack_table_text(rates: Sequence[AttackRate], label: str) -> str:
    """The table: per setting and memory kind, how many payloads did each thing (count and percent)."""
    setting_width = max([7, *(len(rate.setting) for rate in rates)])
    memory_width = max([6, *(len(rate.memory) for rate in rates)])
    header = (f"{'setting':<{setting_width}} {'memory':<{memory_width}} "
              + " ".join(f"{short:>13}" for _, _, short in _MEASURES) + f" {'refused':>9}")
    lines = [label, header, "-" * len(header)]
    for rate in rates:
        cells = [f"{getattr(rate, name):>2}/{rate.payloads} {100 * getattr(rate, name) / rate.payloads:3.0f}%"
                 for name, _, _ in _MEASURES]
        lines.append(f"{rate.setting:<{setting_width}} {rate.memory:<{memory_width}} "
                     + " ".join(f"{cell:>13}" for cell in cells) + f" {rate.refused:>2}/{rate.payloads}".rjust(10))
    return "\n".join(lines)


def attack_chart(rates: Sequence[AttackRate], title: str) -> Figure:
    """Grouped bars per setting and memory class: the share of payloads at each stage (projector-sized text)."""
    fig, (ax,) = new_figure(14, 1.0 * len(rates) + 2.5)
    colours = (COLOURS["highlight"], COLOURS["summary"], COLOURS["budget"], COLOURS["verbatim"])
    width = 0.8 / len(_MEASURES)
    ys = list(range(len(rates)))
    for k, ((name, text, _), colour) in enumerate(zip(_MEASURES, colours)):
        values = [100 * getattr(rate, name) / rate.payloads for rate in rates]
        ax.barh([y + (k - (len(_MEASURES) - 1) / 2) * width for y in ys], values, width, color=colour, label=text)
    ax.set_yticks(ys, [f"{rate.setting}\n({rate.memory})" for rate in rates], fontsize=MIN_TEXT_SIZE)
    ax.invert_yaxis()
    ax.set(xlim=(0, 100), xlabel="% of payloads", title=title)
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncol=2, frameon=False,
               fontsize=MIN_TEXT_SIZE)
    return fig


def check_table_text(measures: Sequence[CheckMeasure], label: str) -> str:
    """The summary check measured both ways: per set, the held-out attacks it caught and the ordinary texts it
    flagged (false alarms); for the set written apart, the attacks outside the forms no pattern list reaches."""
    width = max(42, *(len(m.name) for m in measures))
    lines = [label, f"{'set':<{width}}  texts  flagged", "-" * (width + 32)]
    for m in measures:
        lines.append(f"{m.name:<{width}}  {m.size:>5}  {m.flagged:>3} {100 * m.flagged / m.size:3.0f}%  "
                     + ("caught" if m.attacks else "false alarms"))
        if m.hard:
            rest, caught = m.size - m.hard, m.flagged - m.hard_flagged
            lines.append(f"{'  outside paraphrase, languages, encodings':<{width}}  {rest:>5}  {caught:>3}"
                         f" {100 * caught / rest:3.0f}%  caught")
    return "\n".join(lines)
