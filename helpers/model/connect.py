"""``connect()``: a real ``openai.OpenAI`` client in each mode (live, record, replay, offline) over the transport the
mode chooses, named in one printed line; keys come from the environment or ``.env``, never printed or stored."""
from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any
from urllib.request import getproxies_environment, proxy_bypass_environment

import httpx2
import openai
from dotenv import dotenv_values
from openai.types.chat import ChatCompletion

from helpers.base.paths import REPO_ROOT
from helpers.memory.types import SettingError
from helpers.model.errors import (BadResponse, ContextOverflow, EmptyReply, MissingKey, ModelAccessError,
                                  ModelUnavailable, Reason, RecordingMissing, UnknownModel)
from helpers.model.explain import explain_error, explain_in_notebooks, model_error
from helpers.model.offline.markers import MODEL_NAME as OFFLINE_MODEL
from helpers.model.offline.server import OfflineTransport
from helpers.model.recordings import Recording, RecordingTransport, display_path, recording_path
from helpers.model.responses import ADAPTED, CallTrace, CheckedTransport, DeliveryTransport
from helpers.model.secrets import configured_secrets, public_url, url_credentials
from helpers.model.served import MODELS_TIMEOUT, listed_models, served_model
from helpers.model.settings import (CUSTOM_KEY_ENV, DEFAULT_MAX_RETRIES, DEFAULT_PROVIDER, DEFAULT_TIMEOUT, PROVIDERS,
                                    env, setting)

__all__ = ["MODES", "ModelAccess", "connect", "BadResponse", "ContextOverflow", "EmptyReply", "MissingKey",
           "ModelAccessError", "ModelUnavailable", "RecordingMissing", "UnknownModel"]

MODES = ("live", "record", "replay", "offline")
ENV_FILE = REPO_ROOT / ".env"
_NO_KEY_NEEDED = "no-key-needed"  # the SDK insists on a key; local servers ignore it
DEFAULT_KEY_ENV = PROVIDERS[DEFAULT_PROVIDER].key_env  # the key a replay or offline client would name
_OFFLINE_LABEL = ("Model: offline | a deterministic stand-in, not a language model: its summaries copy sentences, its "
                  "replies (marked [offline stand-in]) take facts only from the request, and to the course's own "
                  f"conversations add replies written for this project | {OFFLINE_MODEL} | no network")


@dataclass(frozen=True)
class _Endpoint:
    provider: str  # "groq", "openai" or "custom"
    name: str
    base_url: str
    model: str | None
    api_key: str | None = field(repr=False)
    key_source: str  # where the key came from, for the label (never the key itself)
    key_env: str  # the variable a user should set

    @property
    def public_url(self) -> str:
        return public_url(self.base_url)

    @property
    def key(self) -> str | None:
        return self.api_key if self.api_key != _NO_KEY_NEEDED else None

    def secrets(self) -> list[str]:
        return configured_secrets(self.key, *url_credentials(self.base_url))


def _resolve_endpoint(provider: str | None, base_url: str | None, model: str | None,
                      api_key: str | None) -> _Endpoint:
    provider = (provider or env("LLM_PROVIDER") or "").lower() or None
    base_url, model = base_url or env("LLM_BASE_URL"), model or env("LLM_MODEL")
    if provider not in (None, *PROVIDERS, "custom"):
        raise SettingError("LLM_PROVIDER", provider, f"unknown provider {provider!r}: use "
                           f"{', '.join(map(repr, PROVIDERS))}, or 'custom' with a base URL")
    if provider == "custom" or (provider is None and base_url):
        if not base_url:
            raise SettingError("LLM_BASE_URL", base_url, "a custom provider needs its base URL: set LLM_BASE_URL "
                               "(e.g. http://localhost:11434/v1 for Ollama) or pass base_url=")
        key = api_key or env(CUSTOM_KEY_ENV)
        source = "argument" if api_key else (CUSTOM_KEY_ENV if key else "no key needed")
        return _Endpoint("custom", "OpenAI-compatible server", base_url.rstrip("/"), model,
                         key or _NO_KEY_NEEDED, source, CUSTOM_KEY_ENV)
    if provider is None:  # the lessons' provider, unless its key is unset and exactly one other provider's key is set
        others = [name for name, known in PROVIDERS.items() if name != DEFAULT_PROVIDER and env(known.key_env)]
        keep = api_key or env(PROVIDERS[DEFAULT_PROVIDER].key_env) or len(others) != 1
        provider = DEFAULT_PROVIDER if keep else others[0]
    known = PROVIDERS[provider]
    return _Endpoint(provider, known.name, (base_url or known.base_url).rstrip("/"), model or known.default_model,
                     api_key or env(known.key_env), "argument" if api_key else known.key_env, known.key_env)


