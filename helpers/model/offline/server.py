"""The stand-in's OpenAI-compatible face: a ``chat.completions`` body for each request (same request, same reply;
``usage`` counts the contents in o200k_base), and the ``httpx2`` transport the SDK talks to in offline mode."""
from __future__ import annotations

import hashlib
import json
from typing import Any

import httpx2

from helpers.base.errors import SettingError
from helpers.base.tokens import count_tokens, encoding
from helpers.model.offline.facts import content_text
from helpers.model.offline.markers import FINGERPRINT, MODEL_NAME
from helpers.model.offline.replies import grounded_reply
from helpers.model.offline.summariser import is_summariser_request, summary_reply
from helpers.model.responses import is_chat


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """A ``chat.completions`` response body for a request body, as an OpenAI-compatible server sends it."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise SettingError("messages", messages, "the request has no 'messages' list")
    reply = summary_reply(messages) if is_summariser_request(messages) else grounded_reply(messages)
    limit = body.get("max_completion_tokens") or body.get("max_tokens")
    reply_tokens, finish_reason = encoding().encode_ordinary(reply), "stop"
    if isinstance(limit, int) and 0 < limit < len(reply_tokens):
        reply, finish_reason = encoding().decode(reply_tokens[:limit]), "length"
    prompt_tokens = sum(count_tokens(content_text(message.get("content"))) for message in messages)
    completion_tokens = count_tokens(reply)
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return {"id": f"offline-{digest[:16]}", "object": "chat.completion", "created": 0, "model": MODEL_NAME,
            "system_fingerprint": FINGERPRINT,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply},
                         "finish_reason": finish_reason, "logprobs": None}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}


def handle_chat_request(method: str, path: str, content: bytes) -> tuple[int, dict[str, Any]]:
    """Status and JSON body for one HTTP request to an OpenAI-compatible server backed by the stand-in."""
    if method != "POST" or not is_chat(path):
        message = f"the offline stand-in serves only POST .../chat/completions, not {method} {path}"
        return 404, {"error": {"message": message, "type": "not_found", "code": None}}
    try:
        return 200, respond(json.loads(content or b"{}"))
    except (ValueError, TypeError, AttributeError) as error:
        return 400, {"error": {"message": f"invalid request: {error}", "type": "invalid_request_error", "code": None}}


class OfflineTransport(httpx2.BaseTransport):
    """An ``httpx2`` transport that answers chat requests with the stand-in, in process (no network)."""

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        status, payload = handle_chat_request(request.method, request.url.path, request.read())
        return httpx2.Response(status, json=payload, request=request)
