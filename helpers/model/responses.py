"""One reply, from request to answer: system messages sent as the server's chat format keeps them and probed for
(``DeliveryTransport``); each whole answer timed, scrubbed and checked (``CheckedTransport``); the HTTP helpers."""
from __future__ import annotations

import contextlib
import contextvars
import email.utils
import json
import math
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import httpx2

from helpers.base.files import lone_surrogate_at
from helpers.base.text import duration, listed
from helpers.base.tokens import count_tokens
from helpers.memory.registry import headings
from helpers.model.errors import BadResponse
from helpers.model.offline.summariser import is_summariser_request
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


def is_chat(path: str) -> bool:
    """Whether an API path is the chat completions endpoint (any prefix, any trailing slash)."""
    return path.rstrip("/").endswith("chat/completions")


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
    return httpx2.Request(request.method, request.url, headers=_unframed(request), extensions=request.extensions,
                          content=json.dumps(body, ensure_ascii=False).encode("utf-8"))


def _unframed(message: httpx2.Request | httpx2.Response, *more: str) -> list[tuple[str, str]]:
    """A message's headers without those that describe the bytes on the wire (and ``more``)."""
    return [(k, v) for k, v in message.headers.multi_items() if k.lower() not in (*FRAMING, *more)]


def read_decoded(response: httpx2.Response, request: httpx2.Request, deadline: float | None = None) -> bytes:
    """A response's whole body, its content encoding undone; past ``deadline`` (monotonic) ``ReadTimeout``."""
    chunks: list[bytes] = []
    try:
        for chunk in response.iter_bytes():
            chunks.append(chunk)
            if deadline is not None and time.monotonic() > deadline:
                raise httpx2.ReadTimeout("no complete answer within LLM_TIMEOUT", request=request)
    finally:
        response.close()
    return b"".join(chunks)


def rebuilt(response: httpx2.Response, content: bytes, request: httpx2.Request) -> httpx2.Response:
    """A response with a decoded body in place of what came over the wire."""
    return httpx2.Response(response.status_code, headers=_unframed(response, "content-encoding"), content=content,
                           request=request)


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


def completion_problem(content: bytes) -> str | None:
    """What keeps a 200 body from being a chat completion the project can use, or None."""
    if (payload := json_of(content)) is None:
        return f"the body is not JSON (it starts {content[:120].decode('utf-8', 'replace')!r})"
    if not isinstance(payload, dict):
        return f"the body is a JSON {type(payload).__name__}, not a chat completion object"
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices:
        return "the body has no choices"
    choice = choices[0] if isinstance(choices[0], dict) else {}
    message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    parts = (("choices[0]", choices[0], dict, False), ("choices[0].message", choice.get("message"), dict, False),
             ("choices[0].message.content", message.get("content"), str, True),
             ("choices[0].finish_reason", choice.get("finish_reason"), str, True),
             ("usage", payload.get("usage"), dict, True))
    for where, value, kind, optional in parts:  # each part present with its type, or absent where it may be
        if not isinstance(value, kind) and not (optional and value is None):
            found = "missing" if value is None else f"a {type(value).__name__}"
            return f"{where} is {found}, not {'text' if kind is str else 'an object'}"
    if (position := lone_surrogate_at(message.get("content") or "")) is not None:
        return (f"the reply holds a lone surrogate at character {position} (half of a character such as an emoji), "
                "which cannot be stored")
    return None


