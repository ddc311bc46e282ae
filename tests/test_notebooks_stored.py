"""The stored notebooks as a student opens them: executed in order with every output kept (nbval compares only cells
that have outputs), no error, key or machine path stored; the lessons' calls as the pages write them; one main path
that reads in the time the course allows, then "Going deeper"; links that open where JupyterLab serves; and every
name a notebook imports offered by its lesson module, the no-model notebooks' names loading no SDK."""
from __future__ import annotations

import ast
import importlib
import json
import re
import sys

import nbformat
import pytest

from helpers.base.paths import NOTEBOOKS_DIR, REPO_ROOT
from helpers.lessons.data import prompt

sys.path.insert(0, str(REPO_ROOT / "tools"))
import reading_time  # noqa: E402  (a script, imported from its folder)

NOTEBOOKS = sorted(path.stem for path in NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
LESSONS = ["01_summary_schedule", "02_summary_memory_run", "03_drift_measurement", "04_budget_analysis",
           "05_summary_buffer_run"]
MODEL_NOTEBOOKS = ["02_summary_memory_run", "03_drift_measurement", "05_summary_buffer_run",
                   "06_summary_memory_attack_surface", "07_strategies_side_by_side"]
SECRET = re.compile(r"\b(?:sk-[A-Za-z0-9_-]{16,}|gsk_[A-Za-z0-9]{16,}|Bearer\s+\S{16,})|api_key\s*[=:]\s*['\"][^'\"]{8,}")
MACHINE_PATH = re.compile(r"(?:/work/|/home/|/root/|/tmp/|/Users/|[A-Z]:\\\\|site-packages)")
LINK = re.compile(r"\[[^\]]+\]\(([^)\s]+)\)")


def load(name: str) -> nbformat.NotebookNode:
    return nbformat.read(NOTEBOOKS_DIR / f"{name}.ipynb", as_version=4)


def code(name: str) -> list:
    return [cell for cell in load(name).cells if cell.cell_type == "code"]


def markdown(name: str) -> list[str]:
    return [cell.source for cell in load(name).cells if cell.cell_type == "markdown"]


def text(cell) -> str:
    """Every stored output of a cell as text (images left out)."""
    parts = [output.get("text", "") for output in cell.outputs] + [line for o in cell.outputs for line in o.get("traceback", [])]
    parts += [v if isinstance(v, str) else json.dumps(v) for o in cell.outputs for mime, v in o.get("data", {}).items()
              if not mime.startswith("image/")]
    return "\n".join(parts)


def test_the_eight_notebooks_are_there():
    assert NOTEBOOKS == ["00_setup_check", *LESSONS, "06_summary_memory_attack_surface", "07_strategies_side_by_side"]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_code_cell_ran_in_order_kept_its_output_and_stores_no_error_key_or_machine_path(name):
    cells = code(name)
    assert [cell.execution_count for cell in cells] == list(range(1, len(cells) + 1)), (
        f"run it top to bottom and save: python tools/refresh_notebooks.py {name}")
    for cell in cells:
        silent = not cell.outputs and not all(isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef,
                                                                ast.Assign)) for node in ast.parse(cell.source).body)
        assert not silent, f"{name}: no stored output for {cell.source.splitlines()[0]!r}"
        assert all(output.output_type != "error" for output in cell.outputs) and "Traceback" not in text(cell)
        assert not SECRET.search(text(cell)) and not MACHINE_PATH.search(text(cell)), cell.source[:60]


@pytest.mark.parametrize("name", MODEL_NOTEBOOKS)
def test_a_model_notebook_says_who_answered_first_and_labels_the_lessons_run_as_reference(name):
    connects = [cell for cell in code(name) if "connect(recording=" in cell.source]
    assert f'recording="{name}"' in connects[0].source and text(connects[0]).startswith("Model: ")
    stored = "\n".join(text(cell) for cell in code(name))
    assert "gpt-oss-120b" not in stored or "reference" in stored


@pytest.mark.parametrize("name", ["02_summary_memory_run", "03_drift_measurement", "05_summary_buffer_run"])
def test_the_model_calls_are_the_pages_and_a_429_is_explained(name):
    source = "\n".join(cell.source for cell in code(name))
    calls = re.findall(r"client\.chat\.completions\.create\(\s*([^)]*)", source)
    assert calls and all(call.startswith("model=MODEL, max_tokens=") for call in calls)
    assert all("reasoning_effort=\"low\"" in call for call in calls if "max_tokens=1000" in call)
    assert "request_options" not in source and "LLM_REASONING_EFFORT" not in "\n".join(markdown(name))
    assert any("429" in cell for cell in markdown(name))


def test_05_prints_its_summariser_prompt_and_the_runs_user_messages():
    stored = "\n".join(text(cell) for cell in code("05_summary_buffer_run"))
    assert prompt("summary_buffer") in stored and "turn 6: Based on my salary and risk profile" in stored


@pytest.mark.parametrize("name", ["01_summary_schedule", "04_budget_analysis"])
def test_a_slider_cell_prints_its_figures_and_is_followed_by_a_compared_fixed_value_cell(name):
    cells = code(name)
    (panel,) = [i for i, cell in enumerate(cells) if "_panel(" in cell.source]
    assert "nbval-ignore-output" in cells[panel].metadata.get("tags", [])
    assert "summariser calls in 10 turns: 4" in text(cells[panel]) or "budget 600: overflows: 3" in text(cells[panel])
    assert "render_" in cells[panel + 1].source and cells[panel + 1].outputs
    assert "nbval-ignore-output" not in cells[panel + 1].metadata.get("tags", [])


