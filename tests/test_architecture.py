"""The shape of ``helpers``: layers without cycles or upward imports, the SDK only in the model layer (so the no-model
notebooks never load it), no class over 150 lines, no private module of Python or a library, no NumPy in the base or
memory layers, no module writing another module's attributes, and the project's own errors."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import nbformat

HELPERS = Path(__file__).resolve().parent.parent / "helpers"
LAYERS = ("base", "lessons", "memory", "measure", "display", "grading", "model", "setup")
MODEL_ONLY = ("openai", "httpx2", "httpx")
PRIVATE_STDLIB = ("sre_parse", "sre_compile", "sre_constants")  # re's internals under their old names


def module_name(path: Path) -> str:
    parts = path.relative_to(HELPERS.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


SOURCES = {module_name(path): (path, ast.parse(path.read_text(encoding="utf-8"))) for path in HELPERS.rglob("*.py")}


def imports_of(tree: ast.AST) -> list[tuple[str, int]]:
    """Every module a file imports, at any depth of the file (function-level imports included)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, node.lineno))
            # "from helpers.lessons import data": the imported name may itself be a module
            found += [(f"{node.module}.{alias.name}", node.lineno) for alias in node.names]
    return found


def project_graph(sources=SOURCES) -> dict[str, set[str]]:
    return {name: {target for target, _ in imports_of(tree) if target in sources and target != name}
            for name, (_, tree) in sources.items()}


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

    return next((cycle for node in sorted(graph) if node not in state and (cycle := visit(node))), None)


def is_facade(module: str) -> bool:
    """A module right under ``helpers`` (``helpers.lesson3``): a notebook's one import, above every layer."""
    return module.count(".") == 1 and (HELPERS / f"{module.split('.')[1]}.py").is_file()


def test_the_layers_hold_with_no_cycle_and_no_upward_import():
    graph = project_graph()
    assert not [m for m in graph if m != "helpers" and layer_of(m) is None and not is_facade(m)]
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])
    upward = [f"{source} imports {target}" for source, targets in graph.items() for target in targets
              if (layer_of(source) is not None and (layer_of(target) or 0) > layer_of(source))
              or (is_facade(target) and not is_facade(source))]
    assert not upward, "\n".join(upward)


def test_the_checker_finds_a_cycle_and_an_upward_import():
    """The checks above can fail: a made-up graph with both faults is caught."""
    graph = {"helpers.memory.a": {"helpers.display.b"}, "helpers.display.b": {"helpers.memory.a"}}
    assert find_cycle(graph) == ["helpers.display.b", "helpers.memory.a", "helpers.display.b"]
    assert find_cycle({"helpers.memory.a": {"helpers.base.c"}, "helpers.base.c": set()}) is None
    assert layer_of("helpers.display.b") > layer_of("helpers.memory.a")


def test_only_the_model_layer_imports_the_sdk_and_no_model_notebook_loads_it():
    offenders = [f"{name} line {line}: {target}" for name, (_, tree) in SOURCES.items()
                 for target, line in imports_of(tree)
                 if target.split(".")[0] in MODEL_ONLY and layer_of(name) not in (LAYERS.index("model"),
                                                                                  LAYERS.index("setup"))]
    assert not offenders, "\n".join(offenders)
    groups = {"memory, measurement, display and grading": [
        f"import {m}" for m in ("helpers.memory.summary", "helpers.memory.summary_buffer", "helpers.memory.schedule",
                                "helpers.memory.budget", "helpers.measure.drift", "helpers.measure.audit",
                                "helpers.display.lines", "helpers.display.plots", "helpers.display.widgets",
                                "helpers.grading.calls", "helpers.grading.window",
                                "helpers.grading.rule_check", "helpers.grading.overflows",
                                "helpers.grading.summary_cap")]}
    for notebook in ("01_summary_schedule", "04_budget_analysis"):  # every import line, as the notebook runs it
        cells = nbformat.read(HELPERS.parent / "notebooks" / f"{notebook}.ipynb", as_version=4).cells
        groups[notebook] = [ast.get_source_segment(cell.source, node) for cell in cells if cell.cell_type == "code"
                            for node in ast.parse(cell.source).body if isinstance(node, (ast.Import, ast.ImportFrom))]
    code = "import sys\n" + "".join(
        "\n".join(lines) + f"\nprint({name!r}, sorted(m for m in {MODEL_ONLY!r} if m in sys.modules))\n"
        for name, lines in groups.items())  # one process: a group that loads the SDK is named
    printed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             cwd=HELPERS.parent).stdout.splitlines()
    assert printed == [f"{name} []" for name in groups], printed


def test_no_class_is_over_150_lines():
    long = [f"{name}.{node.name}: {node.end_lineno - node.lineno + 1} lines" for name, (_, tree) in SOURCES.items()
            for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno >= 150]
    assert not long, "\n".join(long)


