"""``connect()``: a real ``openai.OpenAI`` client in each mode (live, record, replay, offline) over the one transport,
named in one printed line, the mode line; keys come from the environment or ``.env`` and are never shown."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any, NamedTuple
from urllib.request import getproxies_environment, proxy_bypass_environment

import httpx2
import openai
from dotenv import dotenv_values
from openai.types.chat import ChatCompletion

from helpers.base.errors import SettingError
from helpers.base.paths import REPO_ROOT
from helpers.model.errors import (EmptyReply, MissingKey, Reason, RecordingMissing, UnknownModel, explain_in_notebooks,
                                  model_error, rejected_key, server_said)
from helpers.model.offline.markers import MODEL_NAME as OFFLINE_MODEL
from helpers.model.recordings import Recording, display_path, recording_path
from helpers.model.responses import ADAPTED
from helpers.model.transport import ModelTransport
from helpers.model.settings import (CUSTOM_KEY_ENV, DEFAULT_PROVIDER, PROVIDERS, Traits, env, public_url, setting,
                                    url_credentials)

MODES = ("live", "record", "replay", "offline")
ENV_FILE = REPO_ROOT / ".env"
DEFAULT_KEY_ENV = PROVIDERS[DEFAULT_PROVIDER].key_env  # the key a replay or offline client names
MODELS_TIMEOUT = 10.0  # seconds for a server's list of models; a server that takes longer is not checked
_OFFLINE_LABEL = ("Model: offline | a deterministic stand-in, not a language model: its summaries copy sentences, its "
                  "replies (marked [offline stand-in]) take facts only from the request, and to the course's own "
                  f"conversations add replies written for this project | {OFFLINE_MODEL} | no network")
_MODEL_FILE = re.compile(r"\.(?:gguf|ggml|bin|safetensors)\Z", re.IGNORECASE)  # a model file's extension
_PATH = re.compile(r"^(?:/|~|\\\\|[A-Za-z]:[\\/]|\.{1,2}[\\/])")


class _Endpoint(NamedTuple):
    provider: str  # "groq", "openai" or "custom"
    name: str
    base_url: str
    model: str | None
    key: str | None  # None: no key set (a custom server may need none)
    key_source: str  # where the key came from, for the mode line (never the key itself)
    key_env: str  # the variable a user should set


def _endpoint(provider: str | None, base_url: str | None, model: str | None, api_key: str | None) -> _Endpoint:
    """The endpoint the arguments and ``LLM_*`` name: a server at ``LLM_BASE_URL``, else the lessons' provider
    unless only another provider's key is set."""
    provider, base_url = (provider or env("LLM_PROVIDER") or "").lower() or None, base_url or env("LLM_BASE_URL")
    if provider not in (None, *PROVIDERS, "custom"):
        raise SettingError("LLM_PROVIDER", provider, f"unknown provider {provider!r}: use "
                           f"{', '.join(map(repr, PROVIDERS))}, or 'custom' with a base URL")
    if provider == "custom" or (provider is None and base_url):
        if not base_url:
            raise SettingError("LLM_BASE_URL", base_url, "a custom provider needs its base URL: set LLM_BASE_URL "
                               "(e.g. http://localhost:11434/v1 for Ollama) or pass base_url=")
        key = api_key or env(CUSTOM_KEY_ENV)
        return _Endpoint("custom", "OpenAI-compatible server", base_url.rstrip("/"), model or env("LLM_MODEL"), key,
                         "argument" if api_key else CUSTOM_KEY_ENV if key else "", CUSTOM_KEY_ENV)
    if provider is None:
        others = [name for name, known in PROVIDERS.items() if name != DEFAULT_PROVIDER and env(known.key_env)]
        keep = api_key or env(PROVIDERS[DEFAULT_PROVIDER].key_env) or len(others) != 1
        provider = DEFAULT_PROVIDER if keep else others[0]
    known = PROVIDERS[provider]
    return _Endpoint(provider, known.name, (base_url or known.base_url).rstrip("/"),
                     model or env("LLM_MODEL") or known.default_model, api_key or env(known.key_env),
                     "argument" if api_key else known.key_env, known.key_env)


