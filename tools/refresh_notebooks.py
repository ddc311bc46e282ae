"""Re-execute the lesson notebooks (and the solutions in notebooks/solutions/) in place and store their outputs.

    python tools/refresh_notebooks.py                      # every notebook, offline mode
    python tools/refresh_notebooks.py --mode replay 02 05  # some notebooks, by name or number prefix
    python tools/refresh_notebooks.py --mode record        # live calls, saved to data/recordings/

The mode is passed to the kernels as ``LLM_MODE`` (offline needs no key and no network; live and
record need a key in ``.env``). Stored outputs are what ``pytest`` (nbval) compares against, and
the tests run offline, so commit outputs refreshed in offline mode.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import nbclient
import nbformat

from helpers.base.paths import NOTEBOOKS_DIR as NOTEBOOKS
from helpers.base.paths import REPO_ROOT
from helpers.setup.notebook_runner import execute_notebook

MODES = ("offline", "replay", "live", "record")


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


def refresh(path: Path, timeout: int = 600) -> float:
    """Execute one notebook top to bottom in its own folder and write it back; returns seconds taken."""
    started = time.perf_counter()
    book = execute_notebook(path, timeout)
    nbformat.write(book, path)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="notebook names or number prefixes (default: all)")
    parser.add_argument("--mode", choices=MODES, default="offline", help="LLM_MODE for the kernels (default offline)")
    args = parser.parse_args(argv)
    os.environ["LLM_MODE"] = args.mode
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    for path in notebook_paths(args.names):
        try:
            seconds = refresh(path)
        except nbclient.exceptions.CellExecutionError as error:
            print(f"FAILED {path.name} ({args.mode}): {str(error).splitlines()[-1] if str(error) else error}")
            return 1
        print(f"refreshed {path.relative_to(REPO_ROOT)} in {args.mode} mode ({seconds:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
