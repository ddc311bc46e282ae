"""An SDK error turned into the project's error: what happened and what to do next, in one paragraph,
with the facts as fields (status, attempts, the wait asked for, the setting to change, whether a
retry can help) and every secret scrubbed.

``ModelAccess.complete()`` raises what ``model_error`` builds; a notebook's own
``client.chat.completions.create(...)`` shows the same message (``helpers.model.notebook_errors``).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import openai

from helpers.base.errors import Explained
from helpers.base.text import duration
from helpers.model.errors import ContextOverflow, ModelAccessError, ModelUnavailable, Reason
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


def model_error(error: BaseException, access: ModelAccess) -> ModelAccessError:
    """The project's error for an SDK error from a call through ``access`` (message and fields, secrets scrubbed).

    An error the project already built is returned as it is: explaining it twice would say everything twice.
    """
    built = error if isinstance(error, ModelAccessError) else _error_for(error, access)
    built.args = (scrub_text(str(built), [*access.secrets, *configured_secrets()]),)
    return built


def explain_error(error: BaseException, access: ModelAccess) -> str:
    """What a failed call means and what to do next, with every secret scrubbed; the project's own errors (a
    ``SummariserError`` that wraps a model error, say) already say it and are shown as they are."""
    if isinstance(error, Explained) and not isinstance(error, ModelAccessError):
        return scrub_text(str(error), [*access.secrets, *configured_secrets()])
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


def rejected_key(where: str, status: int | None, said: str, key_env: str, *, key_set: bool = True,
                 **facts: Any) -> ModelUnavailable:
    """The error for a key the server refused (401 or 403), on a chat call or on its list of models alike."""
    detail = f" The server said: {_sentence(said)}" if said else ""
    check = (f"Check {key_env} in the .env file at the repository root (see .env.example) or in your environment"
             if key_set else f"It wants a key and {key_env} is not set: put {key_env}=... in the .env file at the "
             "repository root (see .env.example) or in your environment")
    return ModelUnavailable(f"{where} rejected the API key ({status}).{detail} {check}, then restart the kernel; "
                            f"{FALLBACK}.", reason=Reason.REJECTED_KEY, status=status, setting=key_env,
                            retry_can_help=False, **facts)


@dataclass(frozen=True)
class _Failure:
    """What every explanation of one failed call may say: where, how many attempts, the wait the server asked
    for, what the server said, and the facts every error carries as fields."""

    error: BaseException
    access: ModelAccess
    where: str
    tries: str
    wait: float | None  # a wait the server asked for that is worth naming (a second or more)
    detail: str  # " The server said: ..." or ""
    facts: dict[str, Any]

    @classmethod
    def of(cls, error: BaseException, access: ModelAccess) -> _Failure:
        made = access.trace.attempts or access.max_retries + 1
        asked = access.trace.retry_after
        status = error.status_code if isinstance(error, openai.APIStatusError) else None
        words = _server_words(error) if status is not None else ""
        return cls(error, access, f"{access.endpoint} (model {access.model})",
                   "1 attempt" if made == 1 else f"{made} attempts, the SDK retrying with backoff",
                   asked if (asked or 0) >= 1 else None, f" The server said: {_sentence(words)}" if words else "",
                   {"status": status, "attempts": made, "retry_after": asked})

    @property
    def status(self) -> int | None:
        return self.facts["status"]


def _timeout(f: _Failure) -> ModelUnavailable:
    return ModelUnavailable(
        f"{f.where} sent no complete answer within LLM_TIMEOUT={f.access.timeout:g} seconds ({f.tries}). "
        "A slow server needs a larger LLM_TIMEOUT (a local model on a CPU can take minutes for a long reply): "
        "set e.g. LLM_TIMEOUT=300 in .env or your environment and restart the kernel; a slow server also "
        "keeps working on a request the client gave up on, so set LLM_MAX_RETRIES=0 for one. If the server "
        f"should be fast, check the network or the server, then run the cell again; {FALLBACK}.",
        reason=Reason.TIMEOUT, setting="LLM_TIMEOUT", **f.facts)


def _no_connection(f: _Failure) -> ModelUnavailable:
    cause = f" ({type(f.error.__cause__).__name__})" if f.error.__cause__ else ""
    return ModelUnavailable(
        f"Could not reach {f.where}{cause} after {f.tries}: no network, or the server is not running at that "
        f"address (check LLM_BASE_URL). Connect and run the cell again; {FALLBACK}.", reason=Reason.NO_CONNECTION,
        setting="LLM_BASE_URL" if f.access.provider == "custom" else None, **f.facts)


def _overflow(f: _Failure) -> ContextOverflow:
    said = _server_words(f.error, limit=2000) + " " + _error_code(f.error)
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
        f"{f.where} rejected the request as too long for the server's context ({f.status}).{f.detail}{fit} "
        "start the server with a larger context (llama.cpp and llama-cpp-python: --n_ctx, e.g. --n_ctx 8192), or "
        "keep the requests smaller (a smaller max_buffer_tokens or max_turns_before_summary for the memory). "
        "Sending the same request again cannot work. Replay and offline still work: LLM_MODE=replay (recorded "
        "answers) or LLM_MODE=offline (the stand-in).", setting="--n_ctx", context_tokens=context,
        prompt_tokens=prompt, **f.facts)


def _rate_limit(f: _Failure) -> ModelUnavailable:
    asked = ""
    if f.wait is not None:
        asked = f" It asked to wait {duration(f.wait)} before trying again (Retry-After)"
        too_long = f.wait > 120 and f.facts["attempts"] == 1
        asked += ", longer than the SDK waits, so it did not retry." if too_long else "."
    how_long = duration(f.wait) if f.wait and f.wait > 60 else "a minute"
    return ModelUnavailable(
        f"{f.where} answered 429 Too Many Requests (rate limit) after {f.tries}.{f.detail}{asked} Free tiers "
        f"limit tokens per minute: wait {how_long} and run the cell again; {FALLBACK}.",
        reason=Reason.RATE_LIMIT, **f.facts)


def _rejected_key(f: _Failure) -> ModelUnavailable:
    facts = {name: value for name, value in f.facts.items() if name != "status"}
    return rejected_key(f.where, f.status, _server_words(f.error), f.access.key_env, **facts)


def _not_found(f: _Failure) -> ModelUnavailable:
    return ModelUnavailable(
        f"{f.where} answered 404: the model or the URL does not exist there.{f.detail} Check LLM_MODEL and "
        f"LLM_BASE_URL; {FALLBACK}.", reason=Reason.NOT_FOUND, setting="LLM_MODEL", retry_can_help=False, **f.facts)


def _bad_request(f: _Failure) -> ModelUnavailable:
    reasoning = "reasoning" in str(getattr(f.error, "message", "")).lower()
    hint = " This endpoint may not accept reasoning_effort: set LLM_REASONING_EFFORT=off." if reasoning else ""
    return ModelUnavailable(f"{f.where} rejected the request (400).{f.detail}{hint}", reason=Reason.REJECTED_REQUEST,
                            setting="LLM_REASONING_EFFORT" if reasoning else None, retry_can_help=False, **f.facts)


def _server_error(f: _Failure) -> ModelUnavailable:
    asked = f" It asked to wait {duration(f.wait)} (Retry-After)." if f.wait else ""
    return ModelUnavailable(
        f"{f.where} answered {f.status} (a server error on their side) after {f.tries}.{f.detail}{asked} "
        f"Wait and run the cell again; {FALLBACK}.", reason=Reason.SERVER_ERROR, **f.facts)


def _other_status(f: _Failure) -> ModelUnavailable:
    return ModelUnavailable(f"{f.where} answered {f.status}.{f.detail} Run the cell again; {FALLBACK}.",
                            reason=Reason.HTTP_ERROR, **f.facts)


def _unknown(f: _Failure) -> ModelUnavailable:
    return ModelUnavailable(f"The call to {f.where} failed: {type(f.error).__name__}: {f.error}. Run the cell "
                            f"again; {FALLBACK}.", reason=Reason.SDK_ERROR, **f.facts)


def _is_status(*statuses: int) -> Callable[[BaseException], bool]:
    return lambda error: isinstance(error, openai.APIStatusError) and error.status_code in statuses


# The first test an error passes picks its explanation (a context overflow is a 400 too, so it comes first).
_EXPLANATIONS: tuple[tuple[Callable[[BaseException], bool], Callable[[_Failure], ModelUnavailable]], ...] = (
    (lambda error: isinstance(error, openai.APITimeoutError), _timeout),
    (lambda error: isinstance(error, openai.APIConnectionError), _no_connection),
    (is_context_overflow, _overflow),
    (_is_status(429), _rate_limit),
    (_is_status(401, 403), _rejected_key),
    (_is_status(404), _not_found),
    (_is_status(400), _bad_request),
    (lambda error: isinstance(error, openai.APIStatusError) and error.status_code >= 500, _server_error),
    (lambda error: isinstance(error, openai.APIStatusError), _other_status),
)


def _error_for(error: BaseException, access: ModelAccess) -> ModelUnavailable:
    failure = _Failure.of(error, access)
    build = next((build for matches, build in _EXPLANATIONS if matches(error)), _unknown)
    return build(failure)
