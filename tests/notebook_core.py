"""Load a notebook's teaching code: the cells tagged ``lesson-core``, run in a fresh namespace.

The lessons' memory classes are written in the notebooks, a few cells at a time, for students to
read and change; the tests run exactly those cells (nothing else of the notebook) and compare the
class they define with the hardened one in ``helpers``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
TAG = "lesson-core"


def lesson_core_source(notebook: str) -> str:
    """The source of the notebook's ``lesson-core`` cells, in order, joined by blank lines."""
    book = nbformat.read(NOTEBOOKS / f"{notebook}.ipynb", as_version=4)
    cells = [cell.source for cell in book.cells if cell.cell_type == "code" and TAG in cell.metadata.get("tags", [])]
    if not cells:
        raise LookupError(f"{notebook} has no code cell tagged {TAG!r}")
    return "\n\n".join(cells)


def load_lesson_core(notebook: str, source: str | None = None) -> dict[str, Any]:
    """Execute the ``lesson-core`` cells (or ``source``, e.g. a mutated copy) and return their namespace."""
    namespace: dict[str, Any] = {"__name__": f"lesson_core_{notebook}"}
    code = compile(source if source is not None else lesson_core_source(notebook), f"<{notebook} lesson-core>", "exec")
    exec(code, namespace)  # noqa: S102 - running the notebook's own teaching cells is the point
    return namespace
