"""Errors of model access, and an SDK error made one: what happened and what to do, the same facts as fields, every
secret scrubbed. As ``openai.OpenAIError``s, the project's errors raised in the transport pass the SDK unchanged."""
from __future__ import annotations

import json
import re
import sys
from enum import StrEnum
from typing import Any

import openai

from helpers.base.errors import Explained, short_traceback
from helpers.base.text import duration
from helpers.model.settings import scrub_text

# What went wrong in a model call: the closed set of ``ModelAccessError.reason`` (each member equal to its text).
Reason = StrEnum("Reason", {name.upper().replace(" ", "_"): name for name in (
    "unavailable", "timeout", "no connection", "rate limit", "server error", "http error", "rejected key",
    "rejected request", "not found", "context overflow", "bad response", "missing key", "unknown model",
    "no recording", "empty reply", "empty reply cut", "sdk error")} | {"FAILED": "model access failed"})


class ModelAccessError(Explained, openai.OpenAIError):
    """Base of every model-access error: ``status`` is None when no answer came, ``attempts`` counts the call's tries,
    ``setting`` names what to change, ``retry_can_help`` whether sending it again may work. The class attributes are
    each kind's defaults; a field given (not None) replaces one."""

    reason = Reason.FAILED
    retry_can_help, setting, status, attempts, retry_after = True, None, None, None, None

    def __init__(self, message: str, **fields: Any) -> None:
        super().__init__(message)
        vars(self).update({name: value for name, value in fields.items() if value is not None})


class ModelUnavailable(ModelAccessError):
    """The endpoint could not answer (no network, rate limit, server error, rejected request or key)."""

    reason = Reason.UNAVAILABLE


class ContextOverflow(ModelUnavailable):
    """The request is longer than the server's context (``context_tokens``; the messages' share ``prompt_tokens``)."""

    reason, retry_can_help, setting = Reason.CONTEXT_OVERFLOW, False, "--n_ctx"
    context_tokens: int | None = None
    prompt_tokens: int | None = None


class BadResponse(ModelUnavailable):
    """The endpoint answered 200 with something that is not a usable chat completion (HTML, bad JSON, no choices)."""

    reason = Reason.BAD_RESPONSE


class MissingKey(ModelAccessError):
    """Live or record mode was chosen but no API key is set (``setting`` names the variable to set)."""

    reason, retry_can_help = Reason.MISSING_KEY, False


class UnknownModel(ModelAccessError):
    """No model is named for a server, or the server does not list the model named (``listed``: what it lists)."""

    reason, retry_can_help, setting = Reason.UNKNOWN_MODEL, False, "LLM_MODEL"
    listed: tuple[str, ...] = ()


class RecordingMissing(ModelAccessError):
    """Replay found no recorded answer for a request, or no usable recording file."""

    reason, retry_can_help = Reason.NO_RECORDING, False


class EmptyReply(ModelAccessError):
    """The model returned no text, even after one retry with a larger ``max_tokens``."""

    reason = Reason.EMPTY_REPLY


FALLBACK = "or run without the network: LLM_MODE=replay (recorded answers) or LLM_MODE=offline (the stand-in)"
# How servers word "the request does not fit my context" (llama-cpp-python, vLLM, llama.cpp, OpenAI, Groq, LM Studio)
_OVERFLOW = re.compile(r"maximum context length|context[ _]length|context window|exceed_context_size|"
                       r"available context size|context size|\bn_ctx\b|prompt is too long", re.IGNORECASE)
_CONTEXT = (r"maximum context length is (\d+)", r"context window of (\d+)", r"context length of only (\d+)",
            r"\bn_ctx\W+(\d+)")
_PROMPT = (r"(\d+) in the messages", r"n_prompt_tokens\W+(\d+)")


def server_said(body: Any) -> str:
    """The server's own words in an error body (``{"error": {"message": ...}}``, ``{"detail": ...}``), shortened."""
    inner = body.get("error", body) if isinstance(body, dict) else body
    words = inner.get("message") or inner.get("detail") if isinstance(inner, dict) else inner
    return " ".join(words.split())[:300] if isinstance(words, str) else ""


