"""The one check of what an endpoint answered, the one bound on how long an answer may take, and the small
HTTP helpers every transport shares (a body read as JSON, a request with a new body, a response rebuilt).

``CheckedTransport`` reads each whole answer within ``timeout`` seconds, traces attempts and ``Retry-After``,
scrubs every configured secret from every body whatever its status, and refuses a 200 that is not a chat
completion with ``BadResponse`` before the SDK, a recording or a memory sees it.
"""
from __future__ import annotations

import email.utils
import json
import math
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import httpx2

from helpers.base.files import lone_surrogate_at
from helpers.base.text import duration
from helpers.model.errors import BadResponse
from helpers.model.secrets import scrub_text

RETRY_COUNT_HEADER = "x-stainless-retry-count"  # the SDK numbers its attempts in this header
RETRIED_STATUSES = frozenset({408, 409, 429}) | frozenset(range(500, 600))  # what the SDK retries
MAX_RETRY_AFTER_SECONDS = 120  # the SDK does not wait longer than this for a retry
FRAMING = ("content-length", "transfer-encoding")  # headers that describe the bytes on the wire


@dataclass
class CallTrace:
    """What the transports saw during one call: attempts, the last wait asked for, messages the server dropped."""

    attempts: int = 0
    retry_after: float | None = None
    not_received: tuple[int, ...] = ()  # indices of the request's messages the model never saw

    def reset(self) -> None:
        self.attempts, self.retry_after, self.not_received = 0, None, ()


def json_of(content: bytes) -> Any:
    """``content`` parsed as JSON, or None when it is not JSON."""
    try:
        return json.loads(content)
    except ValueError:
        return None


def request_json(request: httpx2.Request) -> dict[str, Any]:
    """A request's JSON body as a dict ({} when it has none)."""
    parsed = json_of(request.read() or b"{}")
    return parsed if isinstance(parsed, dict) else {}


def with_body(request: httpx2.Request, body: dict[str, Any]) -> httpx2.Request:
    """The same request with another JSON body."""
    headers = [(k, v) for k, v in request.headers.multi_items() if k.lower() not in FRAMING]
    return httpx2.Request(request.method, request.url, headers=headers, extensions=request.extensions,
                          content=json.dumps(body, ensure_ascii=False).encode("utf-8"))


def read_decoded(response: httpx2.Response, request: httpx2.Request, deadline: float | None = None) -> bytes:
    """A response's whole body, its content encoding undone; past ``deadline`` (monotonic) ``ReadTimeout``."""
    chunks: list[bytes] = []
    try:
        for chunk in response.stream:
            chunks.append(chunk)
            if deadline is not None and time.monotonic() > deadline:
                raise httpx2.ReadTimeout("no complete answer within LLM_TIMEOUT", request=request)
    finally:
        response.close()
    headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in FRAMING]
    return httpx2.Response(response.status_code, headers=headers, content=b"".join(chunks)).read()


def rebuilt(response: httpx2.Response, content: bytes, request: httpx2.Request) -> httpx2.Response:
    """A response with a decoded body in place of what came over the wire."""
    headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in (*FRAMING, "content-encoding")]
    return httpx2.Response(response.status_code, headers=headers, content=content, request=request)


def sdk_retries(response: httpx2.Response) -> bool:
    """True when the SDK tries a failed answer again (its own rule), retries left permitting."""
    wait = retry_after_seconds(response.headers)
    if wait is not None and wait > MAX_RETRY_AFTER_SECONDS:
        return False
    if response.headers.get("x-should-retry") in ("true", "false"):
        return response.headers["x-should-retry"] == "true"
    return response.status_code in RETRIED_STATUSES


def retries_taken(request: httpx2.Request) -> int | None:
    """How often the SDK has already tried this request (0 on the first attempt); None if it does not say."""
    try:
        return int(request.headers.get(RETRY_COUNT_HEADER, ""))
    except ValueError:
        return None


