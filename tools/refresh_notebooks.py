"""Re-execute the lesson notebooks (and the solutions in notebooks/solutions/) and store their outputs.

    python tools/refresh_notebooks.py                      # every notebook, offline mode: outputs stored
    python tools/refresh_notebooks.py 02 05                # some notebooks, by name or number prefix
    python tools/refresh_notebooks.py --mode record 02     # live calls, saved to data/recordings/
    python tools/refresh_notebooks.py --mode replay 02     # check that a recording answers every call

The mode is passed to the kernels as ``LLM_MODE`` (offline needs no key and no network; live and
record need a key in ``.env`` or a server at ``LLM_BASE_URL``). Stored outputs are what ``pytest``
(nbval) compares against, and the tests run offline, so only an offline run stores them; another
mode runs the notebooks and leaves them as they are, unless ``--store-outputs`` says otherwise.
After a record run the tool says which recordings are new or changed and how to see them.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import nbclient
import nbformat

from helpers.base.paths import NOTEBOOKS_DIR as NOTEBOOKS
from helpers.base.paths import REPO_ROOT
from helpers.model.recordings import recordings_dir

MODES = ("offline", "replay", "live", "record")
# Seconds one cell may run. Offline and replay cells take seconds; a live cell on a CPU server can make a
# dozen calls of minutes each (each call is bounded by LLM_TIMEOUT on its own), so it gets two hours.
CELL_TIMEOUTS = {"offline": 600, "replay": 600, "live": 7200, "record": 7200}
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


def notebook_paths(names: list[str]) -> list[Path]:
    """The notebooks to run: all numbered ones (the exercises' worked solutions in ``solutions/`` too),
    or those whose file name starts with one of ``names``."""
    every = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")) + sorted(NOTEBOOKS.glob("solutions/*.ipynb"))
    if not names:
        return every
    chosen = [path for path in every if any(path.name.startswith(Path(name).name) for name in names)]
    unknown = [name for name in names if not any(path.name.startswith(Path(name).name) for path in every)]
    if unknown:
        raise SystemExit(f"no notebook matches {', '.join(unknown)}; known: {', '.join(p.stem for p in every)}")
    return chosen


def refresh(path: Path, timeout: int = 600, store: bool = True) -> float:
    """Execute one notebook top to bottom in its own folder (and, with ``store``, write it back); returns seconds."""
    started = time.perf_counter()
    book = execute_notebook(path, timeout)
    if store:
        nbformat.write(book, path)
    return time.perf_counter() - started


def recordings_state(directory: Path) -> dict[Path, str]:
    """Each recording file in ``directory`` and a digest of its bytes."""
    return {path: hashlib.sha256(path.read_bytes()).hexdigest() for path in sorted(directory.glob("*.json"))}


def _tracked(path: Path) -> bool:
    """True when git tracks ``path`` (False outside a git work tree, or without git)."""
    try:
        return subprocess.run(["git", "ls-files", "--error-unmatch", path.name], cwd=path.parent,
                              capture_output=True).returncode == 0
    except OSError:
        return False


def recording_lines(before: dict[Path, str], after: dict[Path, str]) -> list[str]:
    """What a record run wrote, and how to look at it: ``git diff`` shows nothing for a file git does not track."""
    lines = []
    for path, digest in after.items():
        if before.get(path) == digest:
            continue
        shown = path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path
        if _tracked(path):
            lines.append(f"changed recording {shown}: see what changed with  git diff {shown}")
        else:
            lines.append(f"new recording {shown}: git does not track it yet, so git diff shows nothing; see it with "
                         f"git status, or  git add -N {shown} && git diff {shown}  (it holds request and response "
                         "bodies only: no key, no header)")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="notebook names or number prefixes (default: all)")
    parser.add_argument("--mode", choices=MODES, default="offline", help="LLM_MODE for the kernels (default offline)")
    parser.add_argument("--cell-timeout", type=int, default=None, metavar="SECONDS",
                        help="seconds one cell may run (default: 600 offline and replay, 7200 live and record)")
    parser.add_argument("--store-outputs", action="store_true",
                        help="store the outputs of a run in another mode than offline (the tests compare offline ones)")
    args = parser.parse_args(argv)
    if args.cell_timeout is not None and args.cell_timeout <= 0:
        parser.error("--cell-timeout must be a positive number of seconds")
    timeout = args.cell_timeout or CELL_TIMEOUTS[args.mode]
    store = args.mode == "offline" or args.store_outputs
    os.environ["LLM_MODE"] = args.mode
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    recordings = recordings_dir()
    before = recordings_state(recordings)
    for path in notebook_paths(args.names):
        try:
            seconds = refresh(path, timeout, store)
        except nbclient.exceptions.CellExecutionError as error:
            print(f"FAILED {path.name} ({args.mode}): {str(error).splitlines()[-1] if str(error) else error}")
            return 1
        except nbclient.exceptions.CellTimeoutError:
            print(f"FAILED {path.name} ({args.mode}): a cell ran past {timeout} s; give it longer with "
                  "--cell-timeout SECONDS")
            return 1
        what = "refreshed" if store else "ran (stored outputs left as they were: --store-outputs to store these)"
        print(f"{what} {path.relative_to(REPO_ROOT)} in {args.mode} mode ({seconds:.1f} s)")
    for line in recording_lines(before, recordings_state(recordings)):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
