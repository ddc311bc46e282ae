"""tools/nbgrader_cells.py marks the exercise cells for nbgrader (a second run changes nothing), and nbgrader's own
generate and autograde steps grade them: full marks for the worked answers, none for the untouched notebooks,
part for a wrong answer. The notebook graded is the smallest that shows it: the exercise cells of notebooks 01 and
03 (copies, marked by the tool) and the import they need."""
from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import nbformat
import pytest

from tests.notebook_core_support import NOTEBOOKS

spec = importlib.util.spec_from_file_location("nbgrader_cells", NOTEBOOKS.parent / "tools" / "nbgrader_cells.py")
tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tool)


def marked_copies(folder: Path, names: list[str]) -> list[Path]:
    copies = [Path(shutil.copy(NOTEBOOKS / f"{name}.ipynb", folder)) for name in names]
    tool.main([str(path) for path in copies])
    return copies


def test_the_tool_marks_every_exercise_once_and_a_second_run_changes_nothing(tmp_path, capsys):
    names = [path.stem for path in sorted(NOTEBOOKS.glob("0[1-7]_*.ipynb"))]
    copies = marked_copies(tmp_path, names)
    first = [path.read_bytes() for path in copies]
    tool.main([str(path) for path in copies])
    assert [path.read_bytes() for path in copies] == first
    graded = {cell.metadata["nbgrader"]["grade_id"]: cell.metadata["nbgrader"] for path in copies
              for cell in nbformat.read(path, as_version=4).cells if "nbgrader" in cell.metadata}
    assert sorted(graded) == sorted(f"exercise_{n.replace('.', '_')}_{role}" for n, *_ in tool.EXERCISES
                                    for role in ("answer", "check"))
    assert all(m["grade"] == m["locked"] == ("points" in m) != m["solution"] for m in graded.values())
    assert capsys.readouterr().out.count("unchanged") >= len(names)


@pytest.mark.filterwarnings("ignore:Object of type")  # nbgrader 0.9's own SQLAlchemy session warnings
def test_nbgrader_gives_full_marks_none_and_part(tmp_path):
    api_module = pytest.importorskip("nbgrader.apps")
    from traitlets.config import Config

    one, three = (nbformat.read(path, as_version=4) for path in marked_copies(tmp_path, ["01_summary_schedule",
                                                                                          "03_drift_measurement"]))
    book = nbformat.v4.new_notebook(metadata=one.metadata, cells=[nbformat.v4.new_code_cell(
        "from helpers.lesson3 import check_calls_formula, check_rule_check, RULE_WORDS")])
    book.cells += [cell for cell in one.cells + three.cells if "nbgrader" in cell.metadata]
    source = tool.source_version(book, tool.worked_answers())
    wrong = nbformat.from_dict(source)  # 1.1 worked, 3.1 the keyword check of the lesson
    wrong.cells[-2].source = "def rule_kept(summary):\n    return 'equit' in summary.lower()"
    course = tmp_path / "course"
    for folder, notebook in (("source", source), ("submitted/solved", source), ("submitted/untouched", book),
                             ("submitted/partly", wrong)):
        (course / folder / "lesson").mkdir(parents=True)
        nbformat.write(notebook, course / folder / "lesson" / "exercises.ipynb")
    config = Config()
    config.CourseDirectory.root = str(course)
    api = api_module.NbGraderAPI(config=config)
    assert api.generate_assignment("lesson")["success"]
    scores = {}
    for student in ("solved", "untouched", "partly"):
        assert api.autograde("lesson", student)["success"]
        submission = api.get_submission("lesson", student)
        scores[student] = (submission["score"], submission["max_score"])
    assert scores == {"solved": (2, 2), "untouched": (0, 2), "partly": (1, 2)}