def _model_traits(model: str, provider: str) -> dict[str, Any]:
    """What the endpoint accepts, decided by endpoint first: only OpenAI's API has ``max_completion_tokens`` and
    refuses a temperature for its reasoning models; ``LLM_REASONING_EFFORT`` on/off overrides the guess."""
    short = model.rsplit("/", 1)[-1].lower()
    openai_reasoning = provider == "openai" and bool(re.match(r"(o\d|gpt-5)", short))
    reasoning = ("gpt-oss" in short and provider != "custom") or openai_reasoning
    override = (env("LLM_REASONING_EFFORT") or "").lower()
    if override in ("off", "no", "false", "0", "on", "yes", "true", "1"):
        reasoning = override in ("on", "yes", "true", "1")
    return dict(accepts_reasoning_effort=reasoning, accepts_temperature=not openai_reasoning,
                token_limit_parameter="max_completion_tokens" if openai_reasoning else "max_tokens")


def _proxy_for(url: str) -> str | None:
    """The proxy the environment sets for this URL (our own transports do not read it themselves)."""
    parsed, proxies = httpx2.URL(url), getproxies_environment()
    if parsed.host in ("localhost", "::1") or parsed.host.startswith("127."):
        return None
    return None if proxy_bypass_environment(parsed.host, proxies) else proxies.get(parsed.scheme) or proxies.get("all")


def _notify(notices: list[str], quiet: bool, line: str) -> None:
    notices.append(line)
    if not quiet:
        print(line, flush=True)


@dataclass
class ModelAccess:
    """A ready client and what it talks to; ``complete()`` adds the project's retry and explanations."""

    client: openai.OpenAI
    model: str
    mode: str
    label: str
    endpoint: str
    provider: str
    recording_path: Path | None = None
    accepts_reasoning_effort: bool = False
    token_limit_parameter: str = "max_tokens"
    accepts_temperature: bool = True
    max_retries: int = DEFAULT_MAX_RETRIES
    key_env: str = DEFAULT_KEY_ENV
    notices: list[str] = field(default_factory=list)
    quiet: bool = False
    timeout: float = DEFAULT_TIMEOUT
    trace: CallTrace = field(default_factory=CallTrace)  # what the transports saw during the last call
    secrets: list[str] = field(default_factory=list, repr=False)  # scrubbed from every message
    warned: set[str] = field(default_factory=set)  # plain-words warnings already given once

    def warn_once(self, topic: str, line: str) -> None:
        """Print (unless quiet) and keep in ``notices`` a warning the first time ``topic`` comes up for this client."""
        if topic not in self.warned:
            self.warned.add(topic)
            _notify(self.notices, self.quiet, line)

    def request_options(self, messages: list[dict[str, Any]], *, max_tokens: int, temperature: float | None = 0,
                        reasoning_effort: str | None = None) -> dict[str, Any]:
        """The keyword arguments of ``client.chat.completions.create`` for this endpoint."""
        options: dict[str, Any] = {"model": self.model, "messages": messages, self.token_limit_parameter: max_tokens}
        if temperature is not None and self.accepts_temperature:
            options["temperature"] = temperature
        if reasoning_effort and self.accepts_reasoning_effort:
            options["reasoning_effort"] = reasoning_effort
        return options

    def complete(self, messages: list[dict[str, Any]], *, max_tokens: int = 1024, temperature: float | None = 0,
                 reasoning_effort: str | None = None, purpose: str = "reply") -> ChatCompletion:
        """One chat completion with a non-empty reply, or the project's error saying what to do; an empty reply
        cut at the token limit (gpt-oss reasons inside ``max_tokens``) is retried once with twice the limit."""
        for limit in (max_tokens, max_tokens * 2):
            self.trace.reset()
            try:  # the project's own errors, raised in a transport, pass the SDK as they are
                response = self.client.chat.completions.create(**self.request_options(
                    messages, max_tokens=limit, temperature=temperature, reasoning_effort=reasoning_effort))
            except openai.APIError as error:
                raise model_error(error, self) from error
            choice = response.choices[0] if response.choices else None
            if choice and (choice.message.content or "").strip():
                return response
            finish = choice.finish_reason if choice else None
            if finish != "length":
                raise EmptyReply(f"The model returned an empty {purpose} (finish_reason={finish!r}). "
                                 "Run the cell again, or switch to LLM_MODE=replay / LLM_MODE=offline.")
            if limit == max_tokens:
                _notify(self.notices, self.quiet, f"empty {purpose} (finish_reason='length': the model spent "
                        f"{self.token_limit_parameter}={max_tokens} before writing); retrying once with "
                        f"{max_tokens * 2}")
        raise EmptyReply(
            f"The model returned an empty {purpose} twice (finish_reason='length' at {self.token_limit_parameter}="
            f"{max_tokens} and {max_tokens * 2}): a reasoning model such as gpt-oss spent the whole limit on hidden "
            "reasoning. Raise max_tokens, lower reasoning_effort, or switch to LLM_MODE=replay / LLM_MODE=offline.",
            reason=Reason.EMPTY_REPLY_CUT, attempts=2, setting=self.token_limit_parameter, retry_can_help=False)

    def close(self) -> None:
        self.client.close()


