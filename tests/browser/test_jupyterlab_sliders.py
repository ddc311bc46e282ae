"""The lesson notebooks' sliders in a real JupyterLab, in headless Debian Chromium, as a student uses them: open the
notebook, Run > Run All Cells, no cell raises, move a slider with the keyboard, and the text under it shows the
lesson's figure for the new setting. A screenshot of each slider cell goes to a temporary folder
(``UPDATE_SCREENSHOTS=1`` writes docs/screenshots/, the README's pictures)."""
from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
DONE = f"""() => {{
    const panel = document.querySelector('{PANEL}');
    const state = panel && panel.querySelector('.jp-Notebook-ExecutionIndicator');
    const prompts = panel ? [...panel.querySelectorAll('.jp-CodeCell .jp-InputPrompt')] : [];
    return state && state.getAttribute('data-status') === 'idle' && prompts.length > 0
        && prompts.every(p => /\\[\\d+\\]/.test(p.textContent) || !p.closest('.jp-CodeCell').innerText.trim());
}}"""


def run_all(page, lab, notebook: str) -> None:
    """Open the notebook once its kernel is idle, run every cell from the Run menu, and wait until all have run."""
    page.goto(lab.url(notebook), wait_until="domcontentloaded")
    page.locator(f"{PANEL} .jp-Cell").first.wait_for()
    deadline = time.monotonic() + 60
    while not any(s["path"] == notebook and s["kernel"]["execution_state"] == "idle" for s in lab.api("/api/sessions") or []):
        assert time.monotonic() < deadline, f"no idle kernel for {notebook}"
        page.wait_for_timeout(250)
    page.locator(f"{PANEL} .jp-Cell").first.click()
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    page.wait_for_function(DONE, timeout=120_000, polling=250)
    errors = page.locator(f"{PANEL} .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    shown = [errors.nth(i).inner_text() for i in range(errors.count())]
    assert not [text for text in shown if "Traceback" in text or re.search(r"^\w*Error\b", text, re.M)], shown


def move(page, label: str, steps: int, expected: str, screenshot: Path | None = None) -> str:
    """Press the arrow key ``steps`` times on the slider described ``label``; wait until its readout shows
    ``expected`` (a pattern); return that text."""
    slider = page.locator(f"{PANEL} .widget-slider").filter(has=page.get_by_text(label, exact=True))
    cell = slider.locator("xpath=ancestor::div[contains(concat(' ', @class, ' '), ' jp-Cell ')][1]")
    readout = cell.locator(".widget-html")
    before = readout.inner_text()
    handle = slider.locator(".noUi-handle")
    handle.focus()
    for _ in range(abs(steps)):
        handle.press("ArrowRight" if steps > 0 else "ArrowLeft")
    deadline = time.monotonic() + 30
    while not re.search(expected, text := readout.inner_text()):
        assert time.monotonic() < deadline, f"after moving {label!r}, the readout never showed {expected!r}:\n{text}"
        page.wait_for_timeout(150)
    assert text != before
    if screenshot is not None:
        cell.evaluate("el => el.scrollIntoView({block: 'start'})")
        page.mouse.move(0, 0)
        page.screenshot(path=str(screenshot))
    return text


@pytest.fixture(scope="session")
def shots(tmp_path_factory) -> Path:
    if os.environ.get("UPDATE_SCREENSHOTS") == "1":
        return Path(__file__).resolve().parents[2] / "docs" / "screenshots"
    return tmp_path_factory.mktemp("screenshots")


def test_the_schedule_sliders_answer_with_the_lessons_figures(page, lab, shots):
    """Notebook 01 (notebook 04's panel is the same machinery, and its figures are tested without a browser)."""
    run_all(page, lab, "01_summary_schedule.ipynb")
    text = move(page, "keep verbatim", +1, r"summariser calls in 10 turns: 7", shots / "01_summary_schedule.png")
    assert "Summarise after 4 turns, keep 3 verbatim" in text  # keep 2 -> 3: 4 calls become 7
    move(page, "threshold", +2, r"Summarise after 6 turns, keep 3 verbatim:(.|\n)* calls in 10 turns: 2\b")