def module_names(tree: ast.AST) -> set[str]:
    """The names a file binds to a module with ``import x`` or ``import x as y``."""
    return {(alias.asname or alias.name).split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
            for alias in node.names}


def private_uses(tree: ast.AST) -> list[str]:
    """Imports of a private module (a name starting with ``_``, or ``sre_*``) and reads of one off a module."""
    modules = module_names(tree)
    found = [target for target, _ in imports_of(tree) if target != "__future__" and (
        any(part.startswith("_") and not part.startswith("__") for part in target.split("."))
        or target.split(".")[0] in PRIVATE_STDLIB)]
    return found + [f"{node.value.id}.{node.attr}" for node in ast.walk(tree) if isinstance(node, ast.Attribute)
                    and isinstance(node.value, ast.Name) and node.value.id in modules
                    and node.attr.startswith("_") and not node.attr.startswith("__")]


def foreign_writes(tree: ast.AST) -> list[str]:
    """Assignments to (or deletions of) another module's attributes: ``module.name = ...``, ``setattr(module, ...)``."""
    modules = module_names(tree) | {alias.asname or alias.name for node in ast.walk(tree)
                                    if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(
                                        "helpers") for alias in node.names if alias.name.islower()
                                    and f"{node.module}.{alias.name}" in SOURCES}
    targets = [t for node in ast.walk(tree) if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete))
               for t in getattr(node, "targets", None) or [node.target]]
    calls = [node.args[0] for node in ast.walk(tree) if isinstance(node, ast.Call) and getattr(node.func, "id", "")
             in ("setattr", "delattr") and node.args]
    return [ast.unparse(t) for t in targets if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
            and t.value.id in modules] + [f"setattr({ast.unparse(a)})" for a in calls
                                         if isinstance(a, ast.Name) and a.id in modules]


def test_no_private_module_no_numpy_below_measure_and_no_module_writes_another():
    private = [f"{name}: {use}" for name, (_, tree) in SOURCES.items() for use in private_uses(tree)]
    assert not private, "\n".join(private)
    numpy = [name for name, (_, tree) in SOURCES.items() if layer_of(name) in (0, LAYERS.index("memory"))
             and any(target.split(".")[0] == "numpy" for target, _ in imports_of(tree))]
    assert not numpy, numpy
    writes = [f"{name}: {write}" for name, (_, tree) in SOURCES.items() for write in foreign_writes(tree)]
    assert not writes, "\n".join(writes)


def test_the_shape_checks_find_what_they_look_for():
    sample = ast.parse("import re\nimport numpy as np\nfrom re import _parser\nfrom helpers.memory import registry\n"
                       "x = re._constants\nregistry.KINDS = {}\nsetattr(np, 'x', 1)\nclass C:\n" + "    a = 1\n" * 150)
    assert private_uses(sample) == ["re._parser", "re._constants"]
    assert foreign_writes(sample) == ["registry.KINDS", "setattr(np)"]
    assert [node.end_lineno - node.lineno for node in sample.body if isinstance(node, ast.ClassDef)] == [150]
    assert any(t.split(".")[0] == "numpy" for t, _ in imports_of(sample))


def raised_value_errors(tree: ast.AST) -> list[int]:
    """The lines that raise a bare ``ValueError`` (the project raises its own errors)."""
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)
            and isinstance(node.exc.func, ast.Name) and node.exc.func.id == "ValueError"]


def prose_matches(tree: ast.AST) -> list[int]:
    """The lines where ``pytest.raises(..., match=...)`` checks an error's wording."""
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute) and node.func.attr == "raises"
            and any(keyword.arg == "match" for keyword in node.keywords)]


def test_the_project_raises_its_own_errors_and_tests_read_their_fields():
    """No bare ``ValueError`` in ``helpers``; tests assert an error's type and fields, and at most 15 match its
    message (where the message is the feature: what to do)."""
    bare = [f"{name} line {line}" for name, (_, tree) in SOURCES.items() for line in raised_value_errors(tree)]
    assert not bare, "raise SettingError, StateError or another error of the project instead:\n" + "\n".join(bare)
    matches = [f"{path.name} line {line}" for path in sorted((HELPERS.parent / "tests").rglob("*.py"))
               for line in prose_matches(ast.parse(path.read_text(encoding="utf-8")))]
    assert len(matches) <= 15, f"{len(matches)} match= checks of wording, more than 15:\n" + "\n".join(matches)
    sample = ast.parse("import pytest\n\ndef f():\n    raise ValueError('x')\n\n\n"
                       "def test():\n    with pytest.raises(KeyError, match='y'):\n        f()\n")
    assert raised_value_errors(sample) == [4] and prose_matches(sample) == [8]
