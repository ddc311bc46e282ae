"""Which model a server at ``LLM_BASE_URL`` serves: its list at ``/models``, ``LLM_MODEL`` checked against it, and
model ids that are file paths named by their file name.

llama-cpp-python lists the GGUF it loaded by its path (``/home/me/models/gemma-3-270m-it-Q4_K_M.gguf``), and vLLM
the folder it was given. A path names a machine, so it is never shown, recorded or stored: the notebooks use
the file name without its extension (``gemma-3-270m-it-Q4_K_M``) and ``ModelFileTransport``, the lowest layer
above the network, puts the path back in each request and takes it out of each answer.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import httpx2

from helpers.model.errors import UnknownModel
from helpers.model.explain import rejected_key

MODELS_TIMEOUT = 10.0  # seconds for the server's list of models; a server that takes longer is not asked
MODEL_FILE_SUFFIXES = (".gguf", ".ggml", ".bin", ".safetensors")
_ABSOLUTE = re.compile(r"^(?:/|~|\\\\|[A-Za-z]:[\\/]|\.{1,2}[\\/])")


def is_file_path(model_id: str) -> bool:
    """True for a model id that is a local file or folder path (absolute, relative with ./, or a path to a model
    file), not a name such as ``llama3.2:latest`` or ``meta-llama/Llama-3.1-8B``."""
    has_folder = "/" in model_id or "\\" in model_id
    return bool(_ABSOLUTE.match(model_id)) or (has_folder and model_id.lower().endswith(MODEL_FILE_SUFFIXES))


def file_name(model_id: str) -> str:
    """What a model id that is a path is called here: its last part, without a model file's extension."""
    last = model_id.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    for suffix in MODEL_FILE_SUFFIXES:
        if last.lower().endswith(suffix):
            return last[:-len(suffix)]
    return last


def shown(model_id: str) -> str:
    """A model id as it may be printed or stored: a path by its file name, any other id as it is."""
    return file_name(model_id) if is_file_path(model_id) else model_id


def listed_models(base_url: str, transport: httpx2.BaseTransport, api_key: str | None, *, key_env: str,
                  where: str) -> tuple[str, ...] | None:
    """The model ids a server lists at ``/models``; None when it lists none (no such path, no answer, no JSON).

    A key the server rejects there (401, 403) raises the same rejected-key error as a chat call would.
    """
    headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        with httpx2.Client(transport=transport) as client:
            response = client.get(base_url.rstrip("/") + "/models", headers=headers)
    except Exception:  # noqa: BLE001 - a server that cannot list its models is simply not checked
        return None
    payload = _json(response.content)
    if response.status_code in (401, 403):
        raise rejected_key(where, response.status_code, _said(payload), key_env, key_set=api_key is not None,
                           attempts=1)
    data = payload.get("data") if response.status_code == 200 and isinstance(payload, dict) else None
    if not isinstance(data, list):
        return None
    names = tuple(item["id"] for item in data if isinstance(item, dict) and isinstance(item.get("id"), str))
    return names or None


def _json(content: bytes) -> Any:
    try:
        return json.loads(content)
    except ValueError:
        return None


def _said(payload: Any) -> str:
    """The server's own words in an error answer (``{"error": {"message": ...}}`` or ``{"detail": ...}``)."""
    inner = payload.get("error", payload) if isinstance(payload, dict) else None
    words = (inner.get("message") or inner.get("detail")) if isinstance(inner, dict) else inner
    return " ".join(words.split())[:300] if isinstance(words, str) else ""


def _served_as(model: str, listed: tuple[str, ...]) -> str | None:
    """The listed id that ``model`` names: the same id, Ollama's ``:latest`` tag left off, or a model file's name
    (llama.cpp servers list the path they loaded) with or without its extension; None if it names none."""
    for name in listed:
        last = name.replace("\\", "/").rsplit("/", 1)[-1]
        if model in (name, name.removesuffix(":latest"), last, file_name(name)):
            return name
    return None


@dataclass(frozen=True)
class ServedModel:
    """The model to ask for: ``name`` as requests, outputs and recordings say it, ``wire`` as the server wants it
    (they differ only for a path), and how the mode line names it."""

    name: str
    wire: str
    label: str


def served_model(wanted: str | None, listed: tuple[str, ...] | None, where: str) -> ServedModel:
    """``LLM_MODEL`` (``wanted``) if the server lists it, or lists nothing; else the server's only model when
    ``wanted`` is unset; else ``UnknownModel`` with the names it lists (paths by their file names)."""
    if wanted and listed is None:
        return ServedModel(shown(wanted), wanted, shown(wanted))
    served = _served_as(wanted, listed) if wanted and listed else None
    if wanted and served:
        name = shown(wanted)
        wire = served if is_file_path(served) else wanted  # a path is sent whole: vLLM accepts no other name
        same = served in (wanted, wire) or shown(served) == name
        return ServedModel(name, wire, name if same else f"{name} (served as {shown(served)})")
    if not wanted and listed and len(listed) == 1:
        only = listed[0]
        how = "the one model the server lists" + (", named by its file" if is_file_path(only) else "")
        return ServedModel(shown(only), only, f"{shown(only)} ({how})")
    names = tuple(shown(name) for name in listed or ())
    said = ", ".join(repr(name) for name in names[:12]) + (" ..." if len(names) > 12 else "")
    if not wanted:
        found = (f"; it lists {said}" if listed else f"; it listed none at {where}/models (no such path, or no "
                 f"answer within {MODELS_TIMEOUT:g} seconds: a busy local server may still be working on a request)")
        raise UnknownModel(f"name the model your server at {where} serves: set LLM_MODEL (e.g. LLM_MODEL=llama3.2 for "
                           f"Ollama) or pass model={found}", listed=names)
    raise UnknownModel(f"the server at {where} does not serve LLM_MODEL={shown(wanted)!r}: it lists {said}. Set "
                       "LLM_MODEL to one of those (in .env or your environment, then restart the kernel); a server "
                       "that answers any name would otherwise label every reply with the name you typed.",
                       listed=names)


class ModelFileTransport(httpx2.BaseTransport):
    """Sends ``name`` to the server as ``wire`` (a model file's path) and answers with ``name`` wherever the
    server wrote the path, so nothing above it (the SDK, the checks, the recorder) ever holds the path."""

    def __init__(self, inner: httpx2.BaseTransport, name: str, wire: str) -> None:
        self.inner, self.name, self.wire = inner, name, wire
        self._quoted = (json.dumps(wire)[1:-1].encode(), json.dumps(name)[1:-1].encode())  # as JSON writes them

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        body = _json(request.read()) if request.method == "POST" else None
        if isinstance(body, dict) and body.get("model") == self.name:
            content = json.dumps({**body, "model": self.wire}).encode()
            headers = [(k, v) for k, v in request.headers.multi_items() if k.lower() != "content-length"]
            request = httpx2.Request(request.method, request.url, headers=headers, content=content,
                                     extensions=request.extensions)
        response = self.inner.handle_request(request)
        try:
            raw = b"".join(response.stream)
        finally:
            response.close()
        content = httpx2.Response(response.status_code, headers=response.headers, content=raw).read()
        headers = [(k, v) for k, v in response.headers.multi_items()
                   if k.lower() not in ("content-length", "content-encoding", "transfer-encoding")]
        return httpx2.Response(response.status_code, headers=headers, content=content.replace(*self._quoted),
                               request=request)

    def close(self) -> None:
        self.inner.close()