def load_env_file(path: str | Path | None = None) -> None:
    """Load ``.env`` (the repository's by default) into the environment, never overriding a value that is set (one
    exported empty counts as unset)."""
    file = Path(path) if path else ENV_FILE
    if file.is_file():
        os.environ.update({name: value for name, value in dotenv_values(file).items()
                           if value is not None and not os.environ.get(name, "").strip()})


# Each mode's wiring: (the transport under the SDK, the base URL and key the SDK is given, ModelAccess's fields)
_Wiring = tuple[httpx2.BaseTransport, str, str, dict[str, Any]]


def _replay(path: Path, model: str | None, sdk: dict[str, Any], trace: CallTrace) -> _Wiring:
    saved, where = Recording.load(path), display_path(path)
    # the recorded model wins over LLM_MODEL (which may name a local server's model)
    model = model or (saved.models[0] if saved.models else None) or PROVIDERS[DEFAULT_PROVIDER].default_model
    checked = CheckedTransport(RecordingTransport(saved, "replay"), timeout=sdk["timeout"], where=where, trace=trace)
    origin = f", recorded from {saved.endpoint}" if saved.endpoint else ""
    provider = next((name for name, known in PROVIDERS.items() if (saved.endpoint or "").rstrip("/") == known.base_url),
                    "custom" if saved.endpoint else DEFAULT_PROVIDER)  # what was recorded
    return checked, "http://replay.invalid/v1", "replay", dict(
        model=model, endpoint=where, provider="replay", traits_of=provider,
        label=f"Model: replay | {where} ({len(saved.exchanges)} exchanges{origin}) | {model} | no network")


def _live(mode: str, endpoint: _Endpoint, path: Path | None, network: httpx2.BaseTransport,
          notify: Callable[[str], None], sdk: dict[str, Any], trace: CallTrace, sent_as: str) -> _Wiring:
    """Live or record: the real endpoint, wrapped to record, or to fall back on the recording."""
    model = shown = wire = endpoint.model or "?"
    if endpoint.provider == "custom":  # a custom server's model is known once it has listed its models
        lister = CheckedTransport(network, timeout=min(sdk["timeout"], MODELS_TIMEOUT), secrets=endpoint.secrets,
                                  where=f"{endpoint.public_url} (its list of models)")
        listed = listed_models(endpoint.base_url, lister, endpoint.key, key_env=endpoint.key_env,
                               where=endpoint.public_url)
        model, shown, wire = served_model(endpoint.model, listed, endpoint.public_url)
    checked = partial(CheckedTransport, network, where=f"{endpoint.public_url} (model {model})", timeout=sdk["timeout"],
                      secrets=endpoint.secrets, model_file=(model, wire) if wire != model else None)
    key_text = f"key from {endpoint.key_source}" if endpoint.key_source != "no key needed" else "no key"
    label = f"Model: {mode} | {endpoint.name} {endpoint.public_url} | {shown} | {key_text}"
    if sent_as in ADAPTED:
        label += f" | system messages {ADAPTED[sent_as]} (LLM_SYSTEM_MESSAGES={sent_as})"
    wrapped: httpx2.BaseTransport = DeliveryTransport(
        checked(trace=trace, notify=notify, max_retries=sdk["max_retries"]), probe=checked(), mode=sent_as,
        check=endpoint.provider == "custom", notify=notify, trace=trace)
    if mode == "record":
        wrapped = RecordingTransport(Recording.load(path, missing_ok=True), "record", wrapped,
                                     endpoint=endpoint.public_url, secrets=endpoint.secrets)
        label += f" | saving exchanges to {display_path(path)}"
    elif path is not None and path.exists():
        wrapped = RecordingTransport(Recording.load(path), "fallback", wrapped, max_retries=sdk["max_retries"],
                                     notify=notify)
        label += f" | a failed call is answered from {display_path(path)}"
    return wrapped, endpoint.base_url, endpoint.api_key, dict(
        model=model, label=label, endpoint=endpoint.public_url, provider=endpoint.provider)


