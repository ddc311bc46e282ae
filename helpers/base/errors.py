"""How the project's own errors show in a notebook: the helpful message first, a short traceback after."""
from __future__ import annotations

import traceback
from pathlib import Path
from types import TracebackType

from helpers.base.paths import REPO_ROOT


def short_traceback(name: str, message: str, tb: TracebackType | None) -> list[str]:
    """The lines a notebook shows for an error: ``Name: message``, where it was raised, and how to see the rest."""
    lines = [f"{name}: {message}"]
    frames = traceback.extract_tb(tb)
    if frames:
        first, last = frames[0], frames[-1]
        where = Path(last.filename)  # never an absolute path: a saved notebook keeps this line
        ours = where.is_relative_to(REPO_ROOT) and "site-packages" not in where.parts  # a venv may sit in the repo
        shown = where.relative_to(REPO_ROOT).as_posix() if ours else where.name
        lines.append(f"  raised in {last.name} ({shown}, line {last.lineno}), "
                     f"called from line {first.lineno} of {first.name}")
    lines.append("  (the full traceback: run %tb in a new cell)")
    return lines


class Explained(Exception):
    """Mixin for errors whose message says what to do: IPython shows the message and two lines, not the whole
    (often chained) traceback, which ``%tb`` in the next cell still prints."""

    def _render_traceback_(self) -> list[str]:
        if getattr(self, "_shown_short", False):  # shown once already: this is %tb asking for the whole one
            return "".join(traceback.format_exception(self)).splitlines()
        self._shown_short = True
        return short_traceback(type(self).__name__, str(self), self.__traceback__)


class SettingError(Explained, ValueError):
    """A setting or an argument is refused; ``setting`` names it, ``value`` is what was given."""

    def __init__(self, setting: str, value: object, message: str) -> None:
        super().__init__(message)
        self.setting, self.value = setting, value