class CheckedTransport(httpx2.BaseTransport):
    """Wraps a transport: whole answers within ``timeout`` seconds, attempts traced, bodies scrubbed, chat
    completions checked; with ``notify``, each failed attempt the SDK will retry is reported as it happens. With
    ``model_file`` (name, path), the path is sent for the name and read back as the name: nothing above holds it."""

    def __init__(self, inner: httpx2.BaseTransport, *, timeout: float, where: str,
                 secrets: Callable[[], Iterable[str]] = tuple, trace: CallTrace | None = None,
                 notify: Callable[[str], None] | None = None, max_retries: int = 0,
                 model_file: tuple[str, str] | None = None) -> None:
        self.inner, self.timeout, self.where, self.secrets = inner, timeout, where, secrets
        self.trace = trace if trace is not None else CallTrace()
        self.notify, self.max_retries, self.model_file = notify, max_retries, model_file

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        started = time.monotonic()
        self.trace.attempts += 1
        name, path = self.model_file or ("", "")
        body = request_json(request) if name and request.method == "POST" else {}
        sent = with_body(request, {**body, "model": path}) if name and body.get("model") == name else request
        try:
            response = self._headers_within(sent)
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
        if name:  # wherever the server wrote the path (as JSON writes it), the name
            content = content.replace(json.dumps(path)[1:-1].encode(), json.dumps(name)[1:-1].encode())
        text = scrub_text(content.decode("utf-8", "surrogateescape"), self.secrets())  # any body can echo a key
        content = text.encode("utf-8", "surrogateescape")  # bytes that are not UTF-8 kept as they are
        if not 200 <= response.status_code < 300:
            self.trace.retry_after = retry_after_seconds(response.headers)
            if sdk_retries(response):
                self._report_retry(request, f"answered {response.status_code}", self.trace.retry_after)
        elif (is_chat(request.url.path) and "event-stream" not in response.headers.get("content-type", "")
              and (problem := completion_problem(content))):
            raise BadResponse(scrub_text(
                f"{self.where} answered 200, but not with a chat completion: {problem}. An HTML page or text usually "
                "means a captive portal (log in to the network in a browser), a proxy, or an LLM_BASE_URL that is not "
                "an OpenAI-compatible /v1 endpoint; a malformed completion means the server is not compatible. Run "
                "the cell again; or run without the network: LLM_MODE=replay (recorded answers) or LLM_MODE=offline "
                "(the stand-in).", self.secrets()), status=200)
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
        whole wait); the request runs in a worker thread, and an answer that comes too late is closed."""
        answer: Future[httpx2.Response] = Future()

        def send() -> None:
            try:
                answer.set_result(self.inner.handle_request(request))
            except BaseException as error:  # noqa: BLE001 - handed to the caller's thread as it is
                answer.set_exception(error)

        threading.Thread(target=send, name="llm-request", daemon=True).start()
        try:
            return answer.result(self.timeout)
        except BaseException as error:  # too late, or an interrupt (the notebook's stop button)
            answer.add_done_callback(lambda done: done.exception() or done.result().close())
            if isinstance(error, TimeoutError) and not (answer.done() and answer.exception() is error):
                raise httpx2.ReadTimeout(f"no answer within {self.timeout:g} s (LLM_TIMEOUT)",
                                         request=request) from None
            raise

    def close(self) -> None:
        self.inner.close()


SHORT_TEXT = "Check."
LONG_TEXT = " ".join(["This sentence checks whether a system message reaches the model."] * 6)
FILLER = "Hello."  # every other message of a probe: its shape matters, not its text
ARRIVED_SHARE, DROPPED_SHARE = 0.3, 0.1  # of the expected difference: above -> arrived, below -> dropped
ADAPTED = {"merge": "joined into one", "user": "put at the start of the user message after them"}

_names: contextvars.ContextVar[dict[str, str]] = contextvars.ContextVar("message_names", default={})


@contextlib.contextmanager
def naming(names: dict[str, str]) -> Iterator[None]:
    """Inside the block, a dropped message whose text is a key of ``names`` is called by its value
    (``{system_prompt: "the system prompt", summary_block: "the summary"}``) in what is printed."""
    token = _names.set({**_names.get(), **names})
    try:
        yield
    finally:
        _names.reset(token)


def _systems(messages: list[dict[str, Any]]) -> list[int]:
    return [i for i, m in enumerate(messages) if m.get("role") == "system"]


def adapt(messages: list[dict[str, Any]], mode: str) -> tuple[list[dict[str, Any]], list[tuple[int, ...]]]:
    """The messages as sent under ``mode``, and for each one sent the indices of the written messages it carries:
    "merge" joins every system message into the first; "user" puts each run of them at the start of the next user
    message (one of its own if none follows), as llama.cpp's Gemma template does."""
    plain = all(isinstance(m, dict) and isinstance(m.get("content"), str) for m in messages)
    systems = [i for i, m in enumerate(messages) if plain and m.get("role") == "system"]
    if mode == "as-written" or not systems or (mode == "merge" and len(systems) == 1):
        return list(messages), [(i,) for i in range(len(messages))]
    if mode == "merge":
        merged = {"role": "system", "content": "\n\n".join(messages[i]["content"] for i in systems)}
        kept = [i for i in range(len(messages)) if i not in systems[1:]]
        return ([merged if i == systems[0] else messages[i] for i in kept],
                [tuple(systems) if i == systems[0] else (i,) for i in kept])
    sent, carries, waiting = [], [], []  # "user": system texts wait for the next user message
    for index, message in enumerate(messages):
        if message.get("role") == "system":
            waiting.append(index)
        elif message.get("role") == "user" and waiting:
            text = "\n\n".join([*(messages[i]["content"] for i in waiting), message["content"]])
            sent.append({**message, "content": text})
            carries.append((*waiting, index))
            waiting = []
        else:
            sent.append(message)
            carries.append((index,))
    if waiting:
        sent.append({"role": "user", "content": "\n\n".join(messages[i]["content"] for i in waiting)})
        carries.append(tuple(waiting))
    return sent, carries


