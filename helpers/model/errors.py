"""Errors of model access, each saying what happened and what to do next.

They subclass ``openai.OpenAIError`` so that one raised inside a transport passes through the SDK
unchanged (the SDK re-raises its own error type as it is, with no retry and no wrapping).
"""
from __future__ import annotations

import openai

from helpers.base.errors import Explained


class ModelAccessError(Explained, openai.OpenAIError):
    """Base of every model-access error in this project."""


class ModelUnavailable(ModelAccessError):
    """The endpoint could not answer (no network, rate limit, server error, rejected request)."""


class BadResponse(ModelUnavailable):
    """The endpoint answered 200 with something that is not a usable chat completion (HTML, bad JSON, no choices)."""


class MissingKey(ModelUnavailable):
    """Live or record mode was chosen but no API key (or server URL) is set."""


class RecordingMissing(ModelAccessError):
    """Replay mode found no recorded answer for a request (or no recording file at all)."""


class EmptyReply(ModelAccessError):
    """The model returned no text, even after one retry with a larger ``max_tokens``."""
