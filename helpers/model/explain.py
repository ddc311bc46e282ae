"""An SDK error turned into the project's error: what happened and what to do next, in one paragraph,
with the facts as fields (status, attempts, the wait asked for, the setting to change, whether a
retry can help) and every secret scrubbed.

``ModelAccess.complete()`` raises what ``model_error`` builds; a notebook's own
``client.chat.completions.create(...)`` shows the same message (``helpers.model.notebook_errors``).
"""
from __future__ import annotations

import math
import re
from typing import Any, Protocol

import openai

from helpers.model.errors import ContextOverflow, ModelUnavailable
from helpers.model.responses import CallTrace
from helpers.model.secrets import configured_secrets, scrub_text


class ModelAccess(Protocol):
    """What an explanation reads of the client that made the call (``helpers.model.connect.ModelAccess``)."""

    endpoint: str
    model: str
    provider: str
    key_env: str
    max_retries: int
    timeout: float
    trace: CallTrace
    secrets: list[str]

FALLBACK = "or run without the network: LLM_MODE=replay (recorded answers) or LLM_MODE=offline (the stand-in)"

# How servers word "the request does not fit my context" (llama-cpp-python and vLLM: "This model's maximum
# context length is 512 tokens. However, you requested 1566 tokens (542 in the messages, ...)"; llama.cpp's
# server: "exceeds the available context size"; OpenAI and Groq: code context_length_exceeded; LM Studio:
# "loaded with context length of only 512 tokens").
_OVERFLOW = re.compile(r"maximum context length|context[ _]length|context window|exceed_context_size|"
                       r"available context size|context size|\bn_ctx\b|prompt is too long", re.IGNORECASE)
_CONTEXT_NUMBERS = (re.compile(r"maximum context length is (\d+)", re.I), re.compile(r"context window of (\d+)", re.I),
                    re.compile(r"context length of only (\d+)", re.I), re.compile(r"\bn_ctx\W+(\d+)", re.I))
_PROMPT_NUMBERS = (re.compile(r"(\d+) in the messages", re.I), re.compile(r"n_prompt_tokens\W+(\d+)", re.I))


def model_error(error: BaseException, access: ModelAccess) -> ModelUnavailable:
    """The project's error for an SDK error from a call through ``access`` (message and fields, secrets scrubbed)."""
    built = _error_for(error, access)
    message = scrub_text(str(built), [*access.secrets, *configured_secrets()])
    built.args = (message,)
    return built


def explain_error(error: BaseException, access: ModelAccess) -> str:
    """The message of ``model_error``: what happened and what to do next, with every secret scrubbed."""
    return str(model_error(error, access))


def is_context_overflow(error: BaseException) -> bool:
    """True for a server's answer that the request is longer than its context."""
    return (isinstance(error, openai.APIStatusError) and error.status_code in (400, 413, 422, 500)
            and bool(_OVERFLOW.search(_server_words(error, limit=2000) + " " + _error_code(error))))


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."


