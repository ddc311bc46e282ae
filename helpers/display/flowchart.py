"""Lesson 4's flowchart of summary buffer memory as a figure: the four steps of one message, numbered like the
page's list of steps."""
from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.text import Text

from helpers.display.plots import COLOURS, MIN_TEXT_SIZE, new_figure

# (key, text, x, y, colour) in a 14 x 7 drawing area
BOXES = (
    ("message", "user message", 1.1, 5.6, "#ffffff"),
    ("buffer", "buffer: recent messages,\nword for word,\nwithin max_buffer_tokens", 5.0, 5.6, COLOURS["verbatim"]),
    ("summariser", "summariser LLM:\none call merges them\ninto the old summary", 9.3, 5.6, "#ffffff"),
    ("summary", "running summary", 12.5, 3.6, COLOURS["summary"]),
    ("prompt", "prompt: system prompt,\nthen the summary,\nthen the buffer", 7.4, 1.4, "#ffffff"),
    ("model", "LLM (FinCoach)", 2.2, 1.4, "#ffffff"),
)
# (from, to, label, where the label goes as (x, y))
ARROWS = (
    ("message", "buffer", "1 appended", (2.45, 5.05)),
    ("buffer", "summariser", "2 would pass the\nbudget: the oldest\nturns leave", (7.15, 6.7)),
    ("summariser", "summary", "3 new summary", (12.4, 4.95)),
    ("summary", "prompt", "", None),
    ("buffer", "prompt", "4 assembled", (6.95, 3.5)),
    ("prompt", "model", "request", (4.8, 1.95)),
    ("model", "buffer", "reply appended", (2.4, 3.6)),
)
TITLE = "Summary buffer memory: one message, four steps"


def summary_buffer_flowchart() -> Figure:
    """The lesson's flowchart as a Figure (boxes for the regions and calls, numbered arrows for the steps)."""
    fig, (ax,) = new_figure(14, 7)
    ax.set_xlim(0, 14)
    ax.set_ylim(0, 7.4)
    ax.axis("off")
    boxes: dict[str, Text] = {}
    for key, text, x, y, colour in BOXES:
        boxes[key] = ax.text(x, y, text, ha="center", va="center", fontsize=MIN_TEXT_SIZE,
                             color="#222222" if colour == "#ffffff" else "white",
                             bbox={"boxstyle": "round,pad=0.6", "facecolor": colour, "edgecolor": "#444444",
                                   "linewidth": 2})
    for start, end, label, where in ARROWS:
        ax.annotate("", xy=(0.5, 0.5), xycoords=boxes[end], xytext=(0.5, 0.5), textcoords=boxes[start],
                    arrowprops={"arrowstyle": "-|>", "linewidth": 2.5, "color": "#444444", "mutation_scale": 25,
                                "shrinkA": 0, "shrinkB": 0, "patchA": boxes[start].get_bbox_patch(),
                                "patchB": boxes[end].get_bbox_patch()})
        if label and where is not None:
            ax.text(*where, label, ha="center", va="center", fontsize=MIN_TEXT_SIZE, color="#222222")
    ax.set_title(TITLE)
    return fig
