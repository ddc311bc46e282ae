"""The one transport under the SDK, for every mode: a chat request adapted to what the endpoint takes, answered by
the offline stand-in, the recording (replay) or the network (live, record: see docs/model_access.md for the steps)."""
from __future__ import annotations

import email.utils
import json
import math
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import httpx2

from helpers.base.files import lone_surrogate_at
from helpers.base.text import duration
from helpers.model.errors import BadResponse
from helpers.model.offline.server import answer
from helpers.model.recordings import Recording, display_path
from helpers.model.responses import ADAPTED, Delivery, adapt
from helpers.model.settings import Traits, scrub_text

RETRIED = frozenset({408, 409, 429, *range(500, 600)})  # what the SDK retries
MAX_WAIT = 120  # the SDK waits at most this long before a retry; asked to wait longer, it does not retry


@dataclass
class CallTrace:
    """What the transport saw of the current call: its attempts (counted from the call's start, as the SDK numbers
    them in ``x-stainless-retry-count``), the last wait asked for, the written messages a server dropped."""

    attempts: int = 0
    retry_after: float | None = None
    not_received: tuple[int, ...] = ()


def retry_after(headers: httpx2.Headers) -> float | None:
    """The wait a failed answer asks for, in seconds, as the SDK reads it: ``retry-after-ms``, else ``Retry-After``
    as seconds or as an HTTP date."""
    for name, divisor in (("retry-after-ms", 1000), ("retry-after", 1)):
        try:
            return None if math.isnan(wait := float(headers[name]) / divisor) else wait
        except (KeyError, ValueError):
            continue
    try:
        return email.utils.parsedate_to_datetime(headers["retry-after"]).timestamp() - time.time()
    except (KeyError, TypeError, ValueError, IndexError):
        return None


def sdk_retries(response: httpx2.Response) -> bool:
    """Whether the SDK tries this failed answer again (its own rule), retries left permitting."""
    wait, said = retry_after(response.headers), response.headers.get("x-should-retry")
    return (wait is None or wait <= MAX_WAIT) and (said == "true" if said in ("true", "false") else
                                                    response.status_code in RETRIED)


def completion_problem(content: bytes) -> str | None:
    """What keeps a 200 body from being a chat completion the project can use, or None."""
    try:
        payload = json.loads(content)
    except ValueError:
        return f"the body is not JSON (it starts {content[:120].decode('utf-8', 'replace')!r})"
    if not isinstance(payload, dict):
        return f"the body is a JSON {type(payload).__name__}, not a chat completion object"
    if not isinstance(choices := payload.get("choices"), list) or not choices:
        return "the body has no choices"
    first = choices[0] if isinstance(choices[0], dict) else {}
    message = first.get("message") if isinstance(first.get("message"), dict) else {}
    for where, value, kind, optional in (
            ("choices[0]", choices[0], dict, False), ("choices[0].message", first.get("message"), dict, False),
            ("choices[0].message.content", message.get("content"), str, True),
            ("choices[0].finish_reason", first.get("finish_reason"), str, True),
            ("usage", payload.get("usage"), dict, True)):
        if not isinstance(value, kind) and not (optional and value is None):
            return (f"{where} is {'missing' if value is None else f'a {type(value).__name__}'}, not "
                    f"{'text' if kind is str else 'an object'}")
    if (position := lone_surrogate_at(message.get("content") or "")) is not None:
        return (f"the reply holds a lone surrogate at character {position} (half of a character such as an emoji), "
                "which cannot be stored")
    return None