def shape(messages: list[dict[str, Any]]) -> tuple[bool, ...]:
    """For each system message, whether only system messages come before it: what decides, in a chat format,
    whether it is kept (the first, the leading ones, or none)."""
    roles = [message.get("role") if isinstance(message, dict) else None for message in messages]
    return tuple(all(role == "system" for role in roles[:i]) for i, role in enumerate(roles) if role == "system")


def describe(messages: list[dict[str, Any]], index: int) -> str:
    """What to call a written message in a warning: the name the caller gave it, else what the request shows it
    is, with its place and first words."""
    if isinstance(content := messages[index].get("content"), str) and (named := _names.get().get(content)):
        return named
    systems = _systems(messages)
    text = " ".join(str(content).split())
    preview = text if len(text) <= 48 else text[:45] + "..."
    place = (f"system message {systems.index(index) + 1} of {len(systems)}" if index in systems
             else f"message {index + 1}")
    if isinstance(content, str) and content.startswith(tuple(headings())):  # else what the request shows it is
        what = "the summary"
    elif isinstance(content, str) and systems[:1] == [index]:
        what = "the summariser prompt" if is_summariser_request(messages) else "the system prompt"
    else:
        return f"{place} ({preview!r})"
    return f"{what} ({place}: {preview!r})"


