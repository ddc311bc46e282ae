"""An OpenAI-compatible HTTP server on 127.0.0.1 serving the offline stand-in, for live mode over real HTTP.

It behaves as real servers do when told to: a ``chat_format`` that drops system messages as llama-cpp-python's do,
a tokenizer that bills unlike tiktoken (``billing_ratio``, ``template_tokens`` a message), a context it refuses to
exceed in llama-cpp-python's words (``context_tokens``), a list of ``models`` (``public_models``: without the key), the
model asked for echoed (``echo_model``), replies cut (``cut_at`` words), bytes trickled (``trickle``,
``trickle_headers``), the key echoed in a 401 (``echo_key_in_401``), any body rewritten (``body_filter``), the next
answers queued (``answer_next``). It binds port 0 on loopback, answers at most ``max_requests`` requests, and keeps
what it received.
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

CHAT_FORMATS = {"llama-3": "keep all", "chatml": "keep first", "llama-2": "keep first", "gemma": "drop all"}
# 200 bodies that are not chat completions, as captive portals, proxies and odd servers send them
BAD_BODIES: dict[str, tuple[bytes, str]] = {
    "malformed": (b'{"choices": [', "application/json"),
    "html": (b"<html><body>Please log in to the Wi-Fi</body></html>", "text/html"),
    "empty choice": (b'{"choices": [{}]}', "application/json"),
    "null message": (b'{"choices": [{"index": 0, "message": null, "finish_reason": "stop"}]}', "application/json"),
    "list content": (b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": [{"type": "text"}]}, '
                     b'"finish_reason": "stop"}]}', "application/json"),
    "half emoji": (b'{"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [{"index": 0, '
                   b'"message": {"role": "assistant", "content": "Rocket \\ud83d up"}, "finish_reason": "stop"}], '
                   b'"usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}', "application/json"),
}


def _error(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": code}}


class OpenAICompatibleServer:
    """A bounded loopback server answering ``POST /v1/chat/completions`` with the stand-in."""

    def __init__(self, *, expected_key: str | None = None, max_requests: int = 200) -> None:
        self.expected_key, self.max_requests = expected_key, max_requests
        self.chat_format, self.billing_ratio, self.template_tokens = "llama-3", 1.0, 0
        self.context_tokens: int | None = None
        self.models: list[str] | None = None  # listed at GET /v1/models (None: that path answers 404)
        self.echo_model = self.public_models = self.echo_key_in_401 = False
        self.cut_at: int | None = None
        self.trickle: float | None = None
        self.trickle_headers: float | None = None
        self.body_filter: Any = None  # bytes -> bytes, applied to every answer's body
        self.always: str | None = None  # the answer to every chat request (as in answer_next), until None
        self.received: list[dict[str, Any]] = []  # method, path, headers (lower-cased), body of every request
        self._queued: list[str] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def answer_next(self, *answers: str) -> None:
        """The next chat requests' answers: a status ("429", "503": with ``retry-after-ms: 1``), "empty" (an empty
        reply cut at the limit, as gpt-oss can give), "bad:KIND" (one of ``BAD_BODIES``), "wait:VALUE" (a 429 with
        ``Retry-After: VALUE``)."""
        with self._lock:
            self._queued.extend(answers)

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.received if r["path"].endswith("/chat/completions")]

    @property
    def probes(self) -> list[dict[str, Any]]:
        """The one-token requests that find out which system messages arrive."""
        return [r for r in self.chat_requests if r["body"].get("max_tokens") == 1]

    @property
    def model_calls(self) -> list[dict[str, Any]]:
        """The chat requests that are not probes: the replies and summaries asked for."""
        return [r for r in self.chat_requests if r["body"].get("max_tokens") != 1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> OpenAICompatibleServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # one request per connection: once stopped, nothing answers

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                content = self.rfile.read(int(self.headers.get("content-length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                status, payload, extra = owner._answer(self.command, self.path, headers, content)
                data, kind = payload if isinstance(payload, tuple) else (json.dumps(payload).encode(),
                                                                         "application/json")
                data = owner.body_filter(data) if owner.body_filter else data
                head = "".join([f"HTTP/1.0 {status} Answer\r\ncontent-type: {kind}\r\ncontent-length: {len(data)}\r\n",
                                *(f"{name}: {value}\r\n" for name, value in extra.items()), "\r\n"]).encode()
                try:
                    for part, pause in ((head, owner.trickle_headers), (data, owner.trickle)):
                        for piece in [part[i:i + 1] for i in range(len(part))] if pause else [part]:
                            self.wfile.write(piece)
                            self.wfile.flush()
                            time.sleep(pause or 0)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up, as it should
                    pass

            do_GET = do_POST  # noqa: N815

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        """Shut down and release the port (idempotent)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _answer(self, method: str, path: str, headers: dict[str, str], content: bytes) -> tuple[int, Any, dict]:
        try:
            body = json.loads(content or b"{}")
        except ValueError:
            body = {}
        with self._lock:
            self.received.append({"method": method, "path": path, "body": body, "headers": headers})
            if len(self.received) > self.max_requests:
                return 503, _error("test server request limit reached", "server_error"), {"x-should-retry": "false"}
            queued = self._queued.pop(0) if self._queued and method == "POST" else self.always
        sent = headers.get("authorization", "")
        if self.expected_key is not None and sent != f"Bearer {self.expected_key}" and not (
                self.public_models and method == "GET"):
            words = f"Invalid API Key: {sent}" if self.echo_key_in_401 else "Invalid API Key"
            return 401, _error(words, "invalid_request_error", "invalid_api_key"), {}
        if method == "GET":
            if not path.rstrip("/").endswith("/models") or self.models is None:
                return 404, _error(f"no such path: {path}", "not_found"), {}
            return 200, {"object": "list", "data": [{"id": name, "object": "model"} for name in self.models]}, {}
        if queued and queued.startswith("bad:"):
            return 200, BAD_BODIES[queued[4:]], {}
        if queued and queued.startswith("wait:"):
            return 429, _error("Rate limit reached. Please try again in 1h.", "rate_limit_exceeded"), {
                "retry-after": queued[5:]}
        if queued and queued.isdigit():
            words = "Rate limit reached. Please try again in 1ms." if queued == "429" else "Service unavailable"
            return int(queued), _error(words, "rate_limit_exceeded" if queued == "429" else "server_error"), {
                "retry-after-ms": "1"}
        keeps, seen, systems = CHAT_FORMATS[self.chat_format], [], 0  # what the model sees after the chat format
        for message in body.get("messages") or []:
            systems += message.get("role") == "system"
            if message.get("role") != "system" or keeps == "keep all" or (keeps == "keep first" and systems == 1):
                seen.append(message)
        billed = math.ceil(sum(count_tokens(str(m.get("content"))) for m in seen) * self.billing_ratio
                           ) + self.template_tokens * len(seen)
        limit = body.get("max_tokens") or 0
        if self.context_tokens is not None and billed + limit > self.context_tokens:
            return 400, _error(f"This model's maximum context length is {self.context_tokens} tokens. However, you "
                               f"requested {billed + limit} tokens ({billed} in the messages, {limit} in the "
                               "completion). Please reduce the length of the messages or completion.",
                               "invalid_request_error", "context_length_exceeded"), {}
        status, payload = answer({**body, "messages": seen}) if path.rstrip("/").endswith("/chat/completions") else (
            404, _error(f"no such path: {path}", "not_found"))
        if status == 200:
            choice, usage = payload["choices"][0], payload["usage"]
            usage["prompt_tokens"], usage["total_tokens"] = billed, billed + usage["completion_tokens"]
            payload["model"] = body.get("model") if self.echo_model else payload["model"]
            if self.cut_at is not None or queued == "empty":
                words = choice["message"]["content"].split()[:0 if queued == "empty" else self.cut_at]
                choice["message"]["content"], choice["finish_reason"] = " ".join(words), "length"
        return status, payload, {}
