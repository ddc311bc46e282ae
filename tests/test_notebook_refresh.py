"""A refresh of an unchanged notebook leaves it byte-identical (issue 9): widget ids fixed, streams joined."""
from __future__ import annotations

import uuid

import nbclient
import nbformat

from helpers.setup.notebook_runner import (
    WIDGET_STATE,
    WIDGET_VIEW,
    execute_notebook,
    joined_streams,
    stable_widget_ids,
)


def widget_book(seed: int) -> nbformat.NotebookNode:
    """A notebook as nbclient leaves it: a slider view and its layout/style models, under fresh random ids."""
    ids = [uuid.UUID(int=(seed * 7919 + n) * 104729 % 2**128).hex for n in range(3)]
    slider, layout, style = ids
    state = {
        style: {"model_name": "SliderStyleModel", "state": {"description_width": ""}},
        slider: {"model_name": "IntSliderModel", "state": {"layout": f"IPY_MODEL_{layout}",
                                                            "style": f"IPY_MODEL_{style}", "value": 4}},
        layout: {"model_name": "LayoutModel", "state": {"width": None}},
    }
    if seed % 2:  # nbclient's order of the saved state varies too
        state = dict(reversed(list(state.items())))
    book = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("slider", id="slider-cell")
    cell.outputs = [nbformat.v4.new_output("display_data", data={WIDGET_VIEW: {"model_id": slider, "version_major": 2,
                                                                             "version_minor": 0},
                                                                "text/plain": "IntSlider(value=4)"})]
    book.cells.append(cell)
    book.metadata["widgets"] = {WIDGET_STATE: {"state": state, "version_major": 2, "version_minor": 0}}
    return book


def test_two_runs_with_different_widget_ids_are_written_byte_identically():
    first, second = (nbformat.writes(stable_widget_ids(widget_book(seed))) for seed in (1, 2))
    assert first == second
    stable = stable_widget_ids(widget_book(1))
    state = stable.metadata.widgets[WIDGET_STATE]["state"]
    view_id = stable.cells[0].outputs[0].data[WIDGET_VIEW]["model_id"]
    assert list(state)[0] == view_id  # the displayed model first, then what it refers to
    assert state[view_id]["state"]["layout"] == f"IPY_MODEL_{list(state)[1]}"  # references renamed with it


def test_a_cells_printing_cut_into_several_stream_messages_is_stored_as_one():
    book = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("print('a'); print('b')")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="a"),
                    nbformat.v4.new_output("stream", name="stdout", text="\nb\n"),
                    nbformat.v4.new_output("stream", name="stderr", text="warning\n")]
    book.cells.append(cell)
    outputs = joined_streams(book).cells[0].outputs
    assert [(o.name, o.text) for o in outputs] == [("stdout", "a\nb\n"), ("stderr", "warning\n")]


def test_executing_a_widget_notebook_twice_gives_the_same_bytes(tmp_path):
    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_code_cell("import ipywidgets as w\nw.IntSlider(value=3)"),
                  nbformat.v4.new_code_cell("for i in range(200):\n    print(i)")]
    path = tmp_path / "widgets.ipynb"
    nbformat.write(book, path)
    runs = [nbformat.writes(execute_notebook(path, timeout=60)) for _ in range(2)]
    assert runs[0] == runs[1] and WIDGET_VIEW in runs[0]


def test_a_project_error_in_a_notebook_shows_its_message_first_and_a_short_traceback(tmp_path):
    from helpers.base.paths import REPO_ROOT

    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_code_cell(
        f"import sys; sys.path.insert(0, {str(REPO_ROOT)!r})\n"
        "from helpers.model.errors import BadResponse\n"
        "def deep(n):\n    return deep(n - 1) if n else (_ for _ in ()).throw(BadResponse('Do this next.'))\n"
        "try:\n    deep(30)\nexcept BadResponse as error:\n    raise BadResponse('Run again. Or set LLM_MODE=offline.') from error",
        id="error-cell")]

    client = nbclient.NotebookClient(book, timeout=60, kernel_name="python3", allow_errors=True,
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    error = [o for o in book.cells[0].outputs if o.output_type == "error"][0]
    assert error.traceback[0] == "BadResponse: Run again. Or set LLM_MODE=offline."
    assert len(error.traceback) <= 3 and "%tb" in error.traceback[-1]


def test_a_notebooks_own_sdk_call_explains_its_error_first_and_tb_prints_the_whole_traceback(tmp_path):
    """Notebooks 02 and 05 call client.chat.completions.create(...) themselves: a failure there reads like the
    project's errors (what to do first, the echoed key scrubbed), and %tb still gives the full traceback."""
    from helpers.base.paths import REPO_ROOT
    from tests.support.openai_compatible_server import OpenAICompatibleServer

    with OpenAICompatibleServer(expected_key="the-right-key") as server:
        server.echo_key_in_401 = True
        server.public_models = True  # connect() reads the list; the notebook's own call gets the 401
        book = nbformat.v4.new_notebook()
        book.cells = [nbformat.v4.new_code_cell(source, id=f"cell-{n}") for n, source in enumerate([
            f"import sys; sys.path.insert(0, {str(REPO_ROOT)!r})\nfrom helpers.model.connect import connect\n"
            f"access = connect('live', base_url={server.base_url!r}, model='m', api_key='wrong-key-42', "
            "load_env=False, max_retries=0, quiet=True)",
            "access.client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': 'hi'}])",
            "%tb",
            "access.complete([{'role': 'user', 'content': 'hi'}])",
            "%tb"])]
        client = nbclient.NotebookClient(book, timeout=60, kernel_name="python3", allow_errors=True,
                                         resources={"metadata": {"path": str(tmp_path)}})
        client.execute()
    raw, raw_tb, ours, ours_tb = ([o for o in cell.outputs if o.output_type == "error"][0] for cell in book.cells[1:])
    assert raw.ename == "AuthenticationError" and len(raw.traceback) <= 3
    assert raw.traceback[0].startswith("AuthenticationError: ") and "rejected the API key (401)" in raw.traceback[0]
    assert "Bearer [REDACTED]" in raw.traceback[0] and "wrong-key-42" not in "".join(raw.traceback)
    def lines(output):
        return "\n".join(output.traceback).splitlines()

    assert len(ours.traceback) <= 3 and len(lines(raw_tb)) > 20 and len(lines(ours_tb)) > 20
