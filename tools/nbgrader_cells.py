"""Mark the exercise cells of the lesson notebooks (01-07) and of notebooks/solutions/ for nbgrader, and write an
instructor's nbgrader source folder with the worked answers filled in (docs/gradebook.md says how a class uses them).

    python tools/nbgrader_cells.py                     # the lesson notebooks and the solutions, in place
    python tools/nbgrader_cells.py NOTEBOOK...         # these notebooks only (a copy, to try it)
    python tools/nbgrader_cells.py --source COURSE     # also COURSE/source/<notebook>/<notebook>.ipynb

An exercise's cells are found by their marks, not by position, so the tool works on notebooks edited since: the
check cell calls its check (``check_calls_formula(`` ...) and defines nothing; the answer cell is the last code
cell before it that defines the answer's name (``predicted_calls`` ... ``CHOICE``), as ``helpers.grading.EXERCISES``
lists them. The answer cell becomes a solution cell, the check cell a graded test cell worth ``POINTS`` (it raises
under nbgrader's autograder on any verdict but correct). A notebook is rewritten only if its metadata changes, so a
second run changes nothing. In the source folder, the stub line of each answer cell (``# your code``) is replaced
by the worked answer from notebooks/solutions/ between ``### BEGIN SOLUTION`` and ``### END SOLUTION``, which
``nbgrader generate_assignment`` turns back into a stub.
"""
from __future__ import annotations

import argparse
import ast
import re
import sys
import textwrap
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers.grading import EXERCISES  # noqa: E402

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
POINTS = 1  # each exercise's check cell; change it here (or in formgrader) to weigh the exercises


def _defines(source: str, name: str) -> bool:
    return bool(re.search(rf"^\s*(def|class) {name}\b|^{name}\s*=", source, re.M))


def exercise_cells(book: nbformat.NotebookNode) -> list[tuple[str, int, int]]:
    """(exercise, answer cell index, check cell index) for each exercise whose check and answer cells are here
    (the first check of an exercise that is a cell of its own, and the last cell before it defining the answer)."""
    found = []
    for number, _, name, call in EXERCISES:
        code = [i for i, cell in enumerate(book.cells) if cell.cell_type == "code"]
        check = next((i for i in code if call in book.cells[i].source and not _defines(book.cells[i].source, name)),
                     None)
        answer = next((i for i in reversed(code) if check is not None and i < check
                       and _defines(book.cells[i].source, name)), None)
        if answer is not None:
            found.append((number, answer, check))
    return found


def mark(book: nbformat.NotebookNode) -> bool:
    """Write nbgrader's metadata into ``book``'s exercise cells; True if anything changed."""
    before = [dict(cell.metadata) for cell in book.cells]
    for number, answer, check in exercise_cells(book):
        grade_id = "exercise_" + number.replace(".", "_")
        for index, role in ((answer, "answer"), (check, "check")):
            graded = role == "check"
            book.cells[index].metadata["nbgrader"] = {
                "grade": graded, "grade_id": f"{grade_id}_{role}", "locked": graded,
                **({"points": POINTS} if graded else {}), "schema_version": 3, "solution": not graded, "task": False}
    return [dict(cell.metadata) for cell in book.cells] != before


def worked_answers() -> dict[str, str]:
    """Each answer's name -> the source of its first worked answer in notebooks/solutions/ (check lines left out)."""
    answers: dict[str, str] = {}
    for path in sorted((NOTEBOOKS / "solutions").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            for _, _, name, call in EXERCISES:
                if cell.cell_type == "code" and _defines(cell.source, name) and name not in answers:
                    answers[name] = "\n".join(line for line in cell.source.splitlines() if call not in line)
    return answers


def fill(stub: str, worked: str) -> str:
    """The stub cell with its ``# your code`` line (or ``CHOICE = ...``) replaced by the worked answer's matching
    body (the function or method of the stub line, its imports first), between nbgrader's solution markers."""
    lines = stub.splitlines()
    at = next(i for i, line in enumerate(lines) if "# your code" in line or re.match(r"CHOICE = \.\.\.", line))
    indent = re.match(r"\s*", lines[at]).group(0)
    inside = [node for node in ast.walk(ast.parse(stub)) if isinstance(node, ast.FunctionDef)
              and node.lineno <= at + 1 <= node.end_lineno]
    tree, source = ast.parse(worked), worked.splitlines()
    body = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    if inside:
        function = next(node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
                        and node.name == inside[-1].name)
        body += [node for node in function.body if not (isinstance(node, ast.Expr) and isinstance(
            node.value, ast.Constant) and isinstance(node.value.value, str))]  # its docstring stays the stub's
    else:
        body += [node for node in tree.body if isinstance(node, ast.Assign)]
    code = "\n".join(textwrap.dedent("\n".join(source[node.lineno - 1:node.end_lineno])) for node in body)
    solution = [f"{indent}### BEGIN SOLUTION", *textwrap.indent(code, indent).splitlines(), f"{indent}### END SOLUTION"]
    return "\n".join(lines[:at] + solution + lines[at + 1:])


def source_version(book: nbformat.NotebookNode, answers: dict[str, str]) -> nbformat.NotebookNode:
    """A marked copy of ``book`` whose answer cells hold the worked answers, as nbgrader's source wants them."""
    book = nbformat.from_dict(book)
    mark(book)
    names = {number: name for number, _, name, _ in EXERCISES}
    for number, answer, _ in exercise_cells(book):
        book.cells[answer].source = fill(book.cells[answer].source, answers[names[number]])
    return book


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="notebooks to mark (default: 01-07 and solutions)")
    parser.add_argument("--source", type=Path, help="also write nbgrader's source folder under this course folder")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted(NOTEBOOKS.glob("0[1-7]_*.ipynb")) + sorted(NOTEBOOKS.glob("solutions/*.ipynb"))
    for path in paths:
        book = nbformat.read(path, as_version=4)
        changed = mark(book)
        if changed:
            nbformat.write(book, path)
        print(f"{path.name}: {len(exercise_cells(book))} exercise(s), {'marked' if changed else 'unchanged'}")
        if args.source and exercise_cells(book) and not path.stem.endswith("_solutions"):
            target = args.source / "source" / path.stem / path.name
            target.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(source_version(book, worked_answers()), target)
            print(f"  nbgrader source: {target}")


if __name__ == "__main__":
    main()
