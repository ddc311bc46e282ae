"""Every environment variable model access reads, read and checked in one place: providers and keys, other secrets,
settings; ``secret_variables()`` is the one list of secret names (for scrubbing and the tests' clean environment)."""
from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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
# What is not a secret but changes what model access does (the tests' environment removes these too).
SETTING_VARIABLES = ("LLM_MODE", "LLM_PROVIDER", "LLM_BASE_URL", "LLM_MODEL", "LLM_TIMEOUT", "LLM_MAX_RETRIES",
                     "LLM_REASONING_EFFORT", "LLM_RECORDINGS_DIR", "LLM_SYSTEM_MESSAGES")
DEFAULT_MAX_RETRIES = 2  # the SDK's own default
DEFAULT_TIMEOUT = 60.0  # seconds for one answer: the SDK's 600 looks like a frozen notebook in a live demo
SYSTEM_MESSAGE_MODES = ("as-written", "merge", "user")


def secret_variables() -> tuple[str, ...]:
    """The names of every variable that holds a secret: each provider's key, a custom server's key, the signing key."""
    return tuple(dict.fromkeys([*(p.key_env for p in PROVIDERS.values()), CUSTOM_KEY_ENV, SIGNING_KEY_ENV]))


def model_variables() -> tuple[str, ...]:
    """Every variable model access reads: the secrets and the settings (what a clean test environment removes)."""
    return (*secret_variables(), *SETTING_VARIABLES)


def env(name: str) -> str | None:
    """The variable's value without surrounding blanks, or None when it is unset or blank."""
    return os.environ.get(name, "").strip() or None


def _seconds(value: Any) -> float | None:
    seconds = float(value)
    return seconds if math.isfinite(seconds) and seconds > 0 else None


def _count(value: Any) -> int | None:
    count = int(value)
    return count if count >= 0 and not (isinstance(value, float) and value != count) else None


def _mode(value: str) -> str | None:
    return value.lower() if value.lower() in SYSTEM_MESSAGE_MODES else None


# argument -> (its variable, default, parser returning None for a value it refuses, what a good value is)
_SETTINGS: dict[str, tuple[str, Any, Callable[[Any], Any], str]] = {
    "timeout": ("LLM_TIMEOUT", DEFAULT_TIMEOUT, _seconds,
                "a positive number of seconds, such as 60 (the default) or 300 for a slow local server"),
    "max_retries": ("LLM_MAX_RETRIES", DEFAULT_MAX_RETRIES, _count,
                    "a whole number of retries, 0 or more (2 is the default, 0 suits a slow local server)"),
    "system_messages": ("LLM_SYSTEM_MESSAGES", SYSTEM_MESSAGE_MODES[0], _mode,
                        f"one of {', '.join(SYSTEM_MESSAGE_MODES)}: 'merge' joins every system message into the "
                        "first (for a chat format that keeps only the first), 'user' puts their text at the start of "
                        "the first user message (for a chat format with no system role); see docs/local_servers.md"),
}


def setting(argument: str, given: Any = None) -> Any:
    """``given``, else the argument's ``LLM_*`` variable, else its default, checked: a refused value raises
    ``SettingError`` naming where it came from (the argument or the variable)."""
    variable, default, read, wanted = _SETTINGS[argument]
    source, value = (argument, given) if given is not None else (variable, env(variable))
    if value is None:
        return default
    try:
        result = None if isinstance(value, bool) else read(value)
    except (TypeError, ValueError, OverflowError):
        result = None
    if result is None:
        raise SettingError(source, value, f"{source} must be {wanted}, got {value!r}. Fix {variable} in .env or your "
                           f"environment (or the {argument}= argument) and run again.")
    return result
