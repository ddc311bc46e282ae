"""The one-import modules (``helpers.lesson3``, ``helpers.lesson4``, ``helpers.attack_surface``) offer every
name their notebooks import from ``helpers``, as the very objects the defining modules hold, and the
no-model notebooks' names load no SDK."""
from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from helpers.base.lazy import _resolve

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
# which module serves which notebooks (by the notebook file's name)
SERVES = {"helpers.lesson3": ("01_", "02_", "03_", "01-03_"), "helpers.lesson4": ("04_", "05_"),
          "helpers.attack_surface": ("06_",)}
SDK = ("openai", "httpx2", "httpx")


def module_for(notebook: Path) -> str | None:
    return next((module for module, prefixes in SERVES.items() if notebook.name.startswith(prefixes)), None)


def helpers_imports(notebook: Path) -> list[tuple[str, str]]:
    """(module, name) of every ``from helpers... import name`` in a notebook's code cells."""
    found = []
    for cell in nbformat.read(notebook, as_version=4).cells:
        if cell.cell_type != "code":
            continue
        code = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "helpers":
                found += [(node.module, alias.name) for alias in node.names]
    return found


SERVED = sorted(path for path in [*NOTEBOOKS.glob("*.ipynb"), *NOTEBOOKS.glob("solutions/*.ipynb")]
                if module_for(path))


def test_every_lesson_notebook_is_served():
    assert {module_for(path) for path in SERVED} == set(SERVES)
    assert all(helpers_imports(path) for path in SERVED)


@pytest.mark.parametrize("notebook", SERVED, ids=lambda path: path.stem)
def test_the_lesson_module_offers_every_name_the_notebook_imports(notebook):
    module = importlib.import_module(module_for(notebook))
    for source, name in helpers_imports(notebook):
        assert name in module.__all__ and name in dir(module), f"{module.__name__} lacks {name} ({source})"
        if source != module.__name__:
            assert getattr(module, name) is _resolve(source, name), f"{module.__name__}.{name} is not {source}'s"


def test_a_name_no_module_offers_is_an_attribute_error_that_lists_the_names():
    import helpers.lesson4

    with pytest.raises(AttributeError) as missing:
        helpers.lesson4.SummaryMemory  # noqa: B018 (lesson 3's class)
    assert "SummaryBufferMemory" in str(missing.value)


@pytest.mark.parametrize("notebook", ["01_summary_schedule", "04_budget_analysis"])
def test_a_no_model_notebooks_names_load_no_sdk(notebook):
    path = NOTEBOOKS / f"{notebook}.ipynb"
    module = module_for(path)
    names = sorted({name for _, name in helpers_imports(path)})
    code = (f"import sys\nfrom {module} import {', '.join(names)}\n"
            f"print(sorted(m for m in {SDK!r} if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            cwd=ROOT).stdout.strip()
    assert loaded == "[]", f"from {module} import the names of {notebook} loads {loaded}"
    code = f"import sys\nfrom {module} import connect\nprint('openai' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=ROOT).stdout.strip() == "True"  # the check above can fail


@pytest.mark.parametrize("module", sorted(SERVES))
def test_every_name_a_lesson_module_offers_exists(module):
    offered = importlib.import_module(module)
    missing = []
    for name in offered.__all__:
        try:
            getattr(offered, name)
        except (AttributeError, ImportError) as error:
            missing.append(f"{name}: {error}")
    assert not missing, f"{module} offers names that do not exist: {missing}"


@pytest.mark.parametrize(("function", "value", "setting"), [("prompt", "nope", "prompt"),
                                                             ("summariser_templates", "lesson5", "lesson"),
                                                             ("published_run", 5, "lesson")])
def test_the_lessons_data_refuses_an_unknown_name_with_a_setting_error(function, value, setting):
    from helpers.lessons import data
    from helpers.memory.types import SettingError

    with pytest.raises(SettingError) as refused:
        getattr(data, function)(value)
    assert (refused.value.setting, refused.value.value) == (setting, value)
    assert isinstance(refused.value, ValueError)  # callers that catch ValueError still do
