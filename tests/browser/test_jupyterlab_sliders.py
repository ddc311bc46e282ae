"""The notebooks' ipywidgets sliders work in a real JupyterLab (GitHub issue 5).

Each test opens a notebook in JupyterLab in headless Debian Chromium, runs all cells from the
Run menu, waits for the kernel to be idle, moves a slider with the keyboard as a student would,
and checks that the output the slider drives now shows the lesson's figure for the new setting.
A screenshot of each lesson notebook (after the move, the slider's whole cell and chart in view) goes to a
temporary folder; ``UPDATE_SCREENSHOTS=1`` sends it to docs/screenshots/<stem>.png (the README's pictures).

Run:  pytest -m browser tests/browser      (needs /usr/bin/chromium: .ci/install-browser)
      UPDATE_SCREENSHOTS=1 pytest tests/browser      refreshes docs/screenshots/
"""
from __future__ import annotations

import re

import nbformat
import pytest

from . import lab_driver as lab

pytestmark = pytest.mark.browser


def _open_and_run(page, server, notebook: str) -> None:
    lab.open_notebook(page, server, notebook)
    lab.run_all_cells(page)
    errors = lab.error_outputs(page)
    assert not errors, f"{notebook}: cells raised errors:\n" + "\n---\n".join(errors)
    skipped = lab.unexecuted_code_cells(page)
    assert not skipped, f"{notebook}: Run All Cells left cells unexecuted: {skipped}"


def _require_notebook(lab_root, name: str) -> None:
    if not (lab_root / name).is_file():
        pytest.fail(f"notebooks/{name} is missing: the browser test needs it (issue 5)")


# ---------------------------------------------------------------------------
# Harness self-test: a tiny notebook written here, so a failure of the lesson tests below can be
# told apart from a broken JupyterLab / ipywidgets / Chromium setup.
# ---------------------------------------------------------------------------

SELFTEST = "_browser_selftest.ipynb"


@pytest.fixture(scope="module")
def selftest_notebook(lab_root):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                 "language": "python"}
    nb.cells = [
        nbformat.v4.new_code_cell("import os\nimport ipywidgets as widgets\n"
                                  "print('LLM_MODE =', os.environ.get('LLM_MODE'))"),
        nbformat.v4.new_code_cell(
            "def show(tens=2, units=5):\n"
            "    print(f'value: {tens * 10 + units}')\n"
            "widgets.interactive(show,\n"
            "    tens=widgets.IntSlider(value=2, min=0, max=9, description='Tens'),\n"
            "    units=widgets.IntSlider(value=5, min=0, max=9, description='Units'))"
        ),
        nbformat.v4.new_code_cell("show(2, 5)"),
    ]
    path = lab_root / SELFTEST
    nbformat.write(nb, path)
    yield SELFTEST
    path.unlink(missing_ok=True)


def test_selftest_slider_drives_output(lab_page, lab_server, selftest_notebook):
    page = lab_page
    _open_and_run(page, lab_server, selftest_notebook)

    first_output = lab.notebook_panel(page).locator(".jp-Cell-outputArea").first.inner_text()
    assert "LLM_MODE = offline" in first_output

    assert lab.slider_descriptions(page) == ["Tens", "Units"]
    assert lab.output_text(page, "Tens").strip() == "value: 25"

    assert lab.move_slider(page, "Tens", +1) == "3"  # arrow key on the focused handle
    lab.wait_output_contains(page, "Tens", "value: 35")

    assert lab.set_slider_value(page, "Units", 8) == "8"  # typed into the readout
    lab.wait_output_contains(page, "Units", "value: 38")

    assert lab.move_slider(page, "Units", -2) == "6"
    text = lab.wait_output_contains(page, "Units", "value: 36")
    assert text.strip() == "value: 36"


# ---------------------------------------------------------------------------
# The lesson notebooks
# ---------------------------------------------------------------------------

NB_SCHEDULE = "01_summary_schedule.ipynb"
NB_BUDGET = "04_budget_analysis.ipynb"

# Slider descriptions as helpers.display.widgets shows them (matched case-insensitively, ':' ignored).
SCHEDULE_KEEP = "keep verbatim"  # schedule_panel: "threshold", "keep verbatim", "turns"
BUDGET = "budget"  # budget_panel: "budget" (step 50), "reply tokens", "compress"

# Lesson 4's figures with 100-token replies, 4 messages compressed per overflow.
BUDGET_OVERFLOWS = {300: 4, 400: 4, 600: 3, 800: 2, 1000: 1, 1500: 0}


def calls_line(calls: int, turns: int = 10):
    """The last line of helpers.display.lines.schedule_text."""
    return re.compile(rf"summariser calls in {turns} turns:\s*{calls}\b")


def budget_line(budget: int, overflows: int, peak: int | None = None):
    """helpers.display.widgets.render_budget's summary line for the chosen budget."""
    tail = rf", largest buffer: {peak:,} tokens".replace(",", ",?") if peak is not None else ""
    return re.compile(rf"budget {budget}: overflows: {overflows}\b{tail}")


def table_row(budget: int, overflows: int):
    """A row of helpers.display.lines.budget_table_text: 'Budget | Overflows | Largest buffer'."""
    return re.compile(rf"^\s*{budget}\s*\|\s*{overflows}\s*\|", re.M)


def test_summary_schedule_keep_verbatim_slider(lab_page, lab_server, lab_root, screenshot_dir):
    _require_notebook(lab_root, NB_SCHEDULE)
    page = lab_page
    _open_and_run(page, lab_server, NB_SCHEDULE)

    keep = lab.find_slider(page, SCHEDULE_KEEP)
    assert lab.slider_readout(keep) == "2"
    # Lesson 3: summarise after 4 turns, keep 2 verbatim, 10 turns -> 4 summariser calls.
    lab.wait_output_contains(page, SCHEDULE_KEEP, calls_line(4))

    assert lab.move_slider(page, SCHEDULE_KEEP, +1) == "3"  # ArrowRight on the focused handle
    # Keep 3 verbatim -> 7 calls.
    text = lab.wait_output_contains(page, SCHEDULE_KEEP, calls_line(7))
    assert not calls_line(4).search(text), text
    assert "keep 3 verbatim" in text, text

    lab.screenshot_slider(page, SCHEDULE_KEEP, screenshot_dir / "01_summary_schedule.png")


def test_budget_analysis_budget_slider(lab_page, lab_server, lab_root, screenshot_dir):
    _require_notebook(lab_root, NB_BUDGET)
    page = lab_page
    _open_and_run(page, lab_server, NB_BUDGET)

    budget = lab.find_slider(page, BUDGET)
    assert lab.slider_readout(budget) == "600"
    text = lab.wait_output_contains(page, BUDGET, budget_line(600, BUDGET_OVERFLOWS[600]))
    for b, n in BUDGET_OVERFLOWS.items():  # the lesson's whole table is printed too
        assert table_row(b, n).search(text), f"no row '{b} | {n} |' in:\n{text}"

    # Arrow keys: 4 steps of 50 tokens -> 800, 2 overflows.
    assert lab.move_slider(page, BUDGET, +4) == "800"
    lab.wait_output_contains(page, BUDGET, budget_line(800, BUDGET_OVERFLOWS[800]))

    # Typed into the readout: 1500 -> no overflow, the buffer peaks at 1,142 tokens.
    assert lab.set_slider_value(page, BUDGET, 1500) == "1500"
    lab.wait_output_contains(page, BUDGET, budget_line(1500, 0, peak=1142))

    lab.screenshot_slider(page, BUDGET, screenshot_dir / "04_budget_analysis.png")