def is_file_path(model_id: str) -> bool:
    """True for a model id that is a file or folder path, not a name such as ``meta-llama/Llama-3.1-8B``."""
    return bool(_PATH.match(model_id)) or (("/" in model_id or "\\" in model_id) and bool(_MODEL_FILE.search(model_id)))


def shown(model_id: str) -> str:
    """A model id as it may be printed or stored: a path by its file name (no model file extension), else as it is."""
    name = _MODEL_FILE.sub("", model_id.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1])
    return name if is_file_path(model_id) else model_id


def served_model(wire: ModelTransport, endpoint: _Endpoint, seconds: float, where: str) -> tuple[str, str, str]:
    """A local server's model as outputs name it, as the mode line does, and as the server is sent it (a listed path):
    ``LLM_MODEL`` if ``/models`` lists it (``:latest`` or a file's name match too) or lists nothing, else the only
    model listed, else ``UnknownModel``; a key refused there is the same error as on a chat call."""
    headers = {"authorization": f"Bearer {endpoint.key}"} if endpoint.key else {}
    request = httpx2.Request("GET", endpoint.base_url + "/models", headers=headers,
                             extensions={"timeout": httpx2.Timeout(min(seconds, MODELS_TIMEOUT)).as_dict()})
    try:
        response = wire.handle_request(request)
        payload = response.json()
        listed = tuple(item["id"] for item in payload["data"]) if response.status_code == 200 else ()
    except Exception:  # noqa: BLE001 - a server that cannot list its models is simply not checked
        response, listed = None, ()
    if response is not None and response.status_code in (401, 403):
        raise rejected_key(where, response.status_code, server_said(payload), endpoint.key_env,
                           key_set=endpoint.key is not None, attempts=1)
    listed = tuple(name for name in listed if isinstance(name, str)) or None
    wanted = endpoint.model
    served = next((name for name in listed or () if wanted in (name, name.removesuffix(":latest"), shown(name))), None)
    if wanted and (served or listed is None):
        return shown(wanted), shown(wanted), served if served and is_file_path(served) else wanted
    if not wanted and listed and len(listed) == 1:
        how = "the one model the server lists" + (", named by its file" if is_file_path(listed[0]) else "")
        return shown(listed[0]), f"{shown(listed[0])} ({how})", listed[0]
    names = tuple(shown(name) for name in listed or ())
    said = ", ".join(repr(name) for name in names[:12]) + (" ..." if len(names) > 12 else "")
    if wanted:
        raise UnknownModel(f"the server at {where} does not serve LLM_MODEL={shown(wanted)!r}: it lists {said}. Set "
                           "LLM_MODEL to one of those (in .env or your environment, then restart the kernel); a server "
                           "that answers any name would otherwise label every reply with the name you typed.",
                           listed=names)
    found = (f"; it lists {said}" if listed else f"; it listed none at {where}/models (no such path, or no answer "
             f"within {MODELS_TIMEOUT:g} seconds: a busy local server may still be working on a request)")
    raise UnknownModel(f"name the model your server at {where} serves: set LLM_MODEL (e.g. LLM_MODEL=llama3.2 for "
                       f"Ollama) or pass model={found}", listed=names)