def _number(patterns: tuple[str, ...], text: str) -> int | None:
    return next((int(found.group(1)) for p in patterns if (found := re.search(p, text, re.IGNORECASE))), None)


def rejected_key(where: str, status: int | None, said: str, key_env: str, *, key_set: bool = True,
                 **facts: Any) -> ModelUnavailable:
    """The error for a key the server refused (401 or 403), on a chat call or on its list of models alike."""
    check = (f"Check {key_env}" if key_set else f"It wants a key and {key_env} is not set: put {key_env}=...") + (
        " in the .env file at the repository root (see .env.example) or in your environment")
    return ModelUnavailable(f"{where} rejected the API key ({status}).{_said(said)} {check}, then restart the kernel; "
                            f"{FALLBACK}.", reason=Reason.REJECTED_KEY, status=status, setting=key_env,
                            retry_can_help=False, **facts)


def _said(words: str) -> str:
    return f" The server said: {words if words.endswith(('.', '!', '?')) else words + '.'}" if words else ""


def _error_for(error: BaseException, access: Any) -> ModelAccessError:
    """The project's error for an SDK error: what happened and what to do (an overflow is a 400 too, so it is told
    apart by the server's words first)."""
    made, wait = access.trace.attempts or 1, access.trace.retry_after
    status = error.status_code if isinstance(error, openai.APIStatusError) else None
    where, body, response = f"{access.endpoint} (model {access.model})", getattr(error, "body", None), getattr(
        error, "response", None)
    words = (server_said(body) or " ".join(response.text.split())[:300]) if response is not None else ""
    facts, detail = {"status": status, "attempts": made, "retry_after": wait}, _said(words)
    tries = "1 attempt" if made == 1 else f"{made} attempts, the SDK retrying with backoff"
    said = f"{words} {json.dumps(body)}"  # the whole body: a server may give its numbers as fields (n_ctx)
    named = wait if (wait or 0) >= 1 else None  # a wait worth naming: a second or more
    asked = "" if named is None else f" It asked to wait {duration(named)} before trying again (Retry-After)" + (
        ", longer than the SDK waits, so it did not retry." if named > 120 and made == 1 else ".")
    if status in (401, 403):
        return rejected_key(where, status, words, access.key_env, attempts=made, retry_after=wait)
    if isinstance(error, openai.APITimeoutError):
        return ModelUnavailable(
            f"{where} sent no complete answer within LLM_TIMEOUT={access.timeout:g} seconds ({tries}). A slow server "
            "needs a larger LLM_TIMEOUT (a local model on a CPU can take minutes for a long reply): set e.g. "
            "LLM_TIMEOUT=300 in .env or your environment and restart the kernel; a slow server also keeps working on "
            "a request the client gave up on, so set LLM_MAX_RETRIES=0 for one. If the server should be fast, check "
            f"the network or the server, then run the cell again; {FALLBACK}.", reason=Reason.TIMEOUT,
            setting="LLM_TIMEOUT", **facts)
    if isinstance(error, openai.APIConnectionError):
        cause = f" ({type(error.__cause__).__name__})" if error.__cause__ else ""
        return ModelUnavailable(
            f"Could not reach {where}{cause} after {tries}: no network, or the server is not running at that address "
            f"(check LLM_BASE_URL). Connect and run the cell again; {FALLBACK}.", reason=Reason.NO_CONNECTION,
            setting="LLM_BASE_URL" if access.provider == "custom" else None, **facts)
    if status in (400, 413, 422, 500) and _OVERFLOW.search(said):  # with the server's numbers, when it gives them
        context, prompt = _number(_CONTEXT, said), _number(_PROMPT, said)
        fit = ("" if context is None or prompt is None else f" The messages ({prompt} tokens) fit its context of "
               f"{context} tokens but the reply limit does not: lower max_tokens, or" if prompt <= context else
               f" The messages alone ({prompt} tokens) are longer than its context of {context} tokens, so a shorter "
               "reply cannot help:")
        return ContextOverflow(
            f"{where} rejected the request as too long for the server's context ({status}).{detail}{fit} start the "
            "server with a larger context (llama.cpp and llama-cpp-python: --n_ctx, e.g. --n_ctx 8192), or keep the "
            "requests smaller (a smaller max_buffer_tokens or max_turns_before_summary for the memory). Sending the "
            "same request again cannot work. Replay and offline still work: LLM_MODE=replay (recorded answers) or "
            "LLM_MODE=offline (the stand-in).", **facts, context_tokens=context, prompt_tokens=prompt)
    if status == 429:
        return ModelUnavailable(
            f"{where} answered 429 Too Many Requests (rate limit) after {tries}.{detail}{asked} Free tiers limit "
            f"tokens per minute: wait {duration(named) if named and named > 60 else 'a minute'} and run the cell "
            f"again; {FALLBACK}.", reason=Reason.RATE_LIMIT, **facts)
    if status == 404:
        return ModelUnavailable(
            f"{where} answered 404: the model or the URL does not exist there.{detail} Check LLM_MODEL and "
            f"LLM_BASE_URL; {FALLBACK}.", reason=Reason.NOT_FOUND, setting="LLM_MODEL", retry_can_help=False, **facts)
    if status == 400:
        reasoning = "reasoning" in str(getattr(error, "message", "")).lower()
        hint = " This endpoint may not accept reasoning_effort: set LLM_REASONING_EFFORT=off." if reasoning else ""
        return ModelUnavailable(f"{where} rejected the request (400).{detail}{hint}", reason=Reason.REJECTED_REQUEST,
                                setting="LLM_REASONING_EFFORT" if reasoning else None, retry_can_help=False, **facts)
    if status is not None and status >= 500:
        return ModelUnavailable(f"{where} answered {status} (a server error on their side) after {tries}.{detail}"
                                f"{asked} Wait and run the cell again; {FALLBACK}.", reason=Reason.SERVER_ERROR,
                                **facts)
    if status is not None:
        return ModelUnavailable(f"{where} answered {status}.{detail} Run the cell again; {FALLBACK}.",
                                reason=Reason.HTTP_ERROR, **facts)
    return ModelUnavailable(f"The call to {where} failed: {type(error).__name__}: {error}. Run the cell again; "
                            f"{FALLBACK}.", reason=Reason.SDK_ERROR, **facts)


