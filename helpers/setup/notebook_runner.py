"""Execute a notebook top to bottom in a fresh kernel, as JupyterLab's "Run All" would.

Used by ``tools/refresh_notebooks.py`` to store outputs, and by tests that run a notebook
unedited in several model modes. The kernel inherits this process's environment (``LLM_MODE``).
"""
from __future__ import annotations

from pathlib import Path

import nbclient
import nbformat


def execute_notebook(path: str | Path, timeout: int = 600) -> nbformat.NotebookNode:
    """Run every cell of the notebook at ``path`` in its own folder and return it with outputs."""
    path = Path(path)
    book = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(book, timeout=timeout, kernel_name="python3", record_timing=False,
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    return book


def cell_text(cell: nbformat.NotebookNode) -> str:
    """The text a code cell printed or displayed (streams and text/plain results)."""
    parts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            parts.append(output.get("text", ""))
        elif "data" in output:
            parts.append(output["data"].get("text/plain", ""))
    return "".join(parts)
