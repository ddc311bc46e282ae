"""Lesson 3's notebooks as a student meets them: links that open when JupyterLab serves only notebooks/, text
that speaks of the lesson and not of the project's tests, one main path of about 30 cells with the project's
extras after a "Going deeper" heading, the stand-in said once at the top, and the lesson's data as the page
gives it."""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from helpers.base.paths import NOTEBOOKS_DIR
from helpers.lessons.data import lesson3

LESSON3 = ["00_setup_check", "01_summary_schedule", "02_summary_memory_run", "03_drift_measurement"]
SOLUTIONS = "solutions/01-03_summary_memory_solutions"
LINK = re.compile(r"\[[^\]]+\]\(([^)\s]+)\)")
INTERNALS = re.compile(r"\b(?:tests?|nbval|pytest|lesson-core|CI)\b")
MAIN_PATH_CELLS = 31


def load(name: str) -> nbformat.NotebookNode:
    return nbformat.read(NOTEBOOKS_DIR / f"{name}.ipynb", as_version=4)


def markdown(name: str) -> list[str]:
    return [cell.source for cell in load(name).cells if cell.cell_type == "markdown"]


@pytest.mark.parametrize("name", [*LESSON3, SOLUTIONS])
def test_every_link_opens_inside_the_folder_jupyterlab_serves(name):
    folder = (NOTEBOOKS_DIR / name).parent
    for text in markdown(name):
        for target in LINK.findall(text):
            if target.startswith(("http://", "https://", "#")):
                continue
            path = (folder / target.split("#")[0]).resolve()
            assert path.is_file(), f"{name}: the link {target!r} opens nothing"
            assert NOTEBOOKS_DIR.resolve() in path.parents, f"{name}: {target!r} is outside notebooks/"


@pytest.mark.parametrize("name", LESSON3[1:])
def test_the_lesson_notebooks_link_the_glossary(name):
    assert any("](glossary.md)" in text for text in markdown(name))


@pytest.mark.parametrize("name", LESSON3)
def test_student_text_never_mentions_the_projects_tests(name):
    for cell in load(name).cells:
        text = cell.source if cell.cell_type == "markdown" else "\n".join(
            line.split("#", 1)[1] for line in cell.source.splitlines() if "#" in line)
        assert not INTERNALS.search(text), f"{name}: {INTERNALS.search(text).group(0)!r} in {cell.source[:80]!r}"


@pytest.mark.parametrize("name", LESSON3)
def test_one_main_path_of_about_thirty_cells_then_going_deeper(name):
    cells = load(name).cells
    deeper = [i for i, cell in enumerate(cells) if cell.cell_type == "markdown"
              and cell.source.lstrip().startswith("## Going deeper")]
    assert len(deeper) <= 1
    main_path = deeper[0] if deeper else len(cells)
    assert main_path <= MAIN_PATH_CELLS, f"{name}: the main path has {main_path} cells"
    headings = [line for cell in cells[main_path:] if cell.cell_type == "markdown"
                for line in cell.source.splitlines() if line.startswith("## ")]
    assert headings[1:] == [], f"{name}: after Going deeper only ### sections belong: {headings}"


def test_what_the_stand_in_is_is_said_once_where_a_student_first_meets_it():
    """Notebook 00 explains the stand-in; the model notebooks name it in one line and explain nothing more."""
    assert sum("not a language model" in text for text in markdown("00_setup_check")) == 1
    for name in ("02_summary_memory_run", "03_drift_measurement", "05_summary_buffer_run"):
        texts = markdown(name)
        assert not any("not a language model" in text for text in texts), name
        assert any("stand-in of notebook 00" in text for text in texts[:2]), name  # named in one line, at the top


def test_the_notebooks_hold_the_lessons_conversation_and_names():
    source = "\n".join(cell.source for cell in load("02_summary_memory_run").cells if cell.cell_type == "code")
    assert 'demo_turns = lesson3()["summary_run"]["user_turns"]' in source  # the lesson's six, printed
    for name in ("summary_memory = SummaryMemory(", "demo_turns", "reply = chat(summary_memory",
                 "def summarise_turns(turns_to_summarise, existing_summary=None)", "client.chat.completions.create("):
        assert name in source
    assert source.count("client.chat.completions.create(") == 2  # the summariser and chat()


def test_the_glossary_says_what_is_true():
    glossary = (NOTEBOOKS_DIR / "glossary.md").read_text(encoding="utf-8")
    assert "old* tax regime" in glossary and "default since the 2023-24" in glossary  # ELSS's deduction
    assert "weekly and quarterly" in glossary  # a SIP need not be monthly
    assert not (Path(NOTEBOOKS_DIR).parent / "docs" / "glossary.md").exists()  # one glossary, where the links go