def model_error(error: BaseException, access: Any) -> ModelAccessError:
    """The project's error for an SDK error from a call through ``access``; one already built is kept as it is."""
    built = error if isinstance(error, ModelAccessError) else _error_for(error, access)
    built.args = (scrub_text(str(built), access.secrets),)
    return built


def explain_error(error: BaseException, access: Any) -> str:
    """What a failed call means and what to do next, secrets scrubbed; the project's other errors (a
    ``SummariserError`` wrapping a model error, say) already say it and are shown as they are."""
    if isinstance(error, Explained) and not isinstance(error, ModelAccessError):
        return scrub_text(str(error), access.secrets)
    return str(model_error(error, access))


def explain_in_notebooks(access: Any) -> None:
    """In an IPython kernel, show an SDK error of a notebook's own call with ``explain_error`` first (for the latest
    ``connect()``), then two more lines; ``%tb`` still prints the whole traceback."""
    def show(shell: Any, etype: type[BaseException], value: BaseException, tb: Any, tb_offset: Any = None) -> list[str]:
        shell._get_exc_info((etype, value, tb))  # sets sys.last_* so that %tb prints the whole traceback
        lines = short_traceback(etype.__name__, explain_error(value, access), tb)
        shell._showtraceback(etype, value, lines)
        return lines

    module = sys.modules.get("IPython")  # only a running kernel has imported it; never import it here
    if (shell := module.get_ipython() if module is not None else None) is not None:
        shell.set_custom_exc((openai.APIError,), show)
