"""How the project's own errors show in a notebook: the helpful message first, a short traceback after."""
from __future__ import annotations

import traceback


class Explained(Exception):
    """Mixin for errors whose message says what to do: IPython shows ``_render_traceback_`` instead of
    the full (often 200-line, chained) traceback. ``%tb`` in the next cell still prints the whole one."""

    def _render_traceback_(self) -> list[str]:
        lines = [f"{type(self).__name__}: {self}"]
        frames = traceback.extract_tb(self.__traceback__)
        if frames:
            first, last = frames[0], frames[-1]
            lines.append(f"  raised in {last.name} ({last.filename}, line {last.lineno}), "
                         f"called from line {first.lineno} of {first.name}")
        lines.append("  (the full traceback: run %tb in a new cell)")
        return lines