@dataclass
class ModelAccess:
    """A ready client and what it talks to; ``complete()`` adds the project's empty-reply retry and explanations."""

    client: openai.OpenAI
    model: str
    mode: str
    label: str
    endpoint: str
    provider: str
    transport: ModelTransport
    key_env: str

    trace = property(attrgetter("transport.trace"))  # what the transport saw of the last call
    secrets = property(attrgetter("transport.secrets"))
    traits = property(attrgetter("transport.traits"))
    notices = property(attrgetter("transport.notices"))  # what model access had to say (printed unless quiet)
    max_retries = property(attrgetter("client.max_retries"))
    timeout = property(attrgetter("client.timeout"))

    def complete(self, messages: list[dict[str, Any]], *, max_tokens: int = 1024, reasoning_effort: str | None = None,
                 purpose: str = "reply") -> ChatCompletion:
        """One chat completion (temperature 0) with a non-empty reply, or the project's error saying what to do; an
        empty reply cut at the token limit (gpt-oss reasons inside ``max_tokens``) is retried once, at twice it."""
        for limit in (max_tokens, max_tokens * 2):
            try:  # what the endpoint does not accept, the transport leaves out
                options = {"reasoning_effort": reasoning_effort} if reasoning_effort else {}
                response = self.client.chat.completions.create(model=self.model, messages=messages, max_tokens=limit,
                                                               temperature=0, **options)
            except openai.APIError as error:
                raise model_error(error, self) from error
            choice = response.choices[0] if response.choices else None
            if choice and (choice.message.content or "").strip():
                return response
            if (finish := choice.finish_reason if choice else None) != "length":
                raise EmptyReply(f"The model returned an empty {purpose} (finish_reason={finish!r}). Run the cell "
                                 "again, or switch to LLM_MODE=replay / LLM_MODE=offline.")
            if limit == max_tokens:
                self.transport.notify(f"empty {purpose} (finish_reason='length': the model spent {self.traits.limit}="
                                      f"{max_tokens} before writing); retrying once with {max_tokens * 2}")
        raise EmptyReply(
            f"The model returned an empty {purpose} twice (finish_reason='length' at {self.traits.limit}={max_tokens} "
            f"and {max_tokens * 2}): a reasoning model such as gpt-oss spent the whole limit on hidden reasoning. "
            "Raise max_tokens, lower reasoning_effort, or switch to LLM_MODE=replay / LLM_MODE=offline.",
            reason=Reason.EMPTY_REPLY_CUT, attempts=2, setting=self.traits.limit, retry_can_help=False)

    def close(self) -> None:
        self.client.close()


def load_env_file(path: str | Path | None = None) -> None:
    """Load ``.env`` (the repository's by default) into the environment, never overriding a value that is set (one
    exported empty counts as unset)."""
    if (file := Path(path) if path else ENV_FILE).is_file():
        os.environ.update({name: value for name, value in dotenv_values(file).items()
                           if value is not None and not os.environ.get(name, "").strip()})


def _proxy_for(url: str) -> str | None:
    """The proxy the environment sets for this URL (a transport given to the SDK does not read it itself)."""
    host, proxies = httpx2.URL(url).host, getproxies_environment()
    if host in ("localhost", "::1") or host.startswith("127.") or proxy_bypass_environment(host, proxies):
        return None
    return proxies.get(httpx2.URL(url).scheme) or proxies.get("all")


def _chosen_mode(mode: str | None, endpoint: _Endpoint | None, path: Path | None) -> tuple[str, str]:
    """The mode (the argument, else ``LLM_MODE``, else decided here) and, when decided here, why (for the label)."""
    chosen = (mode or env("LLM_MODE") or "").lower() or None
    if chosen is not None and chosen not in MODES:
        raise SettingError("LLM_MODE", chosen, f"unknown mode {chosen!r}: use one of {', '.join(MODES)} (argument "
                           "or env LLM_MODE)")
    if chosen is not None:
        return chosen, ""
    if endpoint is not None and (endpoint.key is not None or endpoint.provider == "custom"):
        source = "LLM_BASE_URL" if endpoint.provider == "custom" else endpoint.key_source
        return "live", f" (LLM_MODE not set: {source} is set)"
    if path is not None and path.exists():
        return "replay", f" (LLM_MODE not set: no key set, {display_path(path)} exists)"
    return "offline", " (LLM_MODE not set: no key set" + (f", no recording {display_path(path)})" if path else ")")


