"""Print each notebook's main-path reading time: the model of issue 22, up to the first "Going deeper" (issue 36:
a main path of 100 minutes for 01-07).

Markdown and output words at 200 a minute, code lines at 8 a minute, a chart counted as 60 words; the
count stops at the first markdown cell with a "Going deeper" (or "Under the hood") heading.
    python tools/reading_time.py            # notebooks 01-09
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
DEEPER = re.compile(r"^#+\s.*(going deeper|under the hood)", re.I | re.M)
WORDS_PER_MINUTE, CODE_LINES_PER_MINUTE, CHART_WORDS = 200, 8, 60


def main_path_minutes(path: Path) -> float:
    """Minutes to read a notebook's main path by the issue's model (words, code lines, charts)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    words = code = 0
    for cell in cells:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            if DEEPER.search(source):
                break
            words += len(source.split())
            continue
        code += sum(1 for line in source.splitlines() if line.strip())
        for output in cell.get("outputs", []):
            if "image/png" in output.get("data", {}):
                words += CHART_WORDS
                continue
            text = output.get("text") or output.get("data", {}).get("text/plain", "")
            text = "".join(text) if isinstance(text, list) else text
            if not text.startswith("<Figure"):
                words += len(text.split())
    return words / WORDS_PER_MINUTE + code / CODE_LINES_PER_MINUTE


def main() -> None:
    total = 0.0
    for path in sorted(NOTEBOOKS.glob("0[1-9]_*.ipynb")):
        minutes = main_path_minutes(path)
        total += minutes
        print(f"{path.stem}: {minutes:.1f} min")
    print(f"total: {total:.1f} min (aim: <= 17 each and <= 100 for 01-07; 01-05 <= 16 each and <= 65 together)")


if __name__ == "__main__":
    sys.exit(main())
