"""Where the project's files live: the source tree (an editable install), else, after a plain ``pip install .``
(Binder, Colab), the folder Python runs in or the nearest above it that holds the project."""
from __future__ import annotations

from pathlib import Path


def is_repository(folder: Path) -> bool:
    return (folder / "pyproject.toml").is_file() and (folder / "data" / "README.md").is_file()


def find_repository() -> Path:
    """The source tree if it is the repository, else the working folder or the nearest above it that is; failing
    both, the source tree (the set-up check then says the lesson data is missing and where to open the notebooks)."""
    source, here = Path(__file__).resolve().parents[2], Path.cwd()
    return next((folder for folder in (source, here, *here.parents) if is_repository(folder)), source)


REPO_ROOT = find_repository()
DATA_DIR = REPO_ROOT / "data"
NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
