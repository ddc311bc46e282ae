"""Scripted ``httpx2.MockTransport`` handlers for driving the real openai SDK in tests, and the one assertion on the
project's errors: by their fields, not their wording."""
from __future__ import annotations

import json
from typing import Any

import httpx2

from helpers.model.errors import ModelAccessError


def completion(content: str | None, *, finish_reason: str = "stop") -> dict[str, Any]:
    return {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "scripted", "choices": [{
        "index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}}


class Scripted:
    """A MockTransport handler answering with the given steps in order (the last one repeats): a response, an
    exception to raise (``httpx2.ConnectError``), or a function of the request. It keeps every request."""

    def __init__(self, *steps: Any) -> None:
        self.steps, self.requests = list(steps), []

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(request.content) for request in self.requests if request.method == "POST"]

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        step = self.steps[min(len(self.requests), len(self.steps)) - 1]
        if isinstance(step, Exception):
            raise step
        return step(request) if callable(step) and not isinstance(step, httpx2.Response) else httpx2.Response(
            step.status_code, headers=step.headers, content=step.content)

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self)


def ok(content: str | None = "fine", **kwargs: Any) -> httpx2.Response:
    return httpx2.Response(200, json=completion(content, **kwargs))


def status(code: int, message: str = "try later") -> httpx2.Response:
    """An error answer the SDK may retry at once (``retry-after-ms: 1``)."""
    kind = "rate_limit_exceeded" if code == 429 else "server_error"
    return httpx2.Response(code, json={"error": {"message": message, "type": kind, "code": None}},
                           headers={"retry-after-ms": "1"})


def assert_fields(error: BaseException, **expected: Any) -> None:
    """``error`` is one of the project's model errors, its fields hold ``expected``, and its message names the
    setting it says to change (so the message and the fields cannot drift apart)."""
    assert isinstance(error, ModelAccessError), f"{type(error).__name__} is not a ModelAccessError: {error}"
    assert {name: getattr(error, name) for name in expected} == expected, repr(error)
    assert not error.setting or error.setting in str(error), f"the message does not name {error.setting}: {error}"
