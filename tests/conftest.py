"""Fixtures shared by the model-access tests."""
import pytest

from helpers.model import connect as llm
from tests.support.loopback import KEY
from tests.support.openai_compatible_server import OpenAICompatibleServer

MODEL_ENV_VARS = ("LLM_MODE", "GROQ_API_KEY", "OPENAI_API_KEY", "LLM_API_KEY", "LLM_BASE_URL", "LLM_MODEL",
                  "LLM_PROVIDER", "LLM_REASONING_EFFORT", "LLM_TIMEOUT")


@pytest.fixture
def model_env(monkeypatch, tmp_path):
    """No key, no mode, no custom server, no .env, recordings in a temp folder: each test sets what it needs."""
    for name in MODEL_ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LLM_RECORDINGS_DIR", str(tmp_path / "recordings"))
    monkeypatch.setattr(llm, "ENV_FILE", tmp_path / "no.env")


@pytest.fixture
def server():
    """An OpenAI-compatible server on loopback, answering with the offline stand-in; it expects ``KEY``."""
    with OpenAICompatibleServer(expected_key=KEY) as running:
        yield running
