"""Errors of model access: a message saying what happened and what to do, the same facts as fields (``reason`` from
the closed set ``Reason``); as ``openai.OpenAIError``s, one raised in a transport passes the SDK unchanged."""
from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

import openai

from helpers.base.errors import Explained


class Reason(StrEnum):
    """What went wrong in a model call: the closed set of ``ModelAccessError.reason`` (each equal to its text)."""

    FAILED = "model access failed"  # the base class's: nothing more specific is known
    UNAVAILABLE = "unavailable"
    TIMEOUT = "timeout"
    NO_CONNECTION = "no connection"
    RATE_LIMIT = "rate limit"
    SERVER_ERROR = "server error"
    HTTP_ERROR = "http error"  # another status the server answered
    REJECTED_KEY = "rejected key"
    REJECTED_REQUEST = "rejected request"
    NOT_FOUND = "not found"
    CONTEXT_OVERFLOW = "context overflow"
    BAD_RESPONSE = "bad response"
    MISSING_KEY = "missing key"
    UNKNOWN_MODEL = "unknown model"
    NO_RECORDING = "no recording"
    EMPTY_REPLY = "empty reply"
    EMPTY_REPLY_CUT = "empty reply cut"  # empty twice, at the token limit: a larger limit is the fix
    SDK_ERROR = "sdk error"  # an SDK error of no known kind


class ModelAccessError(Explained, openai.OpenAIError):
    """Base of every model-access error: ``status`` is None when no answer came, ``attempts`` counts the SDK's tries,
    ``retry_can_help`` says whether sending it again may work; a subclass's own fields are class attributes."""

    default_reason: ClassVar[Reason] = Reason.FAILED
    default_retry_can_help: ClassVar[bool] = True
    default_setting: ClassVar[str | None] = None

    def __init__(self, message: str, *, reason: Reason | None = None, status: int | None = None,
                 attempts: int | None = None, retry_after: float | None = None, setting: str | None = None,
                 retry_can_help: bool | None = None, **fields: object) -> None:
        super().__init__(message)
        self.reason = Reason(reason) if reason else self.default_reason
        self.status, self.attempts, self.retry_after = status, attempts, retry_after
        self.setting = setting or self.default_setting
        self.retry_can_help = self.default_retry_can_help if retry_can_help is None else retry_can_help
        if unknown := [name for name in fields if not hasattr(type(self), name)]:
            raise TypeError(f"{type(self).__name__} has no field {', '.join(unknown)}")
        vars(self).update(fields)


class ModelUnavailable(ModelAccessError):
    """The endpoint could not answer (no network, rate limit, server error, rejected request)."""

    default_reason = Reason.UNAVAILABLE


class ContextOverflow(ModelUnavailable):
    """The request is longer than the server's context (``context_tokens``; the messages' share ``prompt_tokens``)."""

    default_reason = Reason.CONTEXT_OVERFLOW
    default_retry_can_help = False
    context_tokens: int | None = None
    prompt_tokens: int | None = None


class BadResponse(ModelUnavailable):
    """The endpoint answered 200 with something that is not a usable chat completion (HTML, bad JSON, no choices)."""

    default_reason = Reason.BAD_RESPONSE


class MissingKey(ModelAccessError):
    """Live or record mode was chosen but no API key is set (``setting`` names the variable to set)."""

    default_reason = Reason.MISSING_KEY
    default_retry_can_help = False


class UnknownModel(ModelAccessError):
    """No model is named for a server, or the server does not list the model named (``listed``: what it lists)."""

    default_reason = Reason.UNKNOWN_MODEL
    default_retry_can_help = False
    default_setting = "LLM_MODEL"
    listed: tuple[str, ...] = ()


class RecordingMissing(ModelAccessError):
    """Replay mode found no recorded answer for a request (or no recording file at all)."""

    default_reason = Reason.NO_RECORDING
    default_retry_can_help = False


class EmptyReply(ModelAccessError):
    """The model returned no text, even after one retry with a larger ``max_tokens``."""

    default_reason = Reason.EMPTY_REPLY
