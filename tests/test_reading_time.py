"""Each lesson notebook's main path (up to "Going deeper") reads in 20 minutes or less by issue 22's model:
markdown and output words at 200 a minute, code lines at 8 a minute, a chart as 60 words."""
from __future__ import annotations

import importlib.util
import json

import pytest

from helpers.base.paths import NOTEBOOKS_DIR, REPO_ROOT

_SPEC = importlib.util.spec_from_file_location("reading_time", REPO_ROOT / "tools" / "reading_time.py")
reading_time = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(reading_time)

LESSON_NOTEBOOKS = ["01_summary_schedule", "02_summary_memory_run", "03_drift_measurement", "04_budget_analysis",
                    "05_summary_buffer_run"]


@pytest.mark.parametrize("name", LESSON_NOTEBOOKS)
def test_the_main_path_reads_in_twenty_minutes_or_less(name):
    minutes = reading_time.main_path_minutes(NOTEBOOKS_DIR / f"{name}.ipynb")
    assert minutes <= 20, f"{name}: the main path reads in {minutes:.1f} minutes by the model"


def test_the_model_counts_words_code_lines_and_charts_and_stops_at_going_deeper(tmp_path):
    cells = [{"cell_type": "markdown", "source": ["word " * 200]},
             {"cell_type": "code", "source": ["a = 1\n", "\n", "b = 2\n"],
              "outputs": [{"output_type": "stream", "text": ["out " * 100]},
                          {"output_type": "display_data", "data": {"image/png": "x", "text/plain": "<Figure>"}}]},
             {"cell_type": "markdown", "source": ["## Going deeper\n", "word " * 1000]},
             {"cell_type": "code", "source": ["c = 3\n"] * 80, "outputs": []}]
    path = tmp_path / "01_x.ipynb"
    path.write_text(json.dumps({"cells": cells}))
    assert reading_time.main_path_minutes(path) == pytest.approx(200 / 200 + 2 / 8 + (100 + 60) / 200)
