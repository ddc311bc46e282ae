"""An SDK error turned into the project's error: what happened and what to do, in one paragraph, with the facts as
fields and every secret scrubbed (one table, ``_CASES``, gives each kind of failure its reason, words and setting);
and, in IPython, a notebook's own SDK errors shown the same way."""
from __future__ import annotations

import re
import sys
from collections.abc import Callable
from types import TracebackType
from typing import Any, Protocol

import openai

from helpers.base.errors import Explained, short_traceback
from helpers.base.text import duration
from helpers.model.errors import ContextOverflow, ModelAccessError, ModelUnavailable, Reason
from helpers.model.responses import CallTrace
from helpers.model.secrets import configured_secrets, public_url, scrub_text


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
# How servers word "the request does not fit my context" (llama-cpp-python, vLLM, llama.cpp, OpenAI, Groq, LM Studio)
_OVERFLOW = re.compile(r"maximum context length|context[ _]length|context window|exceed_context_size|"
                       r"available context size|context size|\bn_ctx\b|prompt is too long", re.IGNORECASE)
_CONTEXT_NUMBERS = (r"maximum context length is (\d+)", r"context window of (\d+)", r"context length of only (\d+)",
                    r"\bn_ctx\W+(\d+)")
_PROMPT_NUMBERS = (r"(\d+) in the messages", r"n_prompt_tokens\W+(\d+)")


def model_error(error: BaseException, access: ModelAccess) -> ModelAccessError:
    """The project's error for an SDK error from a call through ``access``; one already built is kept as it is."""
    built = error if isinstance(error, ModelAccessError) else _error_for(error, access)
    built.args = (scrub_text(str(built), [*access.secrets, *configured_secrets()]),)
    return built


def explain_error(error: BaseException, access: ModelAccess) -> str:
    """What a failed call means and what to do next, secrets scrubbed; the project's other errors (a
    ``SummariserError`` wrapping a model error, say) already say it and are shown as they are."""
    if isinstance(error, Explained) and not isinstance(error, ModelAccessError):
        return scrub_text(str(error), [*access.secrets, *configured_secrets()])
    return str(model_error(error, access))


def _said(words: str) -> str:
    """The server's words as a sentence after "The server said:", or nothing when it said nothing."""
    words = words.strip()
    return f" The server said: {words if words.endswith(('.', '!', '?')) else words + '.'}" if words else ""


def server_said(body: Any, limit: int = 300) -> str:
    """The server's own words in an error body (``{"error": {"message": ...}}``, ``{"detail": ...}``), shortened."""
    inner = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(inner, dict):
        inner = inner.get("message") or inner.get("detail")
    return " ".join(inner.split())[:limit] if isinstance(inner, str) else ""


