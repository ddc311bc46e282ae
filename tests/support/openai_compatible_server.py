"""An OpenAI-compatible HTTP server on 127.0.0.1 for tests, serving the offline stand-in.

Live mode is pointed at it by base URL, as a user points it at Ollama or vLLM, so the tests go
over real HTTP through the real SDK. It can be told to fail (429 with a short ``retry-after-ms``,
5xx, an empty reply cut off by the token limit) and it records what it received. It binds port 0
on loopback only, answers at most ``max_requests`` requests, and always shuts down on exit.

    with OpenAICompatibleServer() as server:
        server.fail_next(1, status=429)
        access = connect("live", base_url=server.base_url, model="stand-in")
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from helpers.model.offline.server import handle_chat_request


class OpenAICompatibleServer:
    """A bounded loopback server answering ``POST /v1/chat/completions`` with the stand-in."""

    def __init__(self, *, expected_key: str | None = None, max_requests: int = 200) -> None:
        self.expected_key = expected_key
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

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.received if r["path"].endswith("/chat/completions")]

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
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

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
            queued = self._failures.pop(0) if self._failures else None
            always = self._always
        if self.expected_key is not None:
            sent = {k.lower(): v for k, v in headers.items()}.get("authorization", "")
            if sent != f"Bearer {self.expected_key}":
                return 401, _error("Invalid API Key", "invalid_request_error", "invalid_api_key"), {}
        status, kind = queued if queued else ((always, "status") if always else (200, "ok"))
        if kind == "status":
            message = "Rate limit reached. Please try again in 1ms." if status == 429 else "Service unavailable"
            return status, _error(message, "rate_limit_exceeded" if status == 429 else "server_error"), {
                "retry-after-ms": "1"}
        status, payload = handle_chat_request(method, path, content)
        if kind == "empty" and status == 200:
            payload["choices"][0]["message"]["content"] = ""
            payload["choices"][0]["finish_reason"] = "length"
            payload["usage"]["completion_tokens"] = body.get("max_tokens", 0) if isinstance(body, dict) else 0
        return status, payload, {}


def _error(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": code}}
