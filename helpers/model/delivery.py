"""What reaches the model: system messages sent in a form the server's chat format keeps
(``LLM_SYSTEM_MESSAGES``), and a check, by probe, of whether each one arrived.

Many chat formats keep only the first system message, or none, so the lessons' summary (the second) may never
reach the model. For each system message, two ``max_tokens=1`` probes replace its text by a short and a long
sentence: a server that keeps it bills the long one more. The verdict is kept per request shape for the
session. ``DeliveryTransport`` sits under the recorder in live and record modes (docs/local_servers.md).
"""
from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx2

from helpers.base.text import listed
from helpers.base.tokens import count_tokens
from helpers.memory.registry import headings
from helpers.model.offline.summariser import is_summariser_request
from helpers.model.responses import CallTrace, json_of, request_json, retries_taken, with_body

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
    message (one of its own if none follows), as llama.cpp's Gemma template does.
    """
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


def recognised(messages: list[dict[str, Any]], index: int) -> str | None:
    """What a system message is, read from the request: a memory's summary, a summariser's prompt, the system prompt."""
    content = messages[index].get("content")
    if not isinstance(content, str):
        return None
    if any(content.startswith(heading) for heading in headings()):
        return "the summary"
    if index == next(iter(_systems(messages)), None):
        return "the summariser prompt" if is_summariser_request(messages) else "the system prompt"
    return None


def describe(messages: list[dict[str, Any]], index: int) -> str:
    """What to call a written message in a warning: the name the caller gave it, else what the request shows it
    is, with its place and first words."""
    content = messages[index].get("content")
    named = _names.get().get(content) if isinstance(content, str) else None
    if named:
        return named
    systems = _systems(messages)
    text = " ".join(str(content).split())
    preview = text if len(text) <= 48 else text[:45] + "..."
    place = (f"system message {systems.index(index) + 1} of {len(systems)}" if index in systems
             else f"message {index + 1}")
    what = recognised(messages, index)
    return f"{what} ({place}: {preview!r})" if what else f"{place} ({preview!r})"


@dataclass
class DeliveryTransport(httpx2.BaseTransport):
    """Sends chat requests with their system messages as ``mode`` says and, with ``check``, finds by probe (through
    ``probe``, with no recording or retries) which ones the server drops; ``trace.not_received`` holds them.
    """

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
    if request.method != "POST" or not request.url.path.rstrip("/").endswith("chat/completions"):
        return None
    body = request_json(request)
    messages = body.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages) or body.get("stream"):
        return None
    return body


def _probe_body(body: dict[str, Any], index: int, text: str) -> dict[str, Any]:
    """A one-token request of the same shape, the message at ``index`` holding ``text`` and every other one filler."""
    messages = [{"role": m.get("role"), "content": text if i == index else FILLER}
                for i, m in enumerate(body["messages"])]
    probe = {**body, "messages": messages, "max_tokens": 1}
    if "max_completion_tokens" in probe:
        probe["max_completion_tokens"] = 1
        probe.pop("max_tokens")
    return probe