def _chosen_mode(mode: str | None, endpoint: _Endpoint | None, path: Path | None) -> tuple[str, str]:
    """The mode (the argument, else ``LLM_MODE``, else decided here) and, when decided here, why (for the label)."""
    chosen = (mode or env("LLM_MODE") or "").lower() or None
    if chosen is not None and chosen not in MODES:
        raise SettingError("LLM_MODE", chosen, f"unknown mode {chosen!r}: use one of {', '.join(MODES)} (argument "
                           "or env LLM_MODE)")
    if chosen is not None:
        return chosen, ""
    if endpoint is not None and endpoint.api_key is not None:
        source = "LLM_BASE_URL" if endpoint.provider == "custom" else endpoint.key_source
        return "live", f" (LLM_MODE not set: {source} is set)"
    if path is not None and path.exists():
        return "replay", f" (LLM_MODE not set: no key set, {display_path(path)} exists)"
    return "offline", " (LLM_MODE not set: no key set" + (f", no recording {display_path(path)})" if path else ")")


def connect(mode: str | None = None, *, provider: str | None = None, base_url: str | None = None,
            model: str | None = None, api_key: str | None = None, recording: str | None = None,
            recordings_dir: str | Path | None = None, max_retries: int | None = None,
            timeout: float | None = None, system_messages: str | None = None,
            transport: httpx2.BaseTransport | None = None, load_env: bool | str | Path = True,
            quiet: bool = False) -> ModelAccess:
    """A real ``openai.OpenAI`` client for the chosen mode, and one printed line saying what it talks to; ``recording``
    names the notebook's recording, ``transport`` replaces the network (tests), the rest default to ``LLM_*``."""
    if load_env:
        load_env_file(None if load_env is True else load_env)
    path = recording_path(recording, recordings_dir) if recording else None
    try:
        endpoint: _Endpoint | None = _resolve_endpoint(provider, base_url, model, api_key)
    except SettingError as error:  # a bad live setting matters only if we go live
        endpoint, endpoint_error = None, error
    chosen, why = _chosen_mode(mode, endpoint, path)
    if endpoint is None and chosen not in ("offline", "replay"):
        raise endpoint_error
    sdk: dict[str, Any] = {"max_retries": setting("max_retries", max_retries), "timeout": setting("timeout", timeout)}
    sent_as, trace, notices = setting("system_messages", system_messages), CallTrace(), []
    if chosen in ("live", "record") and endpoint.api_key is None:
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
    if chosen == "offline":
        wiring = OfflineTransport(), "http://offline-stand-in.invalid/v1", "offline-stand-in", dict(
            model=OFFLINE_MODEL, label=_OFFLINE_LABEL, endpoint="in-process stand-in", provider="offline")
    elif chosen == "replay":
        wiring = _replay(path, model, sdk, trace)
    else:
        network = transport or httpx2.HTTPTransport(proxy=_proxy_for(endpoint.base_url))
        wiring = _live(chosen, endpoint, path, network, partial(_notify, notices, quiet), sdk, trace, sent_as)
    wire, url, key, built = wiring
    client = openai.OpenAI(api_key=key, base_url=url, http_client=openai.DefaultHttpxClient(transport=wire), **sdk)
    traits = _model_traits(built["model"], built.pop("traits_of", built["provider"]))
    access = ModelAccess(client, **built, **traits, **sdk, mode=chosen, recording_path=path, notices=notices,
                         quiet=quiet, trace=trace, key_env=endpoint.key_env if endpoint else DEFAULT_KEY_ENV,
                         secrets=endpoint.secrets() if endpoint else [])
    access.label += why
    explain_in_notebooks(str(client.base_url), partial(explain_error, access=access))  # a notebook's own SDK calls
    if not quiet:
        print(access.label, flush=True)
    return access
