"""Time of the offline nbval suite against a floor that does the least the same notebooks must do.

The floor is the same number of notebooks, run the same way (pytest --nbval, one kernel each),
whose only cell imports the third-party packages that notebook needs (the openai SDK for the
model notebooks, matplotlib for charts, ipywidgets for sliders) and loads the o200k_base
tokenizer. The ratio says what the lessons' own work costs on top of starting kernels and
importing libraries. Prints figures; asserts nothing. Target: about 1.2x or lower.

    python benchmarks/notebook_suite.py [--repeat 2]
    python benchmarks/notebook_suite.py 07        # one notebook (or several), each against its own floor
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from helpers.base.paths import NOTEBOOKS_DIR, REPO_ROOT


def needs(notebook: Path) -> list[str]:
    """The third-party imports a notebook's helpers pull in, read from its import lines."""
    source = "\n".join(cell.source for cell in nbformat.read(notebook, as_version=4).cells if cell.cell_type == "code")
    modules = set(re.findall(r"^from (helpers\.[\w.]+) import", source, re.MULTILINE))
    imports = ["import tiktoken", "from helpers.base.tokens import encoding", "encoding()"]
    if any(m.startswith(("helpers.model", "helpers.setup")) for m in modules):
        imports.insert(0, "import openai")
    if any(m.startswith(("helpers.display.plots", "helpers.display.widgets", "helpers.display.lines"))
           for m in modules) or "helpers.model.chat" in modules:
        imports.insert(0, "import matplotlib.pyplot")
    if "helpers.display.widgets" in modules:
        imports.insert(0, "import ipywidgets")
    return imports


def floor_notebooks(folder: Path, notebooks: list[Path] | None = None) -> list[Path]:
    paths = []
    for notebook in notebooks if notebooks is not None else sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb")):
        book = nbformat.v4.new_notebook()
        book.cells = [nbformat.v4.new_code_cell("\n".join(needs(notebook)))]
        path = folder / notebook.name
        nbformat.write(book, path)
        paths.append(path)
    return paths


def run_suite(paths: list[Path]) -> float:
    """Seconds for ``pytest --nbval`` on these notebooks, as the test suite runs them (offline)."""
    env = {**os.environ, "LLM_MODE": "offline"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "--nbval",
               "--nbval-current-env", "--nbval-sanitize-with", str(NOTEBOOKS_DIR / "sanitize.cfg"),
               "--rootdir", str(REPO_ROOT), *map(str, paths)]
    start = time.perf_counter()
    result = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if result.returncode:
        raise SystemExit(f"the suite failed:\n{result.stdout[-2000:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2, help="runs of each suite; the fastest is shown")
    parser.add_argument("names", nargs="*", help="time only these notebooks (name or number prefix), one by one")
    args = parser.parse_args()
    notebooks = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
    if args.names:
        chosen = [path for path in notebooks if any(path.name.startswith(name) for name in args.names)]
        if not chosen:
            raise SystemExit(f"no notebook matches {', '.join(args.names)}")
        with tempfile.TemporaryDirectory(dir=REPO_ROOT) as folder:
            for notebook, floor in zip(chosen, floor_notebooks(Path(folder), chosen)):
                floor_seconds = min(run_suite([floor]) for _ in range(args.repeat))
                seconds = min(run_suite([notebook]) for _ in range(args.repeat))
                print(f"{notebook.stem}, offline, best of {args.repeat}: {seconds:.1f} s under nbval "
                      f"(floor {floor_seconds:.1f} s; the notebook's own work {seconds - floor_seconds:.1f} s)")
        return
    with tempfile.TemporaryDirectory(dir=REPO_ROOT) as folder:
        floor = floor_notebooks(Path(folder))
        floor_seconds = min(run_suite(floor) for _ in range(args.repeat))
        suite_seconds = min(run_suite(notebooks) for _ in range(args.repeat))
    print(f"{len(notebooks)} notebooks, offline, best of {args.repeat}")
    print(f"  floor (imports and tokenizer only): {floor_seconds:6.1f} s")
    print(f"  the lesson notebooks:               {suite_seconds:6.1f} s")
    print(f"  ratio: {suite_seconds / floor_seconds:.2f}x")


if __name__ == "__main__":
    main()