@dataclass
class DeliveryTransport(httpx2.BaseTransport):
    """Sends chat requests with their system messages as ``mode`` says and, with ``check``, finds by probe (through
    ``probe``, with no recording or retries) which ones the server drops; ``trace.not_received`` holds them."""

    inner: httpx2.BaseTransport
    probe: httpx2.BaseTransport
    mode: str
    check: bool
    notify: Callable[[str], None]
    trace: CallTrace
    verdicts: dict[tuple[str, str, tuple[bool, ...]], tuple[bool | None, ...]] = field(default_factory=dict)
    explained: set[str] = field(default_factory=set)

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        body = _chat_body(request)
        if body is None:
            return self.inner.handle_request(request)
        self.trace.not_received = ()
        written = body["messages"]
        sent, carries = adapt(written, self.mode)
        if sent != written:
            request = with_body(request, {**body, "messages": sent})
            count = len(_systems(written))
            if not retries_taken(request):  # said once per call, not per retry
                self.notify(f"sent adapted (LLM_SYSTEM_MESSAGES={self.mode}): {count} system message"
                            f"{'' if count == 1 else 's'} {ADAPTED[self.mode]}")
        response = self.inner.handle_request(request)
        if self.check and response.status_code == 200:
            verdict = self._verdict(request, {**body, "messages": sent})
            dropped = [i for i, arrived in zip(_systems(sent), verdict) if arrived is False]
            not_received = tuple(sorted({w for i in dropped for w in carries[i]}))
            self.trace.not_received = not_received
            if not_received:
                self._report(written, not_received, verdict)
        return response

    def _verdict(self, request: httpx2.Request, body: dict[str, Any]) -> tuple[bool | None, ...]:
        key = (str(request.url), str(body.get("model")), shape(body["messages"]))
        if key not in self.verdicts:
            self.verdicts[key] = tuple(self._arrives(request, body, index) for index in _systems(body["messages"]))
        return self.verdicts[key]

    def _arrives(self, request: httpx2.Request, body: dict[str, Any], index: int) -> bool | None:
        """Whether the system message at ``index`` reaches the model: True, False, or None if the probes cannot tell."""
        billed = [self._billed(request, _probe_body(body, index, text)) for text in (SHORT_TEXT, LONG_TEXT)]
        if None in billed:
            return None
        expected = count_tokens(LONG_TEXT) - count_tokens(SHORT_TEXT)
        difference = billed[1] - billed[0]  # type: ignore[operator]
        if difference >= ARRIVED_SHARE * expected:
            return True
        return False if difference <= DROPPED_SHARE * expected else None

    def _billed(self, request: httpx2.Request, body: dict[str, Any]) -> int | None:
        try:
            response = self.probe.handle_request(with_body(request, body))
            payload = json_of(response.read()) if response.status_code == 200 else None
        except Exception:  # noqa: BLE001 - a probe that fails tells nothing; the call itself went through
            return None
        usage = payload.get("usage") if isinstance(payload, dict) else None
        billed = usage.get("prompt_tokens") if isinstance(usage, dict) else None
        return billed if isinstance(billed, int) and not isinstance(billed, bool) else None

    def _report(self, written: list[dict[str, Any]], not_received: tuple[int, ...],
                verdict: tuple[bool | None, ...]) -> None:
        names = [describe(written, index) for index in not_received]
        if all(arrived is False for arrived in verdict):
            pattern, fix = ("drops every system message (a chat format with no system role, such as "
                            "llama-cpp-python's 'gemma')"), "LLM_SYSTEM_MESSAGES=user"
        elif verdict[0] is True:
            pattern, fix = ("keeps only the first system message (a chat format such as llama-cpp-python's "
                            "'chatml' or 'llama-2')"), "LLM_SYSTEM_MESSAGES=merge"
        else:
            pattern, fix = "drops some system messages", "LLM_SYSTEM_MESSAGES=user"
        if pattern not in self.explained:
            self.explained.add(pattern)
            self.notify(
                f"WARNING: this server's chat format {pattern}: a probe of two max_tokens=1 requests billed the "
                "same prompt_tokens with a long and a short text in that place. What is sent there never reaches "
                "the model. Fix: start the server with a chat format that keeps every system message "
                f"(llama-cpp-python: --chat_format llama-3), or set {fix} in .env or your environment and restart "
                "the kernel (every request is then adapted, and the mode line says so). See docs/local_servers.md.")
        self.notify(f"NOT RECEIVED: the server dropped {listed(names)} from this request; the model answered "
                    f"without {'it' if len(names) == 1 else 'them'}.")

    def close(self) -> None:
        self.inner.close()
        self.probe.close()


def _chat_body(request: httpx2.Request) -> dict[str, Any] | None:
    """The JSON body of a chat completion request with a list of messages (not streamed), else None."""
    body = request_json(request) if request.method == "POST" and is_chat(request.url.path) else {}
    messages = body.get("messages")
    chat = isinstance(messages, list) and all(isinstance(m, dict) for m in messages) and not body.get("stream")
    return body if chat else None


def _probe_body(body: dict[str, Any], index: int, text: str) -> dict[str, Any]:
    """A one-token request of the same shape, the message at ``index`` holding ``text`` and every other one filler."""
    messages = [{"role": m.get("role"), "content": text if i == index else FILLER}
                for i, m in enumerate(body["messages"])]
    limit = "max_completion_tokens" if "max_completion_tokens" in body else "max_tokens"
    return {**{key: value for key, value in body.items() if key != "max_tokens"}, "messages": messages, limit: 1}
