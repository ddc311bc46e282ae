"""Every environment variable model access reads, in one place: the providers and their keys, the other
secrets, and the settings, each read and checked here.

The list of secret variables is the one list the project uses to scrub messages and recordings
(``helpers.model.secrets``) and to clean the tests' environment (``conftest.py``): a provider added to
``PROVIDERS`` has its key scrubbed and cleaned everywhere, with no other list to update.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

from helpers.base.signing import KEY_ENV as SIGNING_KEY_ENV
from helpers.memory.types import SettingError


@dataclass(frozen=True)
class Provider:
    """A hosted OpenAI-compatible endpoint we know by name."""

    name: str
    base_url: str
    key_env: str
    default_model: str


PROVIDERS: dict[str, Provider] = {
    "groq": Provider("Groq", "https://api.groq.com/openai/v1", "GROQ_API_KEY", "openai/gpt-oss-120b"),
    "openai": Provider("OpenAI", "https://api.openai.com/v1", "OPENAI_API_KEY", "gpt-4o-mini"),
}
DEFAULT_PROVIDER = "groq"  # the lessons' provider
CUSTOM_KEY_ENV = "LLM_API_KEY"  # the key of a server at LLM_BASE_URL, if it wants one


def default_provider(key_passed: bool) -> str:
    """The hosted provider when none is named: the lessons' (Groq), unless its key is unset and exactly one other
    provider's key is set (a key passed as an argument means the lessons' provider)."""
    if key_passed or env(PROVIDERS[DEFAULT_PROVIDER].key_env):
        return DEFAULT_PROVIDER
    others = [name for name, provider in PROVIDERS.items() if name != DEFAULT_PROVIDER and env(provider.key_env)]
    return others[0] if len(others) == 1 else DEFAULT_PROVIDER

# What is not a secret but changes what model access does (the tests' environment removes these too).
SETTING_VARIABLES = ("LLM_MODE", "LLM_PROVIDER", "LLM_BASE_URL", "LLM_MODEL", "LLM_TIMEOUT", "LLM_MAX_RETRIES",
                     "LLM_REASONING_EFFORT", "LLM_RECORDINGS_DIR", "LLM_SYSTEM_MESSAGES")

DEFAULT_MAX_RETRIES = 2  # the SDK's own default
# Seconds to wait for one answer. The SDK's own default is 600, which in a live demo on a flaky
# network looks like a frozen notebook; the lessons' calls take a few seconds. LLM_TIMEOUT overrides.
DEFAULT_TIMEOUT = 60.0

# How system messages are sent (LLM_SYSTEM_MESSAGES): as the notebook wrote them, joined into one leading
# system message (for chat formats that keep only the first), or put at the start of the first user message
# (for chat formats with no system role, which drop every one).
SYSTEM_MESSAGE_MODES = ("as-written", "merge", "user")


def secret_variables() -> tuple[str, ...]:
    """The names of every variable that holds a secret: each provider's key, a custom server's key, the signing key."""
    return tuple(dict.fromkeys([*(p.key_env for p in PROVIDERS.values()), CUSTOM_KEY_ENV, SIGNING_KEY_ENV]))


def model_variables() -> tuple[str, ...]:
    """Every variable model access reads: the secrets and the settings (what a clean test environment removes)."""
    return (*secret_variables(), *SETTING_VARIABLES)


def env(name: str) -> str | None:
    """The variable's value without surrounding blanks, or None when it is unset or blank."""
    value = os.environ.get(name, "").strip()
    return value or None


def timeout_seconds(timeout: float | None = None) -> float:
    """The bound on one whole answer, in seconds: ``timeout``, else env ``LLM_TIMEOUT``, else the default.

    Refuses what is not a positive, finite number (``nan``, ``inf``, ``1e400``, ``-5``) with a message naming LLM_TIMEOUT.
    """
    source, value = ("timeout", timeout) if timeout is not None else ("LLM_TIMEOUT", env("LLM_TIMEOUT"))
    if value is None:
        return DEFAULT_TIMEOUT
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = math.nan
    if isinstance(value, bool) or not math.isfinite(seconds) or seconds <= 0:
        raise SettingError(source, value, f"{source} must be a positive number of seconds, such as 60 (the "
                           f"default) or 300 for a slow local server, got {value!r}. Fix LLM_TIMEOUT in .env or your "
                           "environment (or the timeout= argument) and run again.")
    return seconds


def max_retries(retries: int | None = None) -> int:
    """How often the SDK tries a failed call again: ``retries``, else env ``LLM_MAX_RETRIES``, else 2.

    0 suits a slow local server: it keeps working on a request the client gave up on, so a retry queues behind it.
    """
    source, value = ("max_retries", retries) if retries is not None else ("LLM_MAX_RETRIES", env("LLM_MAX_RETRIES"))
    if value is None:
        return DEFAULT_MAX_RETRIES
    try:
        count = int(value) if not isinstance(value, bool) else -1
    except (TypeError, ValueError):
        count = -1
    if count < 0 or (isinstance(value, float) and value != count):
        raise SettingError(source, value, f"{source} must be a whole number of retries, 0 or more (2 is the "
                           f"default, 0 suits a slow local server), got {value!r}. Fix LLM_MAX_RETRIES in .env or your "
                           "environment (or the max_retries= argument) and run again.")
    return count


def system_message_mode(mode: str | None = None) -> str:
    """How system messages are sent: ``mode``, else env ``LLM_SYSTEM_MESSAGES``, else "as-written"."""
    source, value = ("system_messages", mode) if mode is not None else ("LLM_SYSTEM_MESSAGES",
                                                                       env("LLM_SYSTEM_MESSAGES"))
    if value is None:
        return SYSTEM_MESSAGE_MODES[0]
    if value.lower() not in SYSTEM_MESSAGE_MODES:
        raise SettingError(source, value, f"{source} must be one of {', '.join(SYSTEM_MESSAGE_MODES)}, got "
                           f"{value!r}: 'merge' joins every system message into the first (for a chat format that "
                           "keeps only the first), 'user' puts their text at the start of the first user message (for "
                           "a chat format with no system role). See docs/local_servers.md.")
    return value.lower()