def retry_after_seconds(headers: httpx2.Headers) -> float | None:
    """The wait a failed answer asks for, in seconds, read as the SDK reads it (``retry-after-ms``, else
    ``Retry-After`` as seconds or an HTTP date); a number too large for a float is an endless wait."""
    for name, divisor in (("retry-after-ms", 1000), ("retry-after", 1)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            delay = float(value)
        except ValueError:
            continue
        if math.isinf(delay) and value.strip().lower().lstrip("+") not in ("inf", "infinity"):
            return math.inf
        return delay / divisor if math.isfinite(delay) else None
    try:
        when = email.utils.parsedate_tz(headers.get("retry-after") or "")
        return float(email.utils.mktime_tz(when) - time.time()) if when else None
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def _type(value: Any) -> str:
    return type(value).__name__


def completion_problem(payload: Any) -> str | None:
    """What keeps ``payload`` (parsed JSON) from being a chat completion the project can use, or None."""
    if not isinstance(payload, dict):
        return f"the body is a JSON {_type(payload)}, not a chat completion object"
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices:
        return "the body has no choices"
    choice = choices[0]
    if not isinstance(choice, dict):
        return f"choices[0] is a {_type(choice)}, not an object"
    message, finish, usage = choice.get("message"), choice.get("finish_reason"), payload.get("usage")
    if not isinstance(message, dict):
        return f"choices[0].message is {'missing' if message is None else _type(message)}"
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        return f"choices[0].message.content is a {_type(content)}, not text"
    if isinstance(content, str) and (position := lone_surrogate_at(content)) is not None:
        return (f"the reply holds a lone surrogate at character {position} (half of a character such as an emoji), "
                "which cannot be stored")
    if finish is not None and not isinstance(finish, str):
        return f"choices[0].finish_reason is a {_type(finish)}, not text"
    if usage is not None and not isinstance(usage, dict):
        return f"usage is a {_type(usage)}, not an object"
    return None


def parse_completion(content: bytes, where: str, secrets: Iterable[str] = ()) -> dict[str, Any]:
    """The chat completion in ``content``, or ``BadResponse`` saying what came back instead."""
    payload = json_of(content)
    if payload is None:
        problem = f"the body is not JSON (it starts {content[:120].decode('utf-8', 'replace')!r})"
    else:
        problem = completion_problem(payload)
    if problem is None:
        return payload
    raise BadResponse(scrub_text(
        f"{where} answered 200, but not with a chat completion: {problem}. An HTML page or "
        "text usually means a captive portal (log in to the network in a browser), a proxy, or an LLM_BASE_URL "
        "that is not an OpenAI-compatible /v1 endpoint; a malformed completion means the server is not "
        "compatible. Run the cell again; or run without the network: LLM_MODE=replay (recorded answers) or "
        "LLM_MODE=offline (the stand-in).", secrets), status=200)


def scrub_body(content: bytes, secrets: Iterable[str]) -> bytes:
    """A body with every secret replaced in every form (``scrub_text``); bytes that are not UTF-8 kept as they are."""
    text = content.decode("utf-8", "surrogateescape")
    scrubbed = scrub_text(text, secrets)
    return content if scrubbed == text else scrubbed.encode("utf-8", "surrogateescape")


class CheckedTransport(httpx2.BaseTransport):
    """Wraps a transport: whole answers within ``timeout`` seconds, attempts traced, bodies scrubbed, chat
    completions checked; with ``notify``, each failed attempt the SDK will retry is reported as it happens."""

    def __init__(self, inner: httpx2.BaseTransport, *, timeout: float, where: str,
                 secrets: Callable[[], Iterable[str]] = tuple, trace: CallTrace | None = None,
                 notify: Callable[[str], None] | None = None, max_retries: int = 0) -> None:
        self.inner, self.timeout, self.where, self.secrets = inner, timeout, where, secrets
        self.trace = trace if trace is not None else CallTrace()
        self.notify, self.max_retries = notify, max_retries

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        started = time.monotonic()
        self.trace.attempts += 1
        try:
            response = self._headers_within(request)
            content = read_decoded(response, request, started + self.timeout)
        except httpx2.TransportError as error:
            if isinstance(error, httpx2.TimeoutException):
                what = (f"sent no complete answer within LLM_TIMEOUT={self.timeout:g} seconds (a server keeps "
                        "working on a request the client gave up on, so the retry waits behind it: for a slow "
                        "server raise LLM_TIMEOUT, or set LLM_MAX_RETRIES=0)")
            else:
                what = f"could not be reached ({type(error).__name__})"
            self._report_retry(request, what, None)
            raise
        content = scrub_body(content, self.secrets())  # any body can echo a key, and the SDK would quote it
        if not 200 <= response.status_code < 300:
            self.trace.retry_after = retry_after_seconds(response.headers)
            if sdk_retries(response):
                self._report_retry(request, f"answered {response.status_code}", self.trace.retry_after)
        elif (request.url.path.rstrip("/").endswith("chat/completions")
              and "event-stream" not in response.headers.get("content-type", "")):  # a stream is checked by the SDK
            parse_completion(content, self.where, self.secrets())
        return rebuilt(response, content, request)

    def _report_retry(self, request: httpx2.Request, what: str, asked: float | None) -> None:
        """Say that an attempt failed and when the SDK tries again (nothing on the last attempt: the error says it)."""
        taken = retries_taken(request)
        if self.notify is None or taken is None or taken >= self.max_retries:
            return
        if asked is not None and 0 < asked <= MAX_RETRY_AFTER_SECONDS:
            wait = f"{duration(asked)}, as the server asked (Retry-After)"
        else:  # the SDK's backoff: 0.5 s doubled each retry, at most 8 s, less up to a quarter
            wait = f"about {duration(min(0.5 * 2 ** taken, 8.0))}"
        self.notify(f"attempt {taken + 1} of {self.max_retries + 1}: {self.where} {what}; the SDK tries again in "
                    f"{wait} (LLM_MAX_RETRIES={self.max_retries} sets how often)")

    def _headers_within(self, request: httpx2.Request) -> httpx2.Response:
        """The inner response if its headers arrive within ``timeout`` (the HTTP library bounds each read, not the
        whole wait); the request runs in a worker thread, which closes an answer that comes too late."""
        outcome: dict[str, Any] = {}
        abandoned, lock = threading.Event(), threading.Lock()

        def send() -> None:
            try:
                response = self.inner.handle_request(request)
            except BaseException as error:  # noqa: BLE001 - handed to the caller's thread as it is
                outcome["error"] = error
                return
            with lock:
                if abandoned.is_set():
                    response.close()
                else:
                    outcome["response"] = response

        worker = threading.Thread(target=send, name="llm-request", daemon=True)
        worker.start()
        try:
            worker.join(self.timeout)
        except BaseException:  # an interrupt (the notebook's stop button): the late answer is closed, not kept
            abandoned.set()
            raise
        with lock:
            if not outcome:
                abandoned.set()
                raise httpx2.ReadTimeout(f"no answer within {self.timeout:g} s (LLM_TIMEOUT)", request=request)
        if "error" in outcome:
            raise outcome["error"]
        return outcome["response"]

    def close(self) -> None:
        self.inner.close()
