"""The layers of ``helpers`` hold: no import cycle, no import from a higher layer, and only the
model layer loads the openai SDK or httpx2 (so the no-model notebooks never do)."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

HELPERS = Path(__file__).resolve().parent.parent / "helpers"
LAYERS = ("base", "lessons", "memory", "measure", "display", "grading", "model", "setup")
MODEL_ONLY = ("openai", "httpx2", "httpx")


def module_name(path: Path) -> str:
    parts = path.relative_to(HELPERS.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> list[tuple[str, int]]:
    """Every module a file imports, at any depth of the file (function-level imports included)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, node.lineno))
            # "from helpers.lessons import data": the imported name may itself be a module
            found += [(f"{node.module}.{alias.name}", node.lineno) for alias in node.names]
    return found


def project_graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in HELPERS.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        graph[name] = {target for target, _ in imports_of(path) if target in modules and target != name}
    return graph


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else None


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return stack[stack.index(target):] + [target]
            if target not in state and (cycle := visit(target)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def is_facade(module: str) -> bool:
    """A module right under ``helpers`` (``helpers.lesson3``): a notebook's one import, above every layer."""
    return module.count(".") == 1 and (HELPERS / f"{module.split('.')[1]}.py").is_file()


def test_every_module_belongs_to_a_layer():
    loose = [m for m in project_graph() if m != "helpers" and layer_of(m) is None and not is_facade(m)]
    assert not loose, f"modules outside the layers {LAYERS}: {loose}"


def test_there_is_no_import_cycle():
    cycle = find_cycle(project_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_no_module_imports_from_a_higher_layer():
    upward = [f"{source} ({LAYERS[layer_of(source)]}) imports {target} ({LAYERS[layer_of(target)]})"
              for source, targets in project_graph().items() for target in targets
              if layer_of(source) is not None and layer_of(target) is not None and layer_of(target) > layer_of(source)]
    assert not upward, "\n".join(upward)


def test_no_layer_imports_a_notebooks_one_import_module():
    upward = [f"{source} imports {target}" for source, targets in project_graph().items() for target in targets
              if is_facade(target) and not is_facade(source)]
    assert not upward, "\n".join(upward)


def test_only_the_model_layer_imports_the_sdk_or_httpx2():
    offenders = [f"{module_name(path)} line {line}: {target}" for path in HELPERS.rglob("*.py")
                 for target, line in imports_of(path)
                 if target.split(".")[0] in MODEL_ONLY and layer_of(module_name(path)) not in (LAYERS.index("model"),
                                                                                             LAYERS.index("setup"))]
    assert not offenders, "\n".join(offenders)


def test_the_checker_finds_a_cycle_and_an_upward_import():
    """The checks above can fail: a made-up graph with both faults is caught."""
    graph = {"helpers.memory.a": {"helpers.display.b"}, "helpers.display.b": {"helpers.memory.a"}}
    assert find_cycle(graph) == ["helpers.display.b", "helpers.memory.a", "helpers.display.b"]
    assert find_cycle({"helpers.memory.a": {"helpers.base.c"}, "helpers.base.c": set()}) is None
    assert layer_of("helpers.display.b") > layer_of("helpers.memory.a")


@pytest.mark.parametrize("modules", [
    # what the no-model notebooks (01, 04) and the measurements import
    ["helpers.memory.summary", "helpers.memory.summary_buffer", "helpers.memory.schedule", "helpers.memory.budget"],
    ["helpers.measure.drift", "helpers.measure.audit"],
    ["helpers.display.lines", "helpers.display.plots", "helpers.display.widgets", "helpers.display.reference"],
    ["helpers.grading.calls", "helpers.grading.window", "helpers.grading.rule_check", "helpers.grading.overflows",
     "helpers.grading.summary_cap"],
])
def test_importing_the_memory_measurement_display_or_grading_does_not_load_the_sdk(modules):
    code = ("import sys\n" + "".join(f"import {m}\n" for m in modules)
            + f"print(sorted(m for m in {MODEL_ONLY!r} if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            cwd=HELPERS.parent).stdout.strip()
    assert loaded == "[]", f"importing {modules} loaded {loaded}"


@pytest.mark.parametrize("notebook", ["01_summary_schedule", "04_budget_analysis"])
def test_the_no_model_notebooks_do_not_load_the_sdk(notebook):
    """Run every import line of a no-model notebook, as the notebook does, and look at sys.modules."""
    import nbformat

    path = HELPERS.parent / "notebooks" / f"{notebook}.ipynb"
    lines = []  # every import statement at a cell's top level, whole (an import in brackets spans lines)
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type == "code":
            lines += [ast.get_source_segment(cell.source, node) for node in ast.parse(cell.source).body
                      if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert lines, f"no import lines found in {notebook}"
    code = "import sys\n" + "\n".join(lines) + f"\nprint(sorted(m for m in {MODEL_ONLY!r} if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            cwd=HELPERS.parent).stdout.strip()
    assert loaded == "[]", f"notebook {notebook} loads {loaded}"


def raised_value_errors(path: Path) -> list[int]:
    """The lines of ``path`` that raise a bare ``ValueError`` (the project raises its own errors)."""
    return [node.lineno for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)
            and isinstance(node.exc.func, ast.Name) and node.exc.func.id == "ValueError"]


def prose_matches(path: Path) -> list[int]:
    """The lines of ``path`` where ``pytest.raises(..., match=...)`` checks an error's wording."""
    return [node.lineno for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "raises"
            and any(keyword.arg == "match" for keyword in node.keywords)]


def test_no_module_raises_a_bare_value_error():
    bare = [f"{path.relative_to(HELPERS.parent)} line {line}" for path in sorted(HELPERS.rglob("*.py"))
            for line in raised_value_errors(path)]
    assert not bare, "raise SettingError, StateError or another error of the project instead:\n" + "\n".join(bare)


def test_tests_check_an_errors_wording_only_where_it_is_the_feature():
    """Tests assert an error's type and fields; at most 15 match its message (where it names what to do)."""
    matches = [f"{path.name} line {line}" for path in sorted((HELPERS.parent / "tests").rglob("*.py"))
               for line in prose_matches(path)]
    assert len(matches) <= 15, f"{len(matches)} match= checks of wording, more than 15:\n" + "\n".join(matches)


def test_the_error_checks_find_what_they_look_for(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("import pytest\n\ndef f():\n    raise ValueError('x')\n\n\n"
                      "def test():\n    with pytest.raises(KeyError, match='y'):\n        f()\n", encoding="utf-8")
    assert raised_value_errors(sample) == [4] and prose_matches(sample) == [8]