def _server_words(error: BaseException, limit: int = 300, *, fields: bool = False) -> str:
    """What the server said in an error answer: its error message, else its text, else the SDK's message; with
    ``fields`` (to find numbers in), its error fields code, type, n_ctx and n_prompt_tokens too."""
    body = getattr(error, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else None
    named = ("code", "type", "n_ctx", "n_prompt_tokens") if fields and isinstance(inner, dict) else ()
    codes = [f"{key} {inner[key]}" for key in named if key in inner]
    if not (said := server_said(body, limit)):
        response = getattr(error, "response", None)
        try:
            text = response.text if response is not None else ""
        except Exception:  # noqa: BLE001 (an unread stream: nothing more to quote)
            text = ""
        said = " ".join(text.split())[:limit] or str(getattr(error, "message", "") or "")[:limit]
    return " ".join([said, *codes])


def _first_number(patterns: tuple[str, ...], text: str) -> int | None:
    found = (re.search(pattern, text, re.IGNORECASE) for pattern in patterns)
    return next((int(match.group(1)) for match in found if match), None)


def rejected_key(where: str, status: int | None, said: str, key_env: str, *, key_set: bool = True,
                 **facts: Any) -> ModelUnavailable:
    """The error for a key the server refused (401 or 403), on a chat call or on its list of models alike."""
    check = (f"Check {key_env} in the .env file at the repository root (see .env.example) or in your environment"
             if key_set else f"It wants a key and {key_env} is not set: put {key_env}=... in the .env file at the "
             "repository root (see .env.example) or in your environment")
    return ModelUnavailable(f"{where} rejected the API key ({status}).{_said(said)} {check}, then restart the kernel; "
                            f"{FALLBACK}.", reason=Reason.REJECTED_KEY, status=status, setting=key_env,
                            retry_can_help=False, **facts)


def _fit(said: str) -> str:
    """What the server's numbers say about a request too long for its context."""
    context, prompt = _first_number(_CONTEXT_NUMBERS, said), _first_number(_PROMPT_NUMBERS, said)
    if context is None or prompt is None:
        return ""
    if prompt <= context:
        return (f" The messages ({prompt} tokens) fit its context of {context} tokens but the reply limit does not: "
                "lower max_tokens, or")
    return (f" The messages alone ({prompt} tokens) are longer than its context of {context} tokens, so a shorter "
            "reply cannot help:")


# (which errors, the statuses among them (None: any), reason, what happened and what to do, setting to change,
# whether a retry can help); the first row an error matches decides (a context overflow is a 400 too, so it comes
# first, and only when the server's words say so)
_CASES: tuple[tuple[type[BaseException], tuple[int, ...] | range | None, Reason, str, str, bool], ...] = (
    (openai.APITimeoutError, None, Reason.TIMEOUT,
     "{where} sent no complete answer within LLM_TIMEOUT={timeout:g} seconds ({tries}). A slow server needs a larger "
     "LLM_TIMEOUT (a local model on a CPU can take minutes for a long reply): set e.g. LLM_TIMEOUT=300 in .env or "
     "your environment and restart the kernel; a slow server also keeps working on a request the client gave up "
     "on, so set LLM_MAX_RETRIES=0 for one. If the server should be fast, check the network or the server, then "
     "run the cell again; {fallback}.", "LLM_TIMEOUT", True),
    (openai.APIConnectionError, None, Reason.NO_CONNECTION,
     "Could not reach {where}{cause} after {tries}: no network, or the server is not running at that address "
     "(check LLM_BASE_URL). Connect and run the cell again; {fallback}.", "{url_setting}", True),
    (openai.APIStatusError, (400, 413, 422, 500), Reason.CONTEXT_OVERFLOW,
     "{where} rejected the request as too long for the server's context ({status}).{detail}{fit} start the server "
     "with a larger context (llama.cpp and llama-cpp-python: --n_ctx, e.g. --n_ctx 8192), or keep the requests "
     "smaller (a smaller max_buffer_tokens or max_turns_before_summary for the memory). Sending the same request "
     "again cannot work. Replay and offline still work: LLM_MODE=replay (recorded answers) or LLM_MODE=offline "
     "(the stand-in).", "--n_ctx", False),
    (openai.APIStatusError, (429,), Reason.RATE_LIMIT,
     "{where} answered 429 Too Many Requests (rate limit) after {tries}.{detail}{asked_rate} Free tiers limit tokens "
     "per minute: wait {how_long} and run the cell again; {fallback}.", "", True),
    (openai.APIStatusError, (404,), Reason.NOT_FOUND,
     "{where} answered 404: the model or the URL does not exist there.{detail} Check LLM_MODEL and LLM_BASE_URL; "
     "{fallback}.", "LLM_MODEL", False),
    (openai.APIStatusError, (400,), Reason.REJECTED_REQUEST,
     "{where} rejected the request (400).{detail}{reasoning_hint}", "{reasoning_setting}", False),
    (openai.APIStatusError, range(500, 1000), Reason.SERVER_ERROR,
     "{where} answered {status} (a server error on their side) after {tries}.{detail}{asked_server} Wait and run the "
     "cell again; {fallback}.", "", True),
    (openai.APIStatusError, None, Reason.HTTP_ERROR,
     "{where} answered {status}.{detail} Run the cell again; {fallback}.", "", True),
    (BaseException, None, Reason.SDK_ERROR,
     "The call to {where} failed: {error_type}: {error}. Run the cell again; {fallback}.", "", True),
)


def _error_for(error: BaseException, access: ModelAccess) -> ModelUnavailable:
    made, wait = access.trace.attempts or access.max_retries + 1, access.trace.retry_after
    status = error.status_code if isinstance(error, openai.APIStatusError) else None
    where = f"{access.endpoint} (model {access.model})"
    facts = {"status": status, "attempts": made, "retry_after": wait}
    if status in (401, 403):
        return rejected_key(where, status, _server_words(error), access.key_env, attempts=made, retry_after=wait)
    named = wait if (wait or 0) >= 1 else None  # a wait worth naming: a second or more
    words = _server_words(error) if status is not None else ""
    reasoning = "reasoning" in str(getattr(error, "message", "")).lower()
    asked_rate = (f" It asked to wait {duration(named)} before trying again (Retry-After)"
                  + (", longer than the SDK waits, so it did not retry." if named > 120 and made == 1 else ".")
                  if named is not None else "")
    text = dict(
        where=where, status=status, timeout=access.timeout, fallback=FALLBACK, error_type=type(error).__name__,
        error=error, tries="1 attempt" if made == 1 else f"{made} attempts, the SDK retrying with backoff",
        detail=_said(words), asked_rate=asked_rate,
        cause=f" ({type(error.__cause__).__name__})" if error.__cause__ else "",
        how_long=duration(named) if named and named > 60 else "a minute",
        asked_server=f" It asked to wait {duration(named)} (Retry-After)." if named else "",
        url_setting="LLM_BASE_URL" if access.provider == "custom" else "",
        reasoning_hint=" This endpoint may not accept reasoning_effort: set LLM_REASONING_EFFORT=off." if reasoning
        else "", reasoning_setting="LLM_REASONING_EFFORT" if reasoning else "")
    said = _server_words(error, 2000, fields=True)
    _, _, reason, words_for, setting, retry = next(
        case for case in _CASES if isinstance(error, case[0]) and (case[1] is None or status in case[1])
        and (case[2] is not Reason.CONTEXT_OVERFLOW or _OVERFLOW.search(said)))
    if reason is Reason.CONTEXT_OVERFLOW:
        return ContextOverflow(words_for.format(**text, fit=_fit(said)), setting=setting, **facts,
                               context_tokens=_first_number(_CONTEXT_NUMBERS, said),
                               prompt_tokens=_first_number(_PROMPT_NUMBERS, said))
    return ModelUnavailable(words_for.format(**text), reason=reason, setting=setting.format(**text) or None,
                            retry_can_help=retry, **facts)


# ----- a notebook's own client.chat.completions.create(...) -------------------------------------------

_explainers: dict[str, Callable[[BaseException], str]] = {}  # public base URL -> that client's explain()


def explain_in_notebooks(base_url: str, explain: Callable[[BaseException], str]) -> None:
    """In an IPython kernel, show SDK errors of requests to ``base_url`` with ``explain``'s message first."""
    key = public_url(base_url).rstrip("/")
    _explainers.pop(key, None)
    _explainers[key] = explain  # the latest client for a URL explains its errors; the latest overall is the default
    module = sys.modules.get("IPython")  # only a running kernel has imported it; never import it here
    shell = module.get_ipython() if module is not None else None
    if shell is not None:
        shell.set_custom_exc((openai.APIError,), _show)


def _show(shell: Any, etype: type[BaseException], value: BaseException, tb: TracebackType | None,
          tb_offset: int | None = None) -> list[str]:
    """IPython's custom exception handler: the explanation first, two more lines, ``%tb`` still works."""
    shell._get_exc_info((etype, value, tb))  # sets sys.last_* so that %tb prints the whole traceback
    request = getattr(value, "request", None)
    url = public_url(str(request.url)) if request is not None else ""
    explain = next((_explainers[key] for key in reversed(list(_explainers)) if url == key or url.startswith(key + "/")),
                   next(reversed(_explainers.values()), None))
    lines = short_traceback(etype.__name__, explain(value) if explain else str(value), tb)
    shell._showtraceback(etype, value, lines)
    return lines
