"""Fixtures shared by the tests that reach a model."""
import pytest

from helpers.model import connect as llm
from helpers.model.connect import connect
from helpers.model.settings import model_variables
from tests.support.loopback import KEY
from tests.support.openai_compatible_server import OpenAICompatibleServer


@pytest.fixture
def model_env(monkeypatch, tmp_path):
    """No key, no mode, no setting, no .env, recordings in a temp folder: each test sets what it needs."""
    for name in model_variables():
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LLM_RECORDINGS_DIR", str(tmp_path / "recordings"))
    monkeypatch.setattr(llm, "ENV_FILE", tmp_path / "no.env")


@pytest.fixture
def server():
    """An OpenAI-compatible server on loopback, answering with the offline stand-in; it expects ``KEY``."""
    with OpenAICompatibleServer(expected_key=KEY) as running:
        yield running


@pytest.fixture(scope="module")
def offline_access():
    """The offline stand-in's model access, one per test module (no .env read, nothing printed)."""
    return connect("offline", quiet=True, load_env=False)
