"""Run a notebook's own code in this process, never in a kernel: the cells tagged ``lesson-core`` (the code a
student reads: ``load_core``), or its code cells in order up to a marker, with one edit made as a student makes it
(``run_cells``). The notebooks themselves are executed once per run, by nbval."""
from __future__ import annotations

import contextlib
import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import nbformat

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
CORE_TAG = "lesson-core"
SKIPPED = ("_panel(", "verdict = check_", "try_it(")  # slider panels and exercise checks: tested on their own


def code_cells(notebook: str | Path, tag: str | None = None) -> list[str]:
    """The sources of the notebook's code cells (only those tagged ``tag``, if given), in order."""
    book = nbformat.read(NOTEBOOKS / notebook, as_version=4)
    return [cell.source for cell in book.cells if cell.cell_type == "code"
            and (tag is None or tag in cell.metadata.get("tags", []))]


def core_cells(notebook: str | Path, tag: str = CORE_TAG) -> list[str]:
    cells = code_cells(notebook, tag)
    if not cells:
        raise AssertionError(f"{notebook} has no code cell tagged {tag!r}")
    return cells


def edited(source: str, old: str, new: str) -> str:
    """``source`` with ``old`` (which must occur exactly once) replaced by ``new``."""
    if source.count(old) != 1:
        raise AssertionError(f"the edit's text occurs {source.count(old)} times, not once: {old!r}")
    return source.replace(old, new)


def load_core(notebook: str | Path, namespace: Mapping[str, Any] | None = None,
              mutations: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
    """Exec the notebook's core cells (after ``mutations``, (old, new) pairs) and return the namespace they
    defined; what they print while defining is swallowed."""
    source = "\n\n".join(core_cells(notebook))
    for old, new in mutations:
        source = edited(source, old, new)
    scope: dict[str, Any] = {"__name__": "notebook_core", **(namespace or {})}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(source, f"<{Path(notebook).name} lesson-core cells>", "exec"), scope)
    return scope


def run_cells(notebook: str, until: str | None = None, edit: tuple[str, str] | None = None,
              append: str | None = None) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """Exec the code cells in order, as Run All does, up to the cell holding ``until``: ``edit`` (old, new) made
    in the one cell that holds ``old``, ``append`` added to the ``until`` cell. Returns the namespace and each run
    cell's (source, printed text). Slider panels and exercise checks are skipped."""
    scope: dict[str, Any] = {"__name__": "__main__"}
    printed: list[tuple[str, str]] = []
    cells = code_cells(notebook)
    if until is not None:
        cells = cells[:next((i for i, cell in enumerate(cells) if until in cell), len(cells)) + 1]
    if edit is not None and sum(edit[0] in cell for cell in cells) != 1:
        raise AssertionError(f"{notebook}: the edit's text is not in exactly one cell run: {edit[0]!r}")
    for source in cells:
        last = until is not None and until in source
        if edit is not None and edit[0] in source:
            source = edited(source, *edit)
        if last and append:
            source += "\n" + append
        if not any(marker in source for marker in SKIPPED):
            with contextlib.redirect_stdout(io.StringIO()) as out:
                exec(compile(source, f"<{notebook}>", "exec"), scope)
            printed.append((source, out.getvalue()))
        if last:
            return scope, printed
    if until is not None:
        raise AssertionError(f"{notebook}: no code cell holds {until!r}")
    return scope, printed


def output_of(printed: list[tuple[str, str]], marker: str) -> str:
    """What the run cell whose source holds ``marker`` printed."""
    found = [text for source, text in printed if marker in source]
    assert len(found) == 1, f"{len(found)} run cells hold {marker!r}"
    return found[0]
