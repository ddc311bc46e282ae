"""Run the code a notebook teaches: the cells tagged ``lesson-core`` (the memory class a student reads).

The equivalence tests exec those cells, as stored, in a fresh namespace and compare what the class does
with the hardened class in ``helpers``. ``mutations`` edits the source first, so a test can show that a
changed rule is caught.
"""
from __future__ import annotations

import contextlib
import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import nbformat

from helpers.memory.types import SettingError

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
CORE_TAG = "lesson-core"


def core_cells(notebook: str | Path, tag: str = CORE_TAG) -> list[str]:
    """The sources of the code cells tagged ``tag``, in notebook order."""
    book = nbformat.read(NOTEBOOKS / notebook if not Path(notebook).is_absolute() else notebook, as_version=4)
    cells = [cell.source for cell in book.cells
             if cell.cell_type == "code" and tag in cell.metadata.get("tags", [])]
    if not cells:
        raise AssertionError(f"{notebook} has no code cell tagged {tag!r}")
    return cells


def load_core(notebook: str | Path, namespace: Mapping[str, Any] | None = None,
              mutations: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
    """Exec the notebook's core cells (after applying ``mutations``: (old, new) text replacements, each of
    which must occur) and return the namespace they defined. Prints made while defining are swallowed."""
    source = "\n\n".join(core_cells(notebook))
    for old, new in mutations:
        if old not in source:
            raise AssertionError(f"mutation target not found in {notebook}'s core cells: {old!r}")
        source = source.replace(old, new)
    scope: dict[str, Any] = {"__name__": "notebook_core", **(namespace or {})}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(source, f"<{Path(notebook).name} lesson-core cells>", "exec"), scope)
    return scope


def settings_outcome(make: Any) -> str:
    """"made" if ``make()`` builds a memory, "refused" if it raises a one-line ``SettingError`` naming the setting."""
    try:
        make()
    except SettingError as error:
        assert "\n" not in str(error) and error.setting in str(error), str(error)
        return "refused"
    return "made"
