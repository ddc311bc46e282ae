"""The OpenAI-compatible face of the offline stand-in: response bodies and the ``httpx2`` transport.

The stand-in is a deterministic, in-process replacement for the chat model.

It is **not a language model**. It lets the notebooks run end to end with no key and no network,
behind the real openai SDK (``OfflineTransport`` is an ``httpx2`` transport), and it does two
things only, both from the text of the request and nothing else:

* a **summariser request** (a system prompt about summarising, and a user message with the
  lessons' sections such as ``CONVERSATION TURNS TO SUMMARISE:``) gets an *extractive* summary:
  the sentences that carry facts (amounts, ages, dates and durations, stated rules such as
  "never ...", decisions, risk profile, goals, names) are copied word for word, merged with the
  existing summary, and dropped lowest-value-first until the text keeps to the word limit the
  prompt states ("at most 80 words"). Extractive summaries never reword a fact: they lose whole
  sentences instead, which is the other failure mode to the lessons' drift;
* a **chat request** gets a short reply (one or two lines, about 10 to 40 tokens) grounded in the
  request, so a printed request is about the conversation. Asked for a fact ("what is my
  salary?") it quotes the sentence of the summary or of the recent turns that holds it and says
  which ("From the summary: ..."), or says it does not have it in what it was sent; told a fact,
  it names what it noted ("Noted: your salary."); a general question gets "I cannot answer that
  offline." Old values are quoted only when the latest message asks for them, so the stand-in
  never carries a fact forward in its own replies: whether a fact is still in the recent turns is
  the memory's doing. To a message of the course's own conversations (listed in
  ``data/offline_replies/``), the grounded line(s) are followed by a coach's reply written for this
  project, about as long as the lesson's model wrote (200 to 400 tokens), so token budgets fill as in
  the lessons' runs; the written reply never states a fact the request must supply.

Every reply starts with a marker (``[offline stand-in]``, summaries ``[offline stand-in summary]``);
what the stand-in is, is said once, by the mode line ``connect()`` prints. The response's ``model``
field is ``offline-stand-in``, and the same request always gives the same reply. ``usage`` holds
real o200k_base counts: ``prompt_tokens`` is the sum of the message contents' tokens (no
chat-template overhead, so it is a little below what a real server bills), ``completion_tokens``
the reply's tokens.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

import httpx2

from helpers.base.tokens import count_tokens, encoding
from helpers.model.offline.markers import FINGERPRINT, MODEL_NAME
from helpers.model.offline.replies import grounded_reply
from helpers.model.offline.requests import (
    content_text,
    is_summariser_request,
    parse_summariser_request,
)
from helpers.model.offline.summariser import extractive_summary


def reply_for(messages: list[dict[str, Any]]) -> str:
    """The stand-in's reply text for a request's messages (summary or grounded chat reply)."""
    if is_summariser_request(messages):
        parsed = parse_summariser_request(messages)
        return extractive_summary(parsed.existing_summary, parsed.messages, word_limit=parsed.word_limit,
                                  rules_first=parsed.names_hard_rules)
    return grounded_reply(messages)


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """A ``chat.completions`` response body for a request body, as an OpenAI-compatible server sends it."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ValueError("the request has no 'messages' list")
    reply = reply_for(messages)
    limit = body.get("max_completion_tokens") or body.get("max_tokens")
    finish_reason = "stop"
    reply_tokens = encoding().encode(reply, disallowed_special=())
    if isinstance(limit, int) and 0 < limit < len(reply_tokens):
        reply, finish_reason = encoding().decode(reply_tokens[:limit]), "length"
    prompt_tokens = sum(count_tokens(content_text(message.get("content"))) for message in messages)
    completion_tokens = count_tokens(reply)
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return {
        "id": f"offline-{digest[:16]}",
        "object": "chat.completion",
        "created": 0,
        "model": MODEL_NAME,
        "system_fingerprint": FINGERPRINT,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": reply},
                     "finish_reason": finish_reason, "logprobs": None}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def handle_chat_request(method: str, path: str, content: bytes) -> tuple[int, dict[str, Any]]:
    """Status and JSON body for one HTTP request to an OpenAI-compatible server backed by the stand-in."""
    if method != "POST" or not path.rstrip("/").endswith("chat/completions"):
        message = f"the offline stand-in serves only POST .../chat/completions, not {method} {path}"
        return 404, {"error": {"message": message, "type": "not_found", "code": None}}
    try:
        body = json.loads(content or b"{}")
        return 200, respond(body)
    except (ValueError, TypeError, AttributeError) as error:
        return 400, {"error": {"message": f"invalid request: {error}", "type": "invalid_request_error", "code": None}}


class OfflineTransport(httpx2.BaseTransport):
    """An ``httpx2`` transport that answers chat requests with the stand-in, in process (no network)."""

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        status, payload = handle_chat_request(request.method, request.url.path, request.read())
        return httpx2.Response(status, json=payload, request=request)
