"""Notebook 06 outside its stored offline run: with a signing key in the environment (as the README
suggests putting in .env), and live against an OpenAI-compatible server in record mode, then replay.

The server is on loopback and answers with the offline stand-in; what is checked is the path (the
mode line, the figures labelled with the model, the recording, replay giving the same outputs), not
a model's behaviour.
"""
from __future__ import annotations

import json
import re

import nbformat
import pytest

from helpers.base.paths import NOTEBOOKS_DIR
from helpers.setup.notebook_runner import execute_notebook
from tests.support.notebook_text import cell_text
from tests.support.openai_compatible_server import OpenAICompatibleServer

NOTEBOOK = NOTEBOOKS_DIR / "06_summary_memory_attack_surface.ipynb"
KEY = "notebook-06-test-key-0123456789"

pytestmark = pytest.mark.usefixtures("model_env")


def outputs(book) -> list[str]:
    return [cell_text(cell) for cell in book.cells if cell.cell_type == "code"]


def test_with_a_signing_key_set_the_notebook_runs_and_prints_what_it_stores(monkeypatch):
    # the unsigned demos of section 5 say "no key" themselves, so a key in .env changes none of the story
    monkeypatch.setenv("LLM_MODE", "offline")
    monkeypatch.setenv("MEMORY_SIGNING_KEY", "a student's key from .env")
    ran = outputs(execute_notebook(NOTEBOOK))
    stored = outputs(nbformat.read(NOTEBOOK, as_version=4))
    figure = re.compile(r"<Figure size [^>]*>")
    assert [figure.sub("<Figure>", text) for text in ran] == [figure.sub("<Figure>", text) for text in stored]


def test_record_against_a_server_then_replay_labels_every_figure_with_the_model(monkeypatch, tmp_path):
    monkeypatch.setenv("LLM_RECORDINGS_DIR", str(tmp_path))
    with OpenAICompatibleServer(expected_key=KEY) as server:
        monkeypatch.setenv("LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("LLM_MODEL", "stand-in")
        monkeypatch.setenv("LLM_API_KEY", KEY)
        monkeypatch.setenv("LLM_MODE", "record")
        recorded = outputs(execute_notebook(NOTEBOOK))
    saved = (tmp_path / (NOTEBOOK.stem + ".json")).read_text(encoding="utf-8")
    assert json.loads(saved)["exchanges"] and KEY not in saved and "uthorization" not in saved
    assert recorded[1].startswith("Model: record | OpenAI-compatible server") and "| stand-in |" in recorded[1]
    text = "\n".join(recorded)
    # a live run takes one payload per family and names the model that wrote the summaries
    assert "7 payloads, summaries by stand-in, record mode" in text and "offline stand-in:" not in text
    assert "plain input (stand-in):" in text

    for name in ("LLM_BASE_URL", "LLM_MODEL", "LLM_API_KEY"):
        monkeypatch.delenv(name)
    monkeypatch.setenv("LLM_MODE", "replay")
    replayed = outputs(execute_notebook(NOTEBOOK))
    assert replayed[1].startswith("Model: replay |") and "| stand-in |" in replayed[1]
    assert replayed[2:] == [part.replace("record mode", "replay mode") for part in recorded[2:]]
