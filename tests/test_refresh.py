"""tools/refresh_notebooks.py and what it stores: a refresh of an unchanged notebook is byte-identical (widget ids
renamed in a fixed order, a cell's printing joined into one stream), checked on the stored notebooks' own outputs
rather than by executing them again; only an offline run stores outputs unless asked; a record run says how to see
each new or changed recording; a project error shows its message first in a notebook."""
from __future__ import annotations

import subprocess
import sys
import uuid

import nbformat
import pytest

from helpers.base.paths import NOTEBOOKS_DIR, REPO_ROOT
from helpers.memory.types import SettingError

sys.path.insert(0, str(REPO_ROOT / "tools"))
import refresh_notebooks as tool  # noqa: E402  (a script, imported from its folder)
from refresh_notebooks import WIDGET_STATE, WIDGET_VIEW, joined_streams, stable_widget_ids  # noqa: E402


def widget_book(seed: int) -> nbformat.NotebookNode:
    """A notebook as nbclient leaves it: a slider view and its layout and style models, under fresh random ids, the
    saved state in an order that varies too."""
    slider, layout, style = (uuid.UUID(int=(seed * 7919 + n) * 104729 % 2**128).hex for n in range(3))
    state = {style: {"model_name": "SliderStyleModel", "state": {}},
             slider: {"model_name": "IntSliderModel", "state": {"layout": f"IPY_MODEL_{layout}",
                                                                "style": f"IPY_MODEL_{style}", "value": 4}},
             layout: {"model_name": "LayoutModel", "state": {}}}
    book = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("slider", id="slider-cell")
    cell.outputs = [nbformat.v4.new_output("display_data", data={WIDGET_VIEW: {"model_id": slider}, "text/plain": "S"})]
    book.cells.append(cell)
    book.metadata["widgets"] = {WIDGET_STATE: {"state": dict(reversed(state.items())) if seed % 2 else state}}
    return book


def test_two_runs_with_different_widget_ids_are_stored_byte_identically():
    first, second = (nbformat.writes(stable_widget_ids(widget_book(seed))) for seed in (1, 2))
    assert first == second
    stable = stable_widget_ids(widget_book(1))
    state, view = stable.metadata.widgets[WIDGET_STATE]["state"], stable.cells[0].outputs[0].data[WIDGET_VIEW]
    assert list(state)[0] == view["model_id"] and state[view["model_id"]]["state"]["layout"] == f"IPY_MODEL_{list(state)[1]}"


def test_a_cells_printing_cut_into_several_messages_is_stored_as_one_stream():
    book = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("print('a'); print('b')")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="a"),
                    nbformat.v4.new_output("stream", name="stdout", text="\nb\n"),
                    nbformat.v4.new_output("stream", name="stderr", text="warning\n")]
    book.cells.append(cell)
    assert [(o.name, o.text) for o in joined_streams(book).cells[0].outputs] == [("stdout", "a\nb\n"), ("stderr", "warning\n")]


@pytest.mark.parametrize("name", ["01_summary_schedule", "04_budget_analysis"])
def test_the_stored_slider_notebooks_are_already_what_a_refresh_writes(name):
    """The widget notebooks hold what the refresh's output processing makes of them: writing them again changes
    no byte (a refresh that executed them would pass its outputs through the same two steps)."""
    path = NOTEBOOKS_DIR / f"{name}.ipynb"
    book = nbformat.read(path, as_version=4)
    assert book.metadata["widgets"][WIDGET_STATE]["state"], "the slider's state is stored"
    assert nbformat.writes(stable_widget_ids(joined_streams(book))) + "\n" == path.read_text(encoding="utf-8")


@pytest.fixture
def calls(monkeypatch, tmp_path):
    """The tool's main() with notebooks that are not executed: each call's (path, timeout, store) is kept."""
    made: list[tuple[str, int, bool]] = []
    monkeypatch.setattr(tool, "refresh", lambda path, timeout, store: made.append((path.name, timeout, store)) or 0.0)
    monkeypatch.setenv("LLM_RECORDINGS_DIR", str(tmp_path / "recordings"))
    monkeypatch.setenv("LLM_MODE", "offline")
    return made


@pytest.mark.parametrize("argv, timeout, store", [
    (["02"], 600, True), (["--mode", "replay", "02"], 600, False), (["--mode", "record", "02"], 7200, False),
    (["--mode", "record", "--store-outputs", "--cell-timeout", "9000", "02"], 9000, True)])
def test_only_an_offline_run_stores_outputs_unless_asked_and_live_cells_get_longer(calls, capsys, argv, timeout, store):
    assert tool.main(argv) == 0
    assert calls == [("02_summary_memory_run.ipynb", timeout, store)]
    assert ("stored outputs left as they were" in capsys.readouterr().out) is (not store)
    with pytest.raises(SystemExit):
        tool.main(["--cell-timeout", "0", "02"])


def test_a_new_recording_is_shown_with_git_add_n_and_a_changed_one_with_git_diff(tmp_path):
    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True,
                       env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                            "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"})

    git("init", "-q")
    old, new, untouched = (tmp_path / f"{n}.json" for n in ("05_summary_buffer_run", "02_summary_memory_run", "03_x"))
    old.write_text("{}", encoding="utf-8")
    git("add", old.name)
    git("commit", "-qm", "recorded")
    untouched.write_text("{}", encoding="utf-8")
    before = tool.recordings_state(tmp_path)
    old.write_text('{"exchanges": []}', encoding="utf-8")
    new.write_text("{}", encoding="utf-8")
    lines = tool.recording_lines(before, tool.recordings_state(tmp_path))
    assert len(lines) == 2 and f"git add -N {new} && git diff {new}" in lines[0]
    assert lines[1] == f"changed recording {old}: see what changed with  git diff {old}"


def test_a_project_error_shows_its_message_first_then_the_whole_traceback_on_tb():
    try:
        raise SettingError("max_buffer_tokens", 0, "max_buffer_tokens must be at least 1, got 0")
    except SettingError as error:
        short, whole = error._render_traceback_(), error._render_traceback_()
    assert short[0] == "SettingError: max_buffer_tokens must be at least 1, got 0" and len(short) <= 3
    assert "%tb" in short[-1] and len(whole) > len(short)
