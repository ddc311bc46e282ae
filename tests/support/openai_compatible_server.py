"""An OpenAI-compatible HTTP server on 127.0.0.1 for tests, serving the offline stand-in.

Live mode is pointed at it by base URL, as a user points it at Ollama or vLLM, so the tests go
over real HTTP through the real SDK. It can be told to fail (429 with a short ``retry-after-ms``,
5xx, an empty reply cut off by the token limit) and to behave as real servers do: a ``chat_format``
that drops system messages as llama-cpp-python's do (``gemma`` drops every one, ``chatml`` and
``llama-2`` keep only the first, ``llama-3`` keeps them all), a tokenizer that bills differently from
tiktoken (``billing_ratio``, plus ``template_tokens`` per message), a context size it refuses to
exceed with llama-cpp-python's words (``context_tokens``), a list of models at ``/v1/models``
(``models``, with or without the key: ``public_models``), the model asked for echoed in the answer
(``echo_model``); it cuts replies at ``max_tokens``, trickles bytes slowly, answers 200 with bodies
that are not chat completions, asks for a long ``Retry-After``, echoes the key in a 401, and records
what it received. It binds port 0 on loopback only, answers at most ``max_requests``
requests, and always shuts down on exit.

    with OpenAICompatibleServer() as server:
        server.fail_next(1, status=429)
        access = connect("live", base_url=server.base_url, model="stand-in")
"""
from __future__ import annotations

import json
import math
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from helpers.base.tokens import count_tokens
from helpers.model.offline.server import answer

# What llama-cpp-python 0.3.36's chat formats do with system messages (measured there with max_tokens=1 probes).
CHAT_FORMATS = {"llama-3": "keep all", "chatml": "keep first", "llama-2": "keep first", "gemma": "drop all"}


