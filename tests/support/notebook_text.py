"""What the tests read from an executed notebook."""
from __future__ import annotations

import nbformat


def cell_text(cell: nbformat.NotebookNode) -> str:
    """The text a code cell printed or displayed (streams and text/plain results)."""
    return "".join(output.get("text", "") if output.get("output_type") == "stream"
                   else output.get("data", {}).get("text/plain", "") for output in cell.get("outputs", []))