@pytest.mark.parametrize("name", LESSONS)
def test_one_main_path_in_sixteen_minutes_then_going_deeper_with_links_that_open(name):
    assert reading_time.main_path_minutes(NOTEBOOKS_DIR / f"{name}.ipynb") <= 16
    texts = markdown(name)
    deeper = [i for i, t in enumerate(texts) if t.startswith("## Going deeper")]
    assert len(deeper) <= 1 and not [t for t in texts[deeper[0] + 1:] if re.search(r"^## ", t, re.M)] if deeper else True
    assert any("](glossary.md)" in t for t in texts)
    for target in (link for t in texts for link in LINK.findall(t) if not link.startswith(("http", "#"))):
        assert (NOTEBOOKS_DIR / target.split("#")[0]).resolve().is_file(), f"{name}: {target} opens nothing"
    internals = re.compile(r"\b(?:tests?|nbval|pytest|lesson-core|CI)\b")
    assert not any(internals.search(t) for t in texts), f"{name} speaks of the project's tests"


def test_the_five_lesson_notebooks_read_in_65_minutes_and_the_model_counts_what_it_says(tmp_path):
    assert sum(reading_time.main_path_minutes(NOTEBOOKS_DIR / f"{name}.ipynb") for name in LESSONS) <= 65
    cells = [{"cell_type": "markdown", "source": ["word " * 200]},
             {"cell_type": "code", "source": ["a = 1\n", "\n", "b = 2\n"],
              "outputs": [{"output_type": "stream", "text": ["out " * 100]},
                          {"output_type": "display_data", "data": {"image/png": "x", "text/plain": "<Figure>"}}]},
             {"cell_type": "markdown", "source": ["## Going deeper\n", "word " * 1000]}]
    (tmp_path / "01_x.ipynb").write_text(json.dumps({"cells": cells}))
    assert reading_time.main_path_minutes(tmp_path / "01_x.ipynb") == pytest.approx(1 + 2 / 8 + 160 / 200)


def test_the_stand_in_is_explained_once_in_00_and_named_at_the_top_of_each_model_notebook():
    assert sum("not a language model" in t for t in markdown("00_setup_check")) == 1
    for name in ("02_summary_memory_run", "03_drift_measurement", "05_summary_buffer_run"):
        assert any("stand-in of notebook 00" in t for t in markdown(name)[:2])
        assert not any("not a language model" in t for t in markdown(name))


# ----- the lesson modules: every name a notebook imports, the no-model notebooks without the SDK -------------
def helpers_imports(path) -> list[tuple[str, str]]:
    found = []
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type == "code":
            for node in ast.walk(ast.parse(cell.source)):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("helpers"):
                    found += [(node.module, alias.name) for alias in node.names]
    return found


SERVED = {path: module for path in [*NOTEBOOKS_DIR.glob("*.ipynb"), *NOTEBOOKS_DIR.glob("solutions/*.ipynb")]
          for module in ["helpers.lesson3", "helpers.lesson4"] if path.name.startswith(
              ("01", "02", "03") if module.endswith("3") else ("04", "05"))}


@pytest.mark.parametrize("path", sorted(SERVED), ids=lambda path: path.stem)
def test_the_lesson_module_offers_every_name_its_notebook_imports_from_it(path):
    module = importlib.import_module(SERVED[path])
    for source, name in helpers_imports(path):
        if source == module.__name__:
            assert name in module.__all__ and getattr(module, name) is not None


@pytest.mark.parametrize("module", ["helpers.lesson3", "helpers.lesson4"])
def test_every_name_a_lesson_module_offers_exists(module):
    offered = importlib.import_module(module)
    assert all(getattr(offered, name) is not None for name in offered.__all__)


def top_level_imports(module: str) -> set[str]:
    """The modules ``module`` imports when it loads (not inside functions), its packages' ``__init__`` included."""
    path = REPO_ROOT.joinpath(*module.split("."))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    found = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names if REPO_ROOT.joinpath(*node.module.split("."), a.name).exists()}
    return found


@pytest.mark.parametrize("name, module", [("01_summary_schedule", "helpers.lesson3"), ("04_budget_analysis", "helpers.lesson4")])
def test_a_no_model_notebooks_names_load_no_sdk(name, module):
    served = ast.literal_eval(next(node for node in ast.walk(ast.parse((REPO_ROOT / f"{module.replace('.', '/')}.py")
                                   .read_text())) if isinstance(node, ast.Dict)))
    where = {n: source for source, names in served.items() for n in names.split()}
    todo = {where[n] for source, n in helpers_imports(NOTEBOOKS_DIR / f"{name}.ipynb") if source == module}
    seen: set[str] = set()
    while todo:
        current = todo.pop()
        seen.add(current)
        todo |= {m for m in top_level_imports(current) if m.startswith("helpers") and m not in seen}
    loaded = {m.split(".")[0] for current in seen for m in top_level_imports(current)}
    assert not loaded & {"openai", "httpx2", "httpx"}, f"{name}'s names load {loaded & {'openai', 'httpx2', 'httpx'}}"
    assert "helpers.model.connect" not in seen and len(seen) > 5  # the walk found the modules it should
