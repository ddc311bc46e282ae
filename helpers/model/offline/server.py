"""The stand-in's OpenAI-compatible face: a ``chat.completions`` body for each request body (same request, same
reply; ``usage`` counts the contents in o200k_base), which the transport answers with in offline mode."""
from __future__ import annotations

import hashlib
import json
from typing import Any

from helpers.base.errors import SettingError
from helpers.base.tokens import count_tokens, encoding
from helpers.model.offline.facts import content_text
from helpers.model.offline.markers import FINGERPRINT, MODEL_NAME
from helpers.model.offline.replies import grounded_reply
from helpers.model.offline.summariser import is_summariser_request, summary_reply


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """A ``chat.completions`` response body for a request body, as an OpenAI-compatible server sends it; every other
    argument (``temperature``, ``reasoning_effort`` ...) is taken and has no effect."""
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


def answer(body: Any) -> tuple[int, dict[str, Any]]:
    """The status and JSON body a server backed by the stand-in answers a chat request with: 200, or 400."""
    try:
        return 200, respond(body)
    except (ValueError, TypeError, AttributeError) as error:
        return 400, {"error": {"message": f"invalid request: {error}", "type": "invalid_request_error", "code": None}}