class OpenAICompatibleServer:
    """A bounded loopback server answering ``POST /v1/chat/completions`` with the stand-in."""

    # 200 bodies that are not chat completions, as captive portals, proxies and odd servers send them
    BAD_BODIES: dict[str, tuple[bytes, str]] = {
        "malformed": (b'{"choices": [', "application/json"),
        "html": (b"<html><body>Please log in to the Wi-Fi</body></html>", "text/html"),
        "empty list": (b"[]", "application/json"),
        "empty choice": (b'{"choices": [{}]}', "application/json"),
        "null message": (b'{"choices": [{"index": 0, "message": null, "finish_reason": "stop"}]}', "application/json"),
        "list content": (b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": [{"type": "text", '
                         b'"text": "hi"}]}, "finish_reason": "stop"}]}', "application/json"),
        "number content": (b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": 42}, '
                           b'"finish_reason": "stop"}]}', "application/json"),
        "half emoji": (b'{"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [{"index": 0, '
                       b'"message": {"role": "assistant", "content": "Rocket \\ud83d up"}, "finish_reason": "stop"}], '
                       b'"usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}', "application/json"),
    }

    def __init__(self, *, expected_key: str | None = None, max_requests: int = 200) -> None:
        self.expected_key = expected_key
        self.chat_format = "llama-3"  # one of CHAT_FORMATS: which system messages reach the model
        self.billing_ratio = 1.0  # billed prompt tokens per o200k_base token of what the model sees (a real one: ~1.2)
        self.template_tokens = 0  # billed tokens the chat template adds per message
        self.context_tokens: int | None = None  # refuse a prompt plus max_tokens above this, as llama-cpp-python does
        self.models: list[str] | None = None  # listed at GET /v1/models (None: that path answers 404)
        self.echo_model = False  # answer with the model the request named, as llama-cpp-python does
        self.public_models = False  # list the models without checking the key, as llama.cpp's llama-server does
        self.cut_at: int | None = None  # cut every reply to this many words with finish_reason "length"
        self.trickle: float | None = None  # seconds between the bytes of every answer
        self.trickle_headers: float | None = None  # seconds between the bytes of the status line and headers
        self.echo_key_in_401 = False
        self.body_filter: Any = None  # bytes -> bytes, applied to every answer's body (an echo in a chosen form)
        self.max_requests = max_requests
        self.received: list[dict[str, Any]] = []  # path, headers (lower-cased), body of every request
        self._failures: list[tuple[int, str]] = []  # queued (status, kind) answers for the next requests
        self._always: int | None = None
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None

    # ----- control -------------------------------------------------------------------------------
    def fail_next(self, count: int, status: int = 429) -> None:
        """The next ``count`` requests get ``status`` (429 or 5xx) with ``retry-after-ms: 1``."""
        with self._lock:
            self._failures.extend([(status, "status")] * count)

    def empty_next(self, count: int) -> None:
        """The next ``count`` requests get an empty reply with ``finish_reason == "length"`` (as gpt-oss can)."""
        with self._lock:
            self._failures.extend([(200, "empty")] * count)

    def fail_always(self, status: int | None) -> None:
        """Answer every request with ``status`` until called with None."""
        with self._lock:
            self._always = status

    def bad_body_next(self, count: int, kind: str) -> None:
        """The next ``count`` requests get status 200 with one of ``BAD_BODIES``."""
        assert kind in self.BAD_BODIES, kind
        with self._lock:
            self._failures.extend([(200, f"bad:{kind}")] * count)

    def retry_after_next(self, count: int, seconds: int | str = 3600) -> None:
        """The next ``count`` requests get 429 with ``Retry-After: seconds`` (a number, or an HTTP date as text)."""
        with self._lock:
            self._failures.extend([(429, f"wait:{seconds}")] * count)

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.received if r["path"].endswith("/chat/completions")]

    @property
    def probes(self) -> list[dict[str, Any]]:
        """The one-token requests that find out which system messages arrive (``helpers.model.responses``)."""
        return [r for r in self.chat_requests if isinstance(r["body"], dict) and _limit(r["body"]) == 1]

    @property
    def model_calls(self) -> list[dict[str, Any]]:
        """The chat requests that are not probes: the replies and summaries asked for."""
        return [r for r in self.chat_requests if not (isinstance(r["body"], dict) and _limit(r["body"]) == 1)]

    # ----- lifecycle -----------------------------------------------------------------------------
    @property
    def port(self) -> int:
        """The port it listens (or, once stopped, listened) on."""
        assert self._port is not None, "the server was never started"
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> OpenAICompatibleServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # one request per connection: once stopped, nothing answers
            timeout = 10

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("content-length") or 0)
                content = self.rfile.read(length) if length else b""
                status, payload, headers = owner._answer(self.command, self.path, dict(self.headers.items()), content)
                data, content_type = payload if isinstance(payload, tuple) else (json.dumps(payload).encode(),
                                                                                 "application/json")
                if owner.body_filter is not None:
                    data = owner.body_filter(data)
                if owner.trickle_headers is not None:  # even the headers come a byte at a time
                    head = "".join([f"HTTP/1.1 {status} Answer\r\n", f"content-type: {content_type}\r\n",
                                    f"content-length: {len(data)}\r\n",
                                    *(f"{name}: {value}\r\n" for name, value in headers.items()), "\r\n"])
                    try:
                        for byte in head.encode():
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                            time.sleep(owner.trickle_headers)
                        self.wfile.write(data)
                    except (BrokenPipeError, ConnectionResetError):  # the client gave up, as it should
                        pass
                    return
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                if owner.trickle is None:
                    self.wfile.write(data)
                    return
                try:
                    for index in range(len(data)):
                        self.wfile.write(data[index:index + 1])
                        self.wfile.flush()
                        time.sleep(owner.trickle)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up, as it should
                    pass

            do_GET = do_POST  # noqa: N815

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="openai-compatible-test-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Shut down and release the port (idempotent)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> OpenAICompatibleServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ----- answering -----------------------------------------------------------------------------
    def _answer(self, method: str, path: str, headers: dict[str, str],
                content: bytes) -> tuple[int, dict[str, Any], dict[str, str]]:
        try:
            body = json.loads(content or b"{}")
        except json.JSONDecodeError:
            body = None
        with self._lock:
            self.received.append({"method": method, "path": path, "body": body,
                                  "headers": {k.lower(): v for k, v in headers.items()}})
            if len(self.received) > self.max_requests:
                return 503, _error("test server request limit reached", "server_error"), {"x-should-retry": "false"}
            queued = self._failures.pop(0) if self._failures and method == "POST" else None
            always = self._always
        if self.expected_key is not None and not (self.public_models and method == "GET"):
            sent = {k.lower(): v for k, v in headers.items()}.get("authorization", "")
            if sent != f"Bearer {self.expected_key}":
                words = f"Invalid API Key: {sent}" if self.echo_key_in_401 else "Invalid API Key"
                return 401, _error(words, "invalid_request_error", "invalid_api_key"), {}
        if method == "GET":
            if not path.rstrip("/").endswith("/models") or self.models is None:
                return 404, _error(f"no such path: {path}", "not_found"), {}
            return 200, {"object": "list", "data": [{"id": name, "object": "model", "owned_by": "me"}
                                                    for name in self.models]}, {}
        status, kind = queued if queued else ((always, "status") if always else (200, "ok"))
        if kind.startswith("bad:"):
            return 200, self.BAD_BODIES[kind[4:]], {}
        if kind.startswith("wait:"):
            return 429, _error("Rate limit reached. Please try again in 1h.", "rate_limit_exceeded"), {
                "retry-after": kind[5:]}
        if kind == "status":
            message = "Rate limit reached. Please try again in 1ms." if status == 429 else "Service unavailable"
            return status, _error(message, "rate_limit_exceeded" if status == 429 else "server_error"), {
                "retry-after-ms": "1"}
        seen = self._as_the_model_sees_it(body, content)
        billed = self._billed(seen)
        limit = (body.get("max_tokens") or 0) if isinstance(body, dict) else 0
        if billed is not None and self.context_tokens is not None and billed + limit > self.context_tokens:
            return 400, _error(f"This model's maximum context length is {self.context_tokens} tokens. However, you "
                               f"requested {billed + limit} tokens ({billed} in the messages, {limit} in the "
                               "completion). Please reduce the length of the messages or completion.",
                               "invalid_request_error", "context_length_exceeded"), {}
        status, payload = answer(json.loads(seen)) if path.rstrip("/").endswith("chat/completions") else (404, _error(
            f"no such path: {path}", "not_found"))
        if status == 200 and billed is not None:
            payload["usage"]["prompt_tokens"] = billed
            payload["usage"]["total_tokens"] = billed + payload["usage"]["completion_tokens"]
        if status == 200 and self.echo_model and isinstance(body, dict):
            payload["model"] = body.get("model")
        if status == 200 and self.cut_at is not None:
            words = payload["choices"][0]["message"]["content"].split()
            payload["choices"][0]["message"]["content"] = " ".join(words[:self.cut_at])
            payload["choices"][0]["finish_reason"] = "length"
        if kind == "empty" and status == 200:
            payload["choices"][0]["message"]["content"] = ""
            payload["choices"][0]["finish_reason"] = "length"
            payload["usage"]["completion_tokens"] = body.get("max_tokens", 0) if isinstance(body, dict) else 0
        return status, payload, {}


    def _as_the_model_sees_it(self, body: Any, content: bytes) -> bytes:
        """The request after the chat format: system messages dropped as ``chat_format`` says."""
        keeps = CHAT_FORMATS[self.chat_format]
        if keeps == "keep all" or not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return content
        kept, seen_system = [], False
        for message in body["messages"]:
            if isinstance(message, dict) and message.get("role") == "system":
                if keeps == "drop all" or seen_system:
                    continue
                seen_system = True
            kept.append(message)
        return json.dumps({**body, "messages": kept}).encode()

    def _billed(self, seen: bytes) -> int | None:
        """The prompt tokens this server bills for what its model sees: its own tokenizer and chat template."""
        try:
            messages = json.loads(seen).get("messages")
            counted = sum(count_tokens(m["content"]) for m in messages)
        except (AttributeError, KeyError, TypeError, ValueError):
            return None
        return math.ceil(counted * self.billing_ratio) + self.template_tokens * len(messages)


def _limit(body: dict[str, Any]) -> Any:
    return body.get("max_completion_tokens") or body.get("max_tokens")


def _error(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": code}}
