"""Which model a server at ``LLM_BASE_URL`` serves: its list at ``/models``, ``LLM_MODEL`` checked against it, and a
model id that is a file path (llama-cpp-python lists its GGUF so) named by its file name, as a path names a machine."""
from __future__ import annotations

import re

import httpx2

from helpers.model.errors import UnknownModel
from helpers.model.explain import rejected_key, server_said
from helpers.model.responses import json_of

MODELS_TIMEOUT = 10.0  # seconds for the server's list of models; a server that takes longer is not asked
_MODEL_FILE = re.compile(r"\.(?:gguf|ggml|bin|safetensors)\Z", re.IGNORECASE)  # a model file's extension
_ABSOLUTE = re.compile(r"^(?:/|~|\\\\|[A-Za-z]:[\\/]|\.{1,2}[\\/])")


def is_file_path(model_id: str) -> bool:
    """True for a model id that is a file or folder path, not a name such as ``meta-llama/Llama-3.1-8B``."""
    has_folder = "/" in model_id or "\\" in model_id
    return bool(_ABSOLUTE.match(model_id)) or (has_folder and bool(_MODEL_FILE.search(model_id)))


def file_name(model_id: str) -> str:
    """What a model id that is a path is called here: its last part, without a model file's extension."""
    return _MODEL_FILE.sub("", model_id.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1])


def shown(model_id: str) -> str:
    """A model id as it may be printed or stored: a path by its file name, any other id as it is."""
    return file_name(model_id) if is_file_path(model_id) else model_id


def listed_models(base_url: str, transport: httpx2.BaseTransport, api_key: str | None, *, key_env: str,
                  where: str) -> tuple[str, ...] | None:
    """The model ids a server lists at ``/models`` (None when it lists none); a key it rejects there (401, 403)
    raises the same error as a chat call would."""
    headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        with httpx2.Client(transport=transport) as client:
            response = client.get(base_url.rstrip("/") + "/models", headers=headers)
    except Exception:  # noqa: BLE001 - a server that cannot list its models is simply not checked
        return None
    payload = json_of(response.content)
    if response.status_code in (401, 403):
        raise rejected_key(where, response.status_code, server_said(payload), key_env, key_set=api_key is not None,
                           attempts=1)
    data = payload.get("data") if response.status_code == 200 and isinstance(payload, dict) else None
    names = tuple(item["id"] for item in data if isinstance(item, dict) and isinstance(item.get("id"), str)) \
        if isinstance(data, list) else ()
    return names or None


def _served_as(model: str, listed: tuple[str, ...]) -> str | None:
    """The listed id that ``model`` names: the same id, without Ollama's ``:latest``, or a model file's name."""
    return next((name for name in listed if model in (name, name.removesuffix(":latest"), file_name(name),
                                                      name.replace("\\", "/").rsplit("/", 1)[-1])), None)


def served_model(wanted: str | None, listed: tuple[str, ...] | None, where: str) -> tuple[str, str, str]:
    """The model to ask for (as outputs and recordings name it), as the mode line names it, and as the server is sent
    it (a model file's path): ``LLM_MODEL`` if the server lists it (or lists nothing), else its only model when none
    is named, else ``UnknownModel`` with the names it lists."""
    served = _served_as(wanted, listed) if wanted and listed else None
    if wanted and (served or listed is None):
        name = shown(wanted)
        wire = served if served and is_file_path(served) else wanted  # a path is sent whole: vLLM accepts no other name
        same = served in (None, wanted, wire) or shown(served) == name
        label = name if same else f"{name} (served as {shown(served)})"
    elif not wanted and listed and len(listed) == 1:
        how = "the one model the server lists" + (", named by its file" if is_file_path(listed[0]) else "")
        name, wire, label = shown(listed[0]), listed[0], f"{shown(listed[0])} ({how})"
    else:
        names = tuple(shown(name) for name in listed or ())
        said = ", ".join(repr(name) for name in names[:12]) + (" ..." if len(names) > 12 else "")
        if not wanted:
            found = (f"; it lists {said}" if listed else f"; it listed none at {where}/models (no such path, or no "
                     f"answer within {MODELS_TIMEOUT:g} seconds: a busy local server may still be working on a "
                     "request)")
            raise UnknownModel(f"name the model your server at {where} serves: set LLM_MODEL (e.g. LLM_MODEL=llama3.2 "
                               f"for Ollama) or pass model={found}", listed=names)
        raise UnknownModel(f"the server at {where} does not serve LLM_MODEL={shown(wanted)!r}: it lists {said}. Set "
                           "LLM_MODEL to one of those (in .env or your environment, then restart the kernel); a server "
                           "that answers any name would otherwise label every reply with the name you typed.",
                           listed=names)
    return name, label, wire