def _error_code(error: BaseException) -> str:
    body = getattr(error, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else None
    if not isinstance(inner, dict):
        return ""
    return " ".join(f"{key} {value}" for key, value in inner.items() if key in ("code", "type", "n_ctx",
                                                                                  "n_prompt_tokens"))


def _server_words(error: BaseException, limit: int = 300) -> str:
    """What the server itself said in an error answer (its ``error.message``, else its text), shortened."""
    body = getattr(error, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(inner, dict):
        inner = inner.get("message") or inner.get("detail")
    if isinstance(inner, str) and inner.strip():
        return " ".join(inner.split())[:limit]
    response = getattr(error, "response", None)
    try:
        text = response.text if response is not None else ""
    except Exception:  # noqa: BLE001 (an unread stream: nothing more to quote)
        text = ""
    return " ".join(text.split())[:limit] or str(getattr(error, "message", "") or "")[:limit]


def _first_number(patterns: tuple[re.Pattern[str], ...], text: str) -> int | None:
    for pattern in patterns:
        match = pattern.search(text)
        if match:
            return int(match.group(1))
    return None


def duration(seconds: float) -> str:
    """A wait in words: "30 seconds", "60 minutes", "2.5 hours"."""
    if not math.isfinite(seconds):
        return "longer than any retry"
    if seconds < 120:
        return f"{seconds:g} seconds"
    if seconds < 7200:
        return f"{seconds / 60:.0f} minutes"
    return f"{seconds / 3600:.1f} hours"


def _overflow(error: openai.APIStatusError, where: str, detail: str, attempts: int) -> ContextOverflow:
    said = _server_words(error, limit=2000) + " " + _error_code(error)
    context, prompt = _first_number(_CONTEXT_NUMBERS, said), _first_number(_PROMPT_NUMBERS, said)
    if context is not None and prompt is not None and prompt <= context:
        fit = (f" The messages ({prompt} tokens) fit its context of {context} tokens but the reply limit does not: "
               "lower max_tokens, or")
    elif context is not None and prompt is not None:
        fit = (f" The messages alone ({prompt} tokens) are longer than its context of {context} tokens, so a "
               "shorter reply cannot help:")
    else:
        fit = ""
    return ContextOverflow(
        f"{where} rejected the request as too long for the server's context ({error.status_code}).{detail}{fit} "
        "start the server with a larger context (llama.cpp and llama-cpp-python: --n_ctx, e.g. --n_ctx 8192), or "
        "keep the requests smaller (a smaller max_buffer_tokens or max_turns_before_summary for the memory). "
        "Nothing was stored: the memory is as it was before this call, and sending the same request again "
        "cannot work. Replay and offline still work: LLM_MODE=replay (recorded answers) or LLM_MODE=offline "
        "(the stand-in).", status=error.status_code, attempts=attempts, setting="--n_ctx",
        context_tokens=context, prompt_tokens=prompt)


def _error_for(error: BaseException, access: ModelAccess) -> ModelUnavailable:
    where = f"{access.endpoint} (model {access.model})"
    made = access.trace.attempts or access.max_retries + 1
    tries = "1 attempt" if made == 1 else f"{made} attempts, the SDK retrying with backoff"
    asked_wait = access.trace.retry_after
    wait = asked_wait if (asked_wait or 0) >= 1 else None  # a wait worth naming
    status = error.status_code if isinstance(error, openai.APIStatusError) else None
    facts: dict[str, Any] = {"status": status, "attempts": made, "retry_after": asked_wait}
    detail = ""
    if isinstance(error, openai.APIStatusError):
        words = _server_words(error)
        detail = f" The server said: {_sentence(words)}" if words else ""
    if isinstance(error, openai.APITimeoutError):
        return ModelUnavailable(
            f"{where} sent no complete answer within LLM_TIMEOUT={access.timeout:g} seconds ({tries}). "
            "A slow server needs a larger LLM_TIMEOUT (a local model on a CPU can take minutes for a long reply): "
            "set e.g. LLM_TIMEOUT=300 in .env or your environment and restart the kernel; a slow server also "
            "keeps working on a request the client gave up on, so set LLM_MAX_RETRIES=0 for one. If the server "
            f"should be fast, check the network or the server, then run again; {FALLBACK}.",
            reason="timeout", setting="LLM_TIMEOUT", **facts)
    if isinstance(error, openai.APIConnectionError):
        cause = f" ({type(error.__cause__).__name__})" if error.__cause__ else ""
        return ModelUnavailable(
            f"Could not reach {where}{cause} after {tries}: no network, or the server is not running at that "
            f"address (check LLM_BASE_URL). Connect and run again; {FALLBACK}.",
            reason="no connection", setting="LLM_BASE_URL" if access.provider == "custom" else None, **facts)
    if is_context_overflow(error):
        assert isinstance(error, openai.APIStatusError)
        return _overflow(error, where, detail, made)
    if isinstance(error, openai.RateLimitError):
        asked = ""
        if wait is not None:
            asked = f" It asked to wait {duration(wait)} before trying again (Retry-After)"
            asked += ", longer than the SDK waits, so it did not retry." if wait > 120 and made == 1 else "."
        how_long = duration(wait) if wait and wait > 60 else "a minute"
        return ModelUnavailable(
            f"{where} answered 429 Too Many Requests (rate limit) after {tries}.{detail}{asked} Free tiers "
            f"limit tokens per minute: wait {how_long} and run the cell again; {FALLBACK}.",
            reason="rate limit", **facts)
    if isinstance(error, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return ModelUnavailable(
            f"{where} rejected the API key ({error.status_code}).{detail} Check {access.key_env} in the .env file "
            f"at the repository root (see .env.example) or in your environment; {FALLBACK}.",
            reason="rejected key", setting=access.key_env, retry_can_help=False, **facts)
    if isinstance(error, openai.NotFoundError):
        return ModelUnavailable(
            f"{where} answered 404: the model or the URL does not exist there.{detail} Check LLM_MODEL and "
            f"LLM_BASE_URL; {FALLBACK}.", reason="not found", setting="LLM_MODEL", retry_can_help=False, **facts)
    if isinstance(error, openai.BadRequestError):
        reasoning = "reasoning" in str(error.message).lower()
        hint = " This endpoint may not accept reasoning_effort: set LLM_REASONING_EFFORT=off." if reasoning else ""
        return ModelUnavailable(f"{where} rejected the request (400).{detail}{hint}", reason="rejected request",
                                setting="LLM_REASONING_EFFORT" if reasoning else None, retry_can_help=False, **facts)
    if isinstance(error, openai.APIStatusError) and error.status_code >= 500:
        asked = f" It asked to wait {duration(wait)} (Retry-After)." if wait else ""
        return ModelUnavailable(
            f"{where} answered {error.status_code} (a server error on their side) after {tries}.{detail}{asked} "
            f"Wait and run the cell again; {FALLBACK}.", reason="server error", **facts)
    if isinstance(error, openai.APIStatusError):
        return ModelUnavailable(f"{where} answered {error.status_code}.{detail} Run again, or {FALLBACK}.",
                                reason="http error", **facts)
    return ModelUnavailable(f"The call to {where} failed: {type(error).__name__}: {error}. Run again, or {FALLBACK}.",
                            reason="failed", **facts)
