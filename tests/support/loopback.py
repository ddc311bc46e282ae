"""A client for the loopback OpenAI-compatible server (the ``server`` fixture in tests/conftest.py)."""
from __future__ import annotations

from typing import Any

from helpers.model.connect import ModelAccess, connect
from tests.support.openai_compatible_server import OpenAICompatibleServer

KEY = "loopback-test-key-0123456789"


def connect_to(server: OpenAICompatibleServer, mode: str = "live", **kwargs: Any) -> ModelAccess:
    """A quiet ``connect()`` to the loopback server with its key, ignoring any ``.env``."""
    kwargs.setdefault("quiet", True)
    kwargs.setdefault("api_key", KEY)
    kwargs.setdefault("model", "stand-in")
    return connect(mode, base_url=server.base_url, load_env=False, **kwargs)