def connect(mode: str | None = None, *, provider: str | None = None, base_url: str | None = None,
            model: str | None = None, api_key: str | None = None, recording: str | None = None,
            max_retries: int | None = None, timeout: float | None = None, system_messages: str | None = None,
            transport: httpx2.BaseTransport | None = None, load_env: bool | str | Path = True,
            quiet: bool = False) -> ModelAccess:
    """A real ``openai.OpenAI`` client for the chosen mode, and the mode line saying what it talks to; ``recording``
    names the notebook's recording, ``transport`` replaces the network (tests), the rest default to ``LLM_*``."""
    if load_env:
        load_env_file(None if load_env is True else load_env)
    path = recording_path(recording) if recording else None
    try:
        endpoint: _Endpoint | None = _endpoint(provider, base_url, model, api_key)
    except SettingError as error:  # a bad live setting matters only if we go live
        endpoint, refused = None, error
    chosen, why = _chosen_mode(mode, endpoint, path)
    if endpoint is None and chosen not in ("offline", "replay"):
        raise refused
    retries, seconds = setting("max_retries", max_retries), setting("timeout", timeout)
    sent_as = setting("system_messages", system_messages)
    if chosen in ("live", "record") and endpoint.key is None and endpoint.provider != "custom":
        raise MissingKey(
            f"{chosen} mode needs an API key for {endpoint.name}, and {endpoint.key_env} is not set. Put "
            f"{endpoint.key_env}=... in a file named .env at the repository root (copy .env.example; .env is "
            "git-ignored) or export it in your shell, then run the cell again. For a local server (Ollama, vLLM, LM "
            "Studio) set LLM_BASE_URL instead (and LLM_MODEL if it serves several models). Or run without a key: "
            "LLM_MODE=replay (recorded answers) or LLM_MODE=offline (the deterministic stand-in).",
            setting=endpoint.key_env)
    if chosen in ("replay", "record") and path is None:
        message = (f"{chosen} mode needs the name of a recording: connect('{chosen}', recording='02_summary_memory_"
                   f"run') {'reads' if chosen == 'replay' else 'writes'} data/recordings/02_summary_memory_run.json")
        raise RecordingMissing(message) if chosen == "replay" else SettingError("recording", None, message)
    secrets = [s for s in (endpoint.key, *url_credentials(endpoint.base_url)) if s] if endpoint else []
    wire = ModelTransport(chosen, max_retries=retries, system_messages=sent_as, secrets=secrets, quiet=quiet)
    name, label, where, url, key = OFFLINE_MODEL, _OFFLINE_LABEL, "in-process stand-in", "http://stand-in.invalid", ""
    wire.traits = Traits.of(OFFLINE_MODEL, "offline")
    if chosen == "replay":
        wire.recording, where = Recording.load(path), display_path(path)
        # the recorded model wins over LLM_MODEL (which may name a local server's model)
        name = model or (wire.recording.models or [PROVIDERS[DEFAULT_PROVIDER].default_model])[0]
        origin = (wire.recording.endpoint or "").rstrip("/")
        recorded = next((known for known, p in PROVIDERS.items() if origin == p.base_url), "custom" if origin else
                        DEFAULT_PROVIDER)  # the endpoint recorded from decides what the requests carried
        wire.traits = Traits.of(name, recorded)
        label = (f"Model: replay | {where} ({len(wire.recording.exchanges)} exchanges"
                 f"{f', recorded from {origin}' if origin else ''}) | {name} | no network")
    elif chosen in ("live", "record"):
        wire.network = transport or httpx2.HTTPTransport(proxy=_proxy_for(endpoint.base_url))
        wire.endpoint = where = public_url(endpoint.base_url)
        name = shown_as = sent = endpoint.model or "?"
        if endpoint.provider == "custom":  # a custom server's model is known once it has listed its models
            name, shown_as, sent = served_model(wire, endpoint, seconds, where)
        wire.model_file, wire.probe = (name, sent) if sent != name else None, endpoint.provider == "custom"
        wire.traits, wire.where = Traits.of(name, endpoint.provider), f"{where} (model {name})"
        label = (f"Model: {chosen} | {endpoint.name} {where} | {shown_as} | "
                 + (f"key from {endpoint.key_source}" if endpoint.key_source else "no key"))
        if sent_as in ADAPTED:
            label += f" | system messages {ADAPTED[sent_as]} (LLM_SYSTEM_MESSAGES={sent_as})"
        if path is not None and (chosen == "record" or path.exists()):
            wire.recording = Recording.load(path, missing_ok=chosen == "record")
            label += (f" | saving exchanges to {display_path(path)}" if chosen == "record" else
                      f" | a failed call is answered from {display_path(path)}")
        url, key = endpoint.base_url, endpoint.key
    label += (wire.traits.said() if chosen != "offline" else "") + why
    client = openai.OpenAI(api_key=key or "no-key-needed", base_url=url, max_retries=retries, timeout=seconds,
                           http_client=openai.DefaultHttpxClient(transport=wire))  # the SDK insists on some key
    access = ModelAccess(client, name, chosen, label, where, endpoint.provider if chosen in ("live", "record") else
                         chosen, wire, endpoint.key_env if endpoint else DEFAULT_KEY_ENV)
    explain_in_notebooks(access)  # a notebook's own SDK calls
    if not quiet:
        print(label, flush=True)
    return access
