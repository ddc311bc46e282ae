"""What reaches the model: the system messages sent as ``LLM_SYSTEM_MESSAGES`` says (``adapt``), and on a local
server which of them its chat format drops, found by probe (``Delivery``) and named in a warning (``describe``)."""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx2

from helpers.base.text import listed
from helpers.base.tokens import count_tokens
from helpers.memory.registry import headings
from helpers.model.offline.summariser import is_summariser_request

ADAPTED = {"merge": "joined into one", "user": "put at the start of the user message after them"}
SHORT_TEXT, FILLER = "Check.", "Hello."  # a probe's texts: the one in the place probed, and every other message's
LONG_TEXT = " ".join(["This sentence checks whether a system message reaches the model."] * 6)


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
            sent.append({**message, "content": "\n\n".join([*(messages[i]["content"] for i in waiting),
                                                             message["content"]])})
            carries.append((*waiting, index))
            waiting = []
        else:
            sent.append(message)
            carries.append((index,))
    if waiting:
        sent.append({"role": "user", "content": "\n\n".join(messages[i]["content"] for i in waiting)})
        carries.append(tuple(waiting))
    return sent, carries


def describe(messages: list[dict[str, Any]], index: int) -> str:
    """What to call a written message in a warning: the summary, the system or summariser prompt, else its place
    and first words."""
    content, systems = messages[index].get("content"), [i for i, m in enumerate(messages) if m.get("role") == "system"]
    if isinstance(content, str) and content.startswith(tuple(headings())):
        return "the summary"
    if systems[:1] == [index]:
        return "the summariser prompt" if is_summariser_request(messages) else "the system prompt"
    text, place = " ".join(str(content).split()), f"message {index + 1}"
    if index in systems:
        place = f"system message {systems.index(index) + 1} of {len(systems)}"
    return f"{place} ({text if len(text) <= 48 else text[:45] + '...'!r})"


class Delivery:
    """Which system messages a server keeps, probed once per model and request shape with two one-token requests of
    that shape (a long and a short text in the place probed, the prompt tokens billed compared); what it drops is
    said on every request, and what to do about it once."""

    def __init__(self, notify: Callable[[str], None]) -> None:
        self.notify, self.verdicts, self.explained = notify, {}, set()

    def dropped(self, wire: dict[str, Any], written: list[dict[str, Any]], carries: list[tuple[int, ...]],
                send: Callable[[dict[str, Any]], httpx2.Response], limit: str) -> tuple[int, ...]:
        """The indices of the written messages the server dropped from this request (sent as ``wire``)."""
        roles = [m.get("role") for m in wire["messages"]]
        systems = [i for i, role in enumerate(roles) if role == "system"]
        # the shape a chat format's rule sees: for each system message, whether only system messages come before it
        key = (wire.get("model"), tuple(all(role == "system" for role in roles[:i]) for i in systems))
        if key not in self.verdicts:
            self.verdicts[key] = tuple(self._arrives(wire, index, send, limit) for index in systems)
        verdict = self.verdicts[key]
        if not (not_received := tuple(sorted({w for i, arrived in zip(systems, verdict) if arrived is False
                                               for w in carries[i]}))):
            return ()
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
        names = [describe(written, index) for index in not_received]
        self.notify(f"NOT RECEIVED: the server dropped {listed(names)} from this request; the model answered "
                    f"without {'it' if len(names) == 1 else 'them'}.")
        return not_received

    @staticmethod
    def _arrives(body: dict[str, Any], index: int, send: Callable[[dict[str, Any]], httpx2.Response],
                 limit: str) -> bool | None:
        """Whether the system message at ``index`` reaches the model: True, False, or None if the probes cannot tell."""
        billed = []
        try:  # the body as sent carries its token limit under the endpoint's name for it, ``limit``
            for text in (SHORT_TEXT, LONG_TEXT):
                messages = [{"role": m.get("role"), "content": text if i == index else FILLER}
                            for i, m in enumerate(body["messages"])]
                billed.append(json.loads(send({**body, "messages": messages, limit: 1}).content)["usage"][
                    "prompt_tokens"])
            difference = billed[1] - billed[0]
        except Exception:  # noqa: BLE001 - a probe that fails tells nothing; the call itself went through
            return None
        expected = count_tokens(LONG_TEXT) - count_tokens(SHORT_TEXT)
        return True if difference >= 0.3 * expected else False if difference <= 0.1 * expected else None
