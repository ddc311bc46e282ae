"""The stored notebooks: executed in order, outputs kept, no errors, secrets or machine paths.

nbval compares stored outputs with a fresh run, but a cell saved without outputs is not compared
at all, so these checks make sure every notebook was saved executed (``tools/refresh_notebooks.py``).
"""
import ast
import json
import re
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
EXPECTED = ["00_setup_check", "01_summary_schedule", "02_summary_memory_run", "03_drift_measurement",
            "04_budget_analysis", "05_summary_buffer_run", "06_summary_memory_attack_surface",
            "07_strategies_side_by_side"]
MODEL_NOTEBOOKS = ["02_summary_memory_run", "03_drift_measurement", "05_summary_buffer_run",
                   "06_summary_memory_attack_surface", "07_strategies_side_by_side"]
SLIDER_NOTEBOOKS = {"01_summary_schedule": "render_schedule", "04_budget_analysis": "render_budget",
                    "07_strategies_side_by_side": "render_tradeoff"}
SECRET = re.compile(r"\b(?:sk-[A-Za-z0-9_-]{16,}|gsk_[A-Za-z0-9]{16,}|Bearer\s+\S{16,})|api_key\s*[=:]\s*['\"][^'\"]{8,}")
MACHINE_PATH = re.compile(r"(?:/work/|/home/|/root/|/tmp/|/Users/|[A-Z]:\\\\|site-packages)")
MAX_CELL_LINES = 15


def load(name: str) -> nbformat.NotebookNode:
    return nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)


def code_cells(book):
    return [cell for cell in book.cells if cell.cell_type == "code"]


def output_text(cell) -> str:
    """Every stored output of a cell as text (images excluded)."""
    parts = []
    for output in cell.outputs:
        parts.append(output.get("text", ""))
        for mime, value in output.get("data", {}).items():
            if not mime.startswith("image/"):
                parts.append(value if isinstance(value, str) else json.dumps(value))
        parts += output.get("traceback", [])
    return "\n".join(parts)


def only_definitions(source: str) -> bool:
    """A cell that only imports, defines functions or classes, or assigns: it prints nothing when run (its
    execution count shows that it ran)."""
    definitions = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign)
    return all(isinstance(node, definitions) for node in ast.parse(source).body)


def test_the_notebooks_are_there():
    assert sorted(path.stem for path in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")) == EXPECTED


@pytest.mark.parametrize("name", EXPECTED)
def test_every_code_cell_was_executed_in_order_and_kept_its_outputs(name):
    cells = code_cells(load(name))
    assert [cell.execution_count for cell in cells] == list(range(1, len(cells) + 1)), (
        f"{name}: run it top to bottom and save (python tools/refresh_notebooks.py {name})")
    silent = [cell.source.splitlines()[0] for cell in cells if not cell.outputs and not only_definitions(cell.source)]
    assert not silent, f"{name}: code cells without stored outputs: {silent}"


@pytest.mark.parametrize("name", EXPECTED)
def test_no_errors_secrets_or_machine_paths_in_outputs(name):
    for cell in code_cells(load(name)):
        assert all(output.output_type != "error" for output in cell.outputs), cell.source
        text = output_text(cell)
        assert not SECRET.search(text), f"{name}: something like a key in the output of {cell.source[:60]!r}"
        assert not MACHINE_PATH.search(text), f"{name}: a machine path in the output of {cell.source[:60]!r}"
        assert "Traceback" not in text


@pytest.mark.parametrize("name", EXPECTED)
def test_code_cells_are_short(name):
    # The memory class a lesson teaches (tagged lesson-core) is read in the notebook on purpose.
    long = [cell.source.splitlines()[0] for cell in code_cells(load(name))
            if len(cell.source.splitlines()) > MAX_CELL_LINES and "lesson-core" not in cell.metadata.get("tags", [])]
    assert not long, f"{name}: cells over {MAX_CELL_LINES} lines: {long}"


@pytest.mark.parametrize("name", MODEL_NOTEBOOKS)
def test_model_notebooks_say_which_mode_and_model_answered(name):
    cells = code_cells(load(name))
    connects = [cell for cell in cells if "connect(recording=" in cell.source]
    assert connects and f'recording="{name}"' in connects[0].source
    assert output_text(connects[0]).startswith("Model: "), "the mode line must be the connect cell's output"


@pytest.mark.parametrize("name", MODEL_NOTEBOOKS)
def test_the_lessons_model_output_is_labelled_as_reference(name):
    text = "\n".join(output_text(cell) for cell in code_cells(load(name)))
    if "gpt-oss-120b" in text:
        assert "reference" in text


@pytest.mark.parametrize("name, render", SLIDER_NOTEBOOKS.items())
def test_slider_cells_are_ignored_and_followed_by_a_fixed_value_cell(name, render):
    cells = code_cells(load(name))
    panels = [i for i, cell in enumerate(cells) if "_panel(" in cell.source]
    assert panels, f"{name} has no slider panel"
    for i in panels:
        assert "nbval-ignore-output" in cells[i].metadata.get("tags", []), "slider cells must be nbval-ignore-output"
        follower = cells[i + 1]
        assert render in follower.source and "nbval-ignore-output" not in follower.metadata.get("tags", [])
        assert follower.outputs, "the fixed-value cell after a slider must have stored (compared) output"
