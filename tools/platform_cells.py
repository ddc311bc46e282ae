"""The ways in that need the repository's public address: "Open in Colab" and Binder badges in the README and in every
lesson notebook, and each notebook's Colab cell (on Colab, and only there, it clones the repository, installs
requirements-hosted.txt, works in notebooks/ and reads keys from Colab's secrets; elsewhere it prints nothing and does
nothing). The address is given once, in pyproject.toml:

    [project.urls]
    Repository = "https://github.com/OWNER/NAME"

    python tools/platform_cells.py           # write or update the badges and cells (running it twice changes nothing)
    python tools/platform_cells.py --check   # exit 1 if they are not as the address says

With no address it says so and writes no badge and no cell (and removes those an earlier address made). The cells
keep the ids below; the code cells' execution counts are renumbered as a run from the top would number them.
"""
from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path
from urllib.parse import quote

import nbformat

ROOT = Path(__file__).resolve().parents[1]
BADGES_ID, COLAB_ID = "platform-badges", "colab-setup"
README_START, README_END = "<!-- platform badges: tools/platform_cells.py -->", "<!-- /platform badges -->"
GITHUB = re.compile(r"https://github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?")
BRANCH = "main"
FIRST_NOTEBOOK = "notebooks/00_setup_check.ipynb"

COLAB_CELL = '''# Google Colab only (elsewhere this cell does nothing): get the course, install what Colab lacks, work in notebooks/.
import os, subprocess, sys
if "google.colab" in sys.modules:
    COURSE = "/content/{name}"
    if not os.path.isdir(COURSE):
        subprocess.run(["git", "clone", "-q", "--depth=1", "{address}", COURSE], check=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "-r", "requirements-hosted.txt"], cwd=COURSE,
                       check=True)
    os.chdir(f"{{COURSE}}/notebooks")
    from helpers.setup.environment_check import use_colab_secrets
    print("Keys from Colab's secrets:", ", ".join(use_colab_secrets()) or "none (the notebooks run without one)")'''


def address(root: Path = ROOT) -> str | None:
    """The repository's public address from pyproject.toml ([project.urls] Repository), or None if there is none."""
    with open(root / "pyproject.toml", "rb") as file:
        given = tomllib.load(file).get("project", {}).get("urls", {}).get("Repository")
    if given and not GITHUB.fullmatch(given):
        raise SystemExit(f"Repository = {given!r}: Colab opens notebooks from GitHub only; give https://github.com/"
                         "OWNER/NAME")
    return given and "https://github.com/{}/{}".format(*GITHUB.fullmatch(given).groups())


def badges(repository: str, notebook: str) -> str:
    """The two badges (Markdown) that open ``notebook`` (a path from the repository root) on Colab and on Binder."""
    slug = repository.removeprefix("https://github.com/")
    colab = f"https://colab.research.google.com/github/{slug}/blob/{BRANCH}/{notebook}"
    binder = f"https://mybinder.org/v2/gh/{slug}/{BRANCH}?labpath={quote(notebook, safe='')}"
    return (f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]({colab}) "
            f"[![Binder](https://mybinder.org/badge_logo.svg)]({binder})")


def numbered(book: nbformat.NotebookNode) -> bool:
    """Whether the code cells are numbered 1, 2, ... as a run from the top numbers them."""
    counts = [cell.execution_count for cell in book.cells if cell.cell_type == "code"]
    return counts == list(range(1, len(counts) + 1))


def update_notebook(book: nbformat.NotebookNode, repository: str | None, notebook: str) -> nbformat.NotebookNode:
    """``book`` with its badge and Colab cells made from ``repository`` (placed after the title cell), or without
    them when ``repository`` is None; code cells numbered from the top are numbered so again."""
    was_numbered = numbered(book)
    book.cells = [cell for cell in book.cells if cell.get("id") not in (BADGES_ID, COLAB_ID)]
    if repository:
        at = 1 if book.cells and book.cells[0].cell_type == "markdown" else 0
        name = repository.rsplit("/", 1)[1]
        book.cells[at:at] = [nbformat.v4.new_markdown_cell(badges(repository, notebook), id=BADGES_ID),
                             nbformat.v4.new_code_cell(COLAB_CELL.format(name=name, address=repository), id=COLAB_ID)]
    code = [cell for cell in book.cells if cell.cell_type == "code"] if was_numbered else []
    for count, cell in enumerate(code, 1):
        cell.execution_count = count
        for output in cell.outputs:
            if "execution_count" in output:
                output.execution_count = count
    return book


def update_readme(text: str, repository: str | None) -> str:
    """The README with its badge line (between two comments, after the title) made from ``repository``, or without
    it when ``repository`` is None."""
    text = re.sub(f"\n{re.escape(README_START)}\n.*?\n{re.escape(README_END)}\n", "\n", text, flags=re.S)
    if not repository:
        return text
    title, _, rest = text.partition("\n")
    return f"{title}\n{README_START}\n{badges(repository, FIRST_NOTEBOOK)}\n{README_END}\n{rest}"


def main(argv: list[str] | None = None, root: Path = ROOT) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if something would change")
    check = parser.parse_args(argv).check
    repository = address(root)
    if not repository:
        print("No public address in pyproject.toml ([project.urls] Repository = \"https://github.com/OWNER/NAME\"): "
              "no badge and no Colab cell written.")
    changed = []
    readme = root / "README.md"
    files = {readme: update_readme(readme.read_text(encoding="utf-8"), repository)}
    for path in sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        book = update_notebook(nbformat.read(path, as_version=4), repository, path.relative_to(root).as_posix())
        files[path] = nbformat.writes(book) + "\n"
    for path, text in files.items():
        if path.read_text(encoding="utf-8") != text:
            changed.append(path.relative_to(root).as_posix())
            if not check:
                path.write_text(text, encoding="utf-8")
    print(f"{'would change' if check else 'changed'}: {', '.join(changed)}" if changed else "up to date")
    return 1 if check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
