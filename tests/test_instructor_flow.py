"""The instructor's flow on a real notebook, unedited: record before class, then in class a
rate-limited endpoint is answered from the recording, and replay works with no endpoint at all.

The endpoint is an OpenAI-compatible server on loopback (serving the offline stand-in), set by
environment variables as an instructor would set Groq's key; nothing in the notebook changes.
"""
from __future__ import annotations

import json

import pytest

from helpers.base.paths import NOTEBOOKS_DIR
from helpers.setup.notebook_runner import execute_notebook
from tests.support.notebook_text import cell_text
from tests.support.openai_compatible_server import OpenAICompatibleServer

NOTEBOOK = NOTEBOOKS_DIR / "02_summary_memory_run.ipynb"
KEY = "instructor-test-key-0123456789"
FALLBACK = "live call failed (429); answered from recording"

pytestmark = pytest.mark.usefixtures("model_env")


def turn_lines(book) -> list[str]:
    """The lesson-format lines the run cells printed, without the fallback notices."""
    return [line for cell in book.cells if cell.cell_type == "code"
            for line in cell_text(cell).splitlines()
            if line.startswith(("[Turn", "  [SUMMARISE]", "FinCoach, turn 6"))]


def label(book) -> str:
    return next(line for cell in book.cells if cell.cell_type == "code"
                for line in cell_text(cell).splitlines() if line.startswith("Model: "))


def test_record_then_fall_back_then_replay_without_editing_a_cell(monkeypatch, tmp_path):
    recordings = tmp_path / "recordings"
    monkeypatch.setenv("LLM_RECORDINGS_DIR", str(recordings))
    with OpenAICompatibleServer(expected_key=KEY) as server:
        monkeypatch.setenv("LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("LLM_MODEL", "stand-in")
        monkeypatch.setenv("LLM_API_KEY", KEY)

        monkeypatch.setenv("LLM_MODE", "record")  # before class
        recorded = execute_notebook(NOTEBOOK)
        saved = (recordings / "02_summary_memory_run.json").read_text(encoding="utf-8")
        # 14 calls: the six-turn run (6 replies, 2 summaries), then the sliding window's 6 replies
        assert len(json.loads(saved)["exchanges"]) == 14 and KEY not in saved and "uthorization" not in saved
        assert label(recorded).startswith("Model: record | OpenAI-compatible server")
        assert any(line.startswith("FinCoach, turn 6") and "₹1,20,000" in line for line in turn_lines(recorded))

        monkeypatch.delenv("LLM_MODE")  # in class: a server is configured, so live; and it rate-limits
        server.fail_always(429)
        in_class = execute_notebook(NOTEBOOK)
        assert label(in_class).startswith("Model: live | OpenAI-compatible server")
        assert turn_lines(in_class) == turn_lines(recorded)
        notices = [line for cell in in_class.cells if cell.cell_type == "code"
                   for line in cell_text(cell).splitlines() if line.startswith(FALLBACK)]
        assert len(notices) == 14  # every call said where its answer came from

    for name in ("LLM_BASE_URL", "LLM_MODEL", "LLM_API_KEY"):  # no endpoint, no key: replay is the default
        monkeypatch.delenv(name)
    replayed = execute_notebook(NOTEBOOK)
    assert label(replayed).startswith("Model: replay |") and "LLM_MODE not set" in label(replayed)
    assert turn_lines(replayed) == turn_lines(recorded)