class ModelTransport(httpx2.BaseTransport):
    """The one transport under the SDK (see the module's docstring); ``mode`` is live, record, replay or offline.
    ``connect()`` sets what it talks to; what it has to say is kept in ``notices`` and printed unless ``quiet``."""

    def __init__(self, mode: str, *, system_messages: str = "as-written", max_retries: int = 0,
                 secrets: list[str] | None = None, quiet: bool = False) -> None:
        self.mode, self.system_messages, self.max_retries, self.quiet = mode, system_messages, max_retries, quiet
        self.network: httpx2.BaseTransport | None = None
        self.recording: Recording | None = None
        self.model_file: tuple[str, str] | None = None  # (the name shown, the path a server listed and is sent)
        self.secrets, self.traits, self.probe, self.endpoint, self.where = secrets or [], Traits(), False, "", ""
        self.notices: list[str] = []
        self.trace, self.delivery = CallTrace(), Delivery(self.notify)

    def notify(self, line: str) -> None:
        self.notices.append(line)
        if not self.quiet:
            print(line, flush=True)

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        taken = int(request.headers.get("x-stainless-retry-count") or 0)  # the SDK's count of this call's retries
        self.trace = CallTrace(taken + 1)
        try:
            body = json.loads(request.read() or b"{}") if request.url.path.endswith("/chat/completions") else None
        except ValueError:
            body = None
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or body.get("stream"):
            return self._send(request, quiet=True) if self.network else httpx2.Response(404, request=request, json={
                "error": {"message": f"{self.mode} mode serves only POST .../chat/completions"}})
        body = self.traits.adapt(body)
        if self.mode in ("offline", "replay"):  # the stand-in takes every argument; a recording, what it holds
            status, payload = answer(body) if self.mode == "offline" else (200, self.recording.lookup(
                request.url.path, body))
            if payload is None:
                raise self.recording.missing(body)
            return httpx2.Response(status, json=payload, request=request)
        written, (sent, carries) = body["messages"], adapt(body["messages"], self.system_messages)
        if sent != written and not taken:  # said once per call, not per retry
            count = [m.get("role") for m in written].count("system")
            self.notify(f"sent adapted (LLM_SYSTEM_MESSAGES={self.system_messages}): {count} system message"
                        f"{'' if count == 1 else 's'} {ADAPTED[self.system_messages]}")
        wire = {**body, "messages": sent}
        if self.model_file and body.get("model") == self.model_file[0]:
            wire["model"] = self.model_file[1]
        try:
            response = self._send(request, wire)
        except (BadResponse, httpx2.TransportError) as error:
            bad = isinstance(error, BadResponse)  # a 200 that is not a chat completion: the SDK does not retry it
            why = "answered 200 without a usable chat completion" if bad else "connection error: " + type(
                error).__name__
            return self._fall_back(request, body, error, why, bad or taken >= self.max_retries)
        if response.status_code in RETRIED:
            final = not sdk_retries(response) or taken >= self.max_retries
            return self._fall_back(request, body, response, str(response.status_code), final)
        if response.status_code == 200 and self.mode == "record":
            self.recording.add(request.url.path, body, json.loads(response.content), status=200,
                               endpoint=self.endpoint, secrets=self.secrets)
        if response.status_code == 200 and self.probe:
            self.trace.not_received = self.delivery.dropped(wire, written, carries, lambda probe: self._send(
                request, probe, quiet=True), self.traits.limit)
        return response

    def _fall_back(self, request: httpx2.Request, body: dict[str, Any], failure: Any, why: str,
                   final: bool) -> httpx2.Response:
        """In live mode, a call that failed for good answered from the recording if it holds this exact request."""
        if final and self.mode == "live" and self.recording is not None:
            where = display_path(self.recording.path)
            if (recorded := self.recording.lookup(request.url.path, body)) is not None:
                self.notify(f"live call failed ({why}); answered from recording {where}")
                return httpx2.Response(200, json=recorded, request=request)
            self.notify(f"live call failed ({why}); {where} has no recording of this exact request, so the error "
                        "stands")
        if isinstance(failure, Exception):
            raise failure
        return failure

    def _send(self, request: httpx2.Request, body: dict[str, Any] | None = None, *,
              quiet: bool = False) -> httpx2.Response:
        """The network's whole answer within the request's read timeout (the SDK's ``LLM_TIMEOUT``: the HTTP library
        bounds each read, not the whole answer), scrubbed of secrets, and checked when ``body`` is a chat request."""
        if body is not None:
            headers = [(k, v) for k, v in request.headers.multi_items() if k.lower() != "content-length"]
            request = httpx2.Request(request.method, request.url, headers=headers, extensions=request.extensions,
                                     content=json.dumps(body, ensure_ascii=False).encode("utf-8"))
        seconds = float((request.extensions.get("timeout") or {}).get("read") or 600)
        reply: Future[tuple[httpx2.Response, bytes]] = Future()
        threading.Thread(target=self._fetch, args=(request, time.monotonic() + seconds, reply), daemon=True).start()
        try:  # the request runs in a worker thread, so that headers sent a byte at a time are bounded too
            response, content = reply.result(seconds)
        except (TimeoutError, httpx2.TransportError) as error:
            late = isinstance(error, (TimeoutError, httpx2.TimeoutException))
            if not quiet:
                self._report(f"sent no complete answer within LLM_TIMEOUT={seconds:g} seconds (a server "
                             "keeps working on a request the client gave up on, so the retry waits behind it: for a "
                             "slow server raise LLM_TIMEOUT, or set LLM_MAX_RETRIES=0)" if late else
                             f"could not be reached ({type(error).__name__})")
            if isinstance(error, TimeoutError):
                raise httpx2.ReadTimeout(f"no answer within {seconds:g} s (LLM_TIMEOUT)", request=request) from None
            raise
        if self.model_file:  # wherever the server wrote the path (as JSON writes it), the name
            name, path = (json.dumps(text)[1:-1].encode() for text in self.model_file)
            content = content.replace(path, name)
        text = content.decode("utf-8", "surrogateescape")  # bytes that are not UTF-8 kept as they are
        content = scrub_text(text, self.secrets).encode("utf-8", "surrogateescape")
        if not 200 <= response.status_code < 300 and not quiet:
            self.trace.retry_after = retry_after(response.headers)
            if sdk_retries(response):
                self._report(f"answered {response.status_code}", self.trace.retry_after)
        elif body is not None and "event-stream" not in response.headers.get("content-type", "") and (
                problem := completion_problem(content)):
            raise BadResponse(scrub_text(
                f"{self.where} answered 200, but not with a chat completion: {problem}. An HTML page or text usually "
                "means a captive portal (log in to the network in a browser), a proxy, or an LLM_BASE_URL that is not "
                "an OpenAI-compatible /v1 endpoint; a malformed completion means the server is not compatible. Run "
                "the cell again; or run without the network: LLM_MODE=replay (recorded answers) or LLM_MODE=offline "
                "(the stand-in).", self.secrets), status=200)
        headers = [(k, v) for k, v in response.headers.multi_items()
                   if k.lower() not in ("content-length", "transfer-encoding", "content-encoding")]
        return httpx2.Response(response.status_code, headers=headers, content=content, request=request)

    def _fetch(self, request: httpx2.Request, deadline: float, reply: Future[tuple[httpx2.Response, bytes]]) -> None:
        """In a worker thread: the network's response and its whole body (content encoding undone), until deadline."""
        try:
            response, chunks = self.network.handle_request(request), []
            try:
                for chunk in response.iter_bytes():
                    chunks.append(chunk)
                    if time.monotonic() > deadline:
                        raise httpx2.ReadTimeout("no complete answer within LLM_TIMEOUT", request=request)
            finally:
                response.close()
            reply.set_result((response, b"".join(chunks)))
        except BaseException as error:  # noqa: BLE001 - handed to the caller's thread as it is
            reply.set_exception(error)

    def _report(self, what: str, asked: float | None = None) -> None:
        """Say that an attempt failed and when the SDK tries again (nothing on the last attempt: the error says it)."""
        if (taken := self.trace.attempts - 1) >= self.max_retries:
            return
        wait = (f"{duration(asked)}, as the server asked (Retry-After)" if asked is not None and 0 < asked <= MAX_WAIT
                else f"about {duration(min(0.5 * 2 ** taken, 8.0))}")  # the SDK's backoff, less up to a quarter
        self.notify(f"attempt {taken + 1} of {self.max_retries + 1}: {self.where} {what}; the SDK tries again in "
                    f"{wait} (LLM_MAX_RETRIES={self.max_retries} sets how often)")

    def close(self) -> None:
        if self.network is not None:
            self.network.close()
