"""Execute a notebook top to bottom in a fresh kernel, as JupyterLab's "Run All" would, for
``tools/refresh_notebooks.py`` and the tests; the kernel inherits this process's environment (``LLM_MODE``)."""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import nbclient
import nbformat

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
_REFERENCE = re.compile(r"IPY_MODEL_([0-9a-f]{32})")


def execute_notebook(path: str | Path, timeout: int = 600) -> nbformat.NotebookNode:
    """Run every cell of the notebook at ``path`` in its own folder and return it with outputs."""
    path = Path(path)
    book = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(book, timeout=timeout, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    return stable_widget_ids(joined_streams(book))


def joined_streams(book: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Each cell's consecutive stdout (or stderr) outputs joined into one (how printing is cut into them is timing)."""
    for cell in book.get("cells", []):
        joined: list[nbformat.NotebookNode] = []
        for output in cell.get("outputs", []):
            if (joined and output.get("output_type") == joined[-1].get("output_type") == "stream"
                    and output.get("name") == joined[-1].get("name")):
                joined[-1]["text"] += output["text"]
            else:
                joined.append(output)
        if "outputs" in cell:
            cell["outputs"] = joined
    return book


def stable_widget_ids(book: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The notebook with its widgets' random ids renamed in a fixed order (the views in cell order, each followed
    by the models it refers to, then the rest by their state), so a refresh of an unchanged notebook is unchanged."""
    state = book.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    order: list[str] = []

    def meet(model_id: str) -> None:
        if model_id in order or model_id not in state:
            return
        order.append(model_id)
        for referred in _REFERENCE.findall(json.dumps(state[model_id], sort_keys=True)):
            meet(referred)

    for cell in book.get("cells", []):
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if isinstance(view, dict) and isinstance(view.get("model_id"), str):
                meet(view["model_id"])
    order += sorted((m for m in state if m not in order),
                    key=lambda m: _REFERENCE.sub("IPY_MODEL_", json.dumps(state[m], sort_keys=True)))
    renamed = {old: hashlib.sha256(f"widget {index}".encode()).hexdigest()[:32] for index, old in enumerate(order)}
    if not renamed:
        return book
    text = re.sub("|".join(renamed), lambda match: renamed[match.group(0)], nbformat.writes(book))
    stable = nbformat.reads(text, as_version=4)
    saved = stable.metadata.widgets[WIDGET_STATE]
    saved["state"] = {renamed[old]: saved["state"][renamed[old]] for old in order}
    return stable
