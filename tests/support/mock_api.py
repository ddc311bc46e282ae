"""Scripted ``httpx2.MockTransport`` handlers for driving the real openai SDK in tests."""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx2

FAST_RETRY = {"retry-after-ms": "1"}  # the SDK honours it, so retries in tests take a millisecond


def completion(content: str | None, *, finish_reason: str = "stop", model: str = "scripted-model",
               prompt_tokens: int = 11, completion_tokens: int = 7) -> dict[str, Any]:
    """A minimal ``chat.completion`` response body."""
    return {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": finish_reason, "logprobs": None}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}


def error_body(message: str, kind: str = "server_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": None}}


Step = httpx2.Response | Exception | Callable[[httpx2.Request], httpx2.Response]


class Scripted:
    """A MockTransport handler that answers with the given steps in order (the last one repeats).

    A step is a response, an exception to raise (e.g. ``httpx2.ConnectError``), or a function of the
    request. Every request is kept in ``requests`` with its JSON body in ``bodies``.
    """

    def __init__(self, *steps: Step) -> None:
        assert steps, "give at least one step"
        self.steps = list(steps)
        self.requests: list[httpx2.Request] = []

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(request.content) for request in self.requests]

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        step = self.steps[min(len(self.requests) - 1, len(self.steps) - 1)]
        if isinstance(step, Exception):
            raise step
        if callable(step) and not isinstance(step, httpx2.Response):
            return step(request)
        return httpx2.Response(step.status_code, headers=step.headers, content=step.content)

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self)


def ok(content: str | None = "fine", **kwargs: Any) -> httpx2.Response:
    return httpx2.Response(200, json=completion(content, **kwargs))


def status(code: int, message: str = "try later") -> httpx2.Response:
    kind = "rate_limit_exceeded" if code == 429 else "server_error"
    return httpx2.Response(code, json=error_body(message, kind), headers=FAST_RETRY)
