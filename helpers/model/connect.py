"""One way to get a model client for every situation: live, record, replay or offline.

``connect()`` returns a ``ModelAccess`` whose ``.client`` is a real ``openai.OpenAI``, so notebook
code reads like the lessons: ``access.client.chat.completions.create(model=access.model, ...)``.
The mode decides what sits under the SDK (an ``httpx2`` transport):

* ``live``    Groq by default (``GROQ_API_KEY``), OpenAI (``OPENAI_API_KEY``), or any
  OpenAI-compatible server (``LLM_BASE_URL`` + ``LLM_MODEL``, e.g. Ollama, vLLM, LM Studio).
  If the notebook's recording exists, a call that fails for good is answered from it.
* ``record``  live, and every exchange saved to ``data/recordings/NAME.json`` (no key, no headers).
* ``replay``  answers from that recording by exact request match; no network.
* ``offline`` the deterministic stand-in of ``helpers.model.offline``; no network, not a language model.

Against a server at ``LLM_BASE_URL`` (live and record), a probe finds out which system messages its chat
format drops, and every affected request says so (``helpers.model.delivery``); ``LLM_SYSTEM_MESSAGES``
sends them in a form such a server keeps. Where the server lists its models, ``LLM_MODEL`` must be one.

The mode comes from the argument or ``LLM_MODE``; with neither: live if a key (or server URL) is
set, else replay if the recording exists, else offline. Keys come from the environment or the
repository's ``.env`` file (see ``.env.example``), never from a prompt, and are never printed or stored.
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import openai
from dotenv import dotenv_values
from openai.types.chat import ChatCompletion

from helpers.base.paths import REPO_ROOT
from helpers.memory.types import SettingError
from helpers.model.delivery import ADAPTED, DeliveryTransport
from helpers.model.errors import (
    BadResponse,
    ContextOverflow,
    EmptyReply,
    MissingKey,
    ModelAccessError,
    ModelUnavailable,
    Reason,
    RecordingMissing,
    UnknownModel,
)
from helpers.model.explain import explain_error, model_error
from helpers.model.notebook_errors import explain_in_notebooks
from helpers.model.offline.markers import MODEL_NAME as OFFLINE_MODEL
from helpers.model.offline.server import OfflineTransport
from helpers.model.recordings import (
    FallbackTransport,
    Recording,
    RecordTransport,
    ReplayTransport,
    display_path,
    recording_path,
)
from helpers.model.responses import CallTrace, CheckedTransport
from helpers.model.secrets import configured_secrets, public_url, url_credentials
from helpers.model.served import MODELS_TIMEOUT, ModelFileTransport, ServedModel, listed_models, served_model
from helpers.model.settings import (
    CUSTOM_KEY_ENV,
    DEFAULT_MAX_RETRIES,
    DEFAULT_PROVIDER,
    DEFAULT_TIMEOUT,
    PROVIDERS,
    default_provider,
    env,
    max_retries as max_retries_setting,
    system_message_mode,
    timeout_seconds,
)

__all__ = ["MODES", "ModelAccess", "connect", "BadResponse", "ContextOverflow", "EmptyReply", "MissingKey",
           "ModelAccessError", "ModelUnavailable", "RecordingMissing", "UnknownModel"]

MODES = ("live", "record", "replay", "offline")
ENV_FILE = REPO_ROOT / ".env"
_REPLAY_URL = "http://replay.invalid/v1"  # never contacted: the replay transport answers
_OFFLINE_URL = "http://offline-stand-in.invalid/v1"  # never contacted: the stand-in answers in process
_NO_KEY_NEEDED = "no-key-needed"  # the SDK insists on a key; local servers ignore it
DEFAULT_KEY_ENV = PROVIDERS[DEFAULT_PROVIDER].key_env  # the key a replay or offline client would name


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
    def configured(self) -> bool:
        return self.api_key is not None

    @property
    def public_url(self) -> str:
        """The base URL without credentials written into it: what is printed and stored."""
        return public_url(self.base_url)

    def secrets(self) -> list[str]:
        return configured_secrets(self.api_key if self.api_key != _NO_KEY_NEEDED else None,
                                  *url_credentials(self.base_url))


def _resolve_endpoint(provider: str | None, base_url: str | None, model: str | None,
                      api_key: str | None) -> _Endpoint:
    provider = (provider or env("LLM_PROVIDER") or "").lower() or None
    base_url = base_url or env("LLM_BASE_URL")
    model = model or env("LLM_MODEL")
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
    provider = provider or default_provider(key_passed=bool(api_key))
    known = PROVIDERS[provider]
    key = api_key or env(known.key_env)
    source = "argument" if api_key else known.key_env
    return _Endpoint(provider, known.name, (base_url or known.base_url).rstrip("/"), model or known.default_model,
                     key, source, known.key_env)


def _model_traits(model: str, provider: str) -> tuple[bool, str, bool]:
    """(accepts reasoning_effort, name of the token-limit parameter, accepts temperature) for a model.

    Decided by endpoint first: only OpenAI's own API has ``max_completion_tokens`` and refuses a
    temperature for its reasoning models; a local server (``custom``) gets ``max_tokens`` and a
    temperature whatever the model is called (llama.cpp's server has no ``max_completion_tokens``).
    """
    short = model.rsplit("/", 1)[-1].lower()
    openai_reasoning = provider == "openai" and bool(re.match(r"(o\d|gpt-5)", short))
    reasoning = ("gpt-oss" in short and provider != "custom") or openai_reasoning
    override = (env("LLM_REASONING_EFFORT") or "").lower()
    if override in ("off", "no", "false", "0"):
        reasoning = False
    elif override in ("on", "yes", "true", "1"):
        reasoning = True
    return reasoning, ("max_completion_tokens" if openai_reasoning else "max_tokens"), not openai_reasoning


def _proxy_for(url: str) -> str | None:
    """The proxy the environment sets for this URL (our own transports do not read it themselves)."""
    parsed = httpx2.URL(url)
    if parsed.host in ("localhost", "127.0.0.1", "::1") or parsed.host.startswith("127."):
        return None
    no_proxy = [h.strip().lstrip(".") for h in (env("NO_PROXY") or env("no_proxy") or "").split(",") if h.strip()]
    if "*" in no_proxy or any(parsed.host == h or parsed.host.endswith("." + h) for h in no_proxy):
        return None
    scheme = parsed.scheme.upper()
    return env(f"{scheme}_PROXY") or env(f"{scheme.lower()}_proxy") or env("ALL_PROXY") or env("all_proxy")


def _text(response: ChatCompletion) -> str:
    choice = response.choices[0] if response.choices else None
    return (choice.message.content or "") if choice else ""


def _finish(response: ChatCompletion) -> str | None:
    return response.choices[0].finish_reason if response.choices else None


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
    system_messages: str = "as-written"  # how system messages are sent to a live server (LLM_SYSTEM_MESSAGES)

    def warn_once(self, topic: str, line: str) -> None:
        """``notify`` a warning the first time ``topic`` comes up for this client."""
        if topic not in self.warned:
            self.warned.add(topic)
            self.notify(line)

    def notify(self, line: str) -> None:
        """Print a one-line notice (unless quiet) and keep it in ``notices``."""
        self.notices.append(line)
        if not self.quiet:
            print(line, flush=True)

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
        """One chat completion through the SDK, with a non-empty reply or a clear exception.

        SDK errors become ``ModelUnavailable`` (``ContextOverflow`` for a request too long for the server)
        saying what to do, with the facts as fields. An empty reply cut off by the token limit (gpt-oss
        spends ``max_tokens`` on hidden reasoning) is retried once with twice the limit; still empty ->
        ``EmptyReply``. Afterwards ``trace.not_received`` lists the messages the server dropped.
        """
        options = dict(temperature=temperature, reasoning_effort=reasoning_effort)
        response = self._create(messages, max_tokens, **options)
        if not _text(response).strip() and _finish(response) == "length":
            self.notify(f"empty {purpose} (finish_reason='length': the model spent {self.token_limit_parameter}="
                        f"{max_tokens} before writing); retrying once with {max_tokens * 2}")
            response = self._create(messages, max_tokens * 2, **options)
            if not _text(response).strip() and _finish(response) == "length":
                raise EmptyReply(
                    f"The model returned an empty {purpose} twice (finish_reason='length' at "
                    f"{self.token_limit_parameter}={max_tokens} and {max_tokens * 2}): a reasoning model such as "
                    "gpt-oss spent the whole limit on hidden reasoning. Raise max_tokens, lower "
                    "reasoning_effort, or switch to LLM_MODE=replay / LLM_MODE=offline.",
                    reason=Reason.EMPTY_REPLY_CUT, attempts=2, setting=self.token_limit_parameter, retry_can_help=False)
        if not _text(response).strip():
            raise EmptyReply(f"The model returned an empty {purpose} (finish_reason={_finish(response)!r}). "
                             "Run the cell again, or switch to LLM_MODE=replay / LLM_MODE=offline.")
        return response

    def _create(self, messages: list[dict[str, Any]], limit: int, *, temperature: float | None,
                reasoning_effort: str | None) -> ChatCompletion:
        self.trace.reset()
        try:
            return self.client.chat.completions.create(**self.request_options(
                messages, max_tokens=limit, temperature=temperature, reasoning_effort=reasoning_effort))
        except ModelAccessError:
            raise
        except openai.APIError as error:
            raise model_error(error, self) from error

    def explain(self, error: BaseException) -> str:
        """What a failed call means and what to do about it, in one paragraph (never the key)."""
        return explain_error(error, self)

    def close(self) -> None:
        self.client.close()


def load_env_file(path: str | Path | None = None) -> bool:
    """Load keys from ``.env`` (the repository's by default) into the environment, never overriding what is set.

    A variable exported empty (``export GROQ_API_KEY=``) counts as unset, so the file's value is used.
    Returns True if the file set anything.
    """
    file = Path(path) if path else ENV_FILE
    if not file.is_file():
        return False
    changed = False
    for name, value in dotenv_values(file).items():
        if value is not None and not os.environ.get(name, "").strip():
            os.environ[name] = value
            changed = True
    return changed


def _missing_key(endpoint: _Endpoint, mode: str) -> MissingKey:
    return MissingKey(
        f"{mode} mode needs an API key for {endpoint.name}, and {endpoint.key_env} is not set. Put "
        f"{endpoint.key_env}=... in a file named .env at the repository root (copy .env.example; .env is "
        "git-ignored) or export it in your shell, then run the cell again. For a local server (Ollama, vLLM, "
        "LM Studio) set LLM_BASE_URL instead (and LLM_MODEL if it serves several models). Or run without a key: "
        "LLM_MODE=replay (recorded answers) or LLM_MODE=offline (the deterministic stand-in).",
        setting=endpoint.key_env)


_Built = tuple[openai.OpenAI, str, str, str, str]  # client, model, label, endpoint, provider


def _offline(sdk: dict[str, Any]) -> _Built:
    client = openai.OpenAI(api_key="offline-stand-in", base_url=_OFFLINE_URL,
                           http_client=httpx2.Client(transport=OfflineTransport()), **sdk)
    label = (f"Model: offline | a deterministic stand-in, not a language model: its summaries copy sentences, its "
             f"replies (marked [offline stand-in]) take facts only from the request, and to the course's own "
             f"conversations add replies written for this project | {OFFLINE_MODEL} | no network")
    return client, OFFLINE_MODEL, label, "in-process stand-in", "offline"


def _recorded_provider(path: Path | None) -> str:
    """The provider a recording was made against, so a replay sends the parameters the recording holds."""
    endpoint = Recording.load(path).endpoint if path is not None and path.exists() else None
    if not endpoint:
        return DEFAULT_PROVIDER
    known = [name for name, provider in PROVIDERS.items() if endpoint.rstrip("/") == provider.base_url]
    return known[0] if known else "custom"


def _replay(path: Path | None, model: str | None, sdk: dict[str, Any], trace: CallTrace) -> _Built:
    if path is None:
        raise RecordingMissing("replay mode needs the name of a recording: connect('replay', "
                               "recording='02_summary_memory_run') reads data/recordings/02_summary_memory_run.json")
    saved = Recording.load(path)
    # the recorded model wins over LLM_MODEL (which may name a local server's model)
    model_name = model or (saved.models[0] if saved.models else None) or PROVIDERS[DEFAULT_PROVIDER].default_model
    checked = CheckedTransport(ReplayTransport(saved), timeout=sdk["timeout"], where=display_path(path), trace=trace)
    client = openai.OpenAI(api_key="replay", base_url=_REPLAY_URL, http_client=httpx2.Client(transport=checked),
                           **sdk)
    origin = f", recorded from {saved.endpoint}" if saved.endpoint else ""
    label = (f"Model: replay | {display_path(path)} ({len(saved.exchanges)} exchanges{origin}) | {model_name} "
             "| no network")
    return client, model_name, label, display_path(path), "replay"


def _served(endpoint: _Endpoint, network: httpx2.BaseTransport, timeout: float) -> ServedModel:
    """The model a custom server serves, checked against the list it gives (a key it refuses there is said so)."""
    where = endpoint.public_url
    lister = CheckedTransport(network, timeout=min(timeout, MODELS_TIMEOUT), where=f"{where} (its list of models)",
                              secrets=endpoint.secrets)
    key = endpoint.api_key if endpoint.api_key != _NO_KEY_NEEDED else None
    listed = listed_models(endpoint.base_url, lister, key, key_env=endpoint.key_env, where=where)
    return served_model(endpoint.model, listed, where)


def _live(mode: str, endpoint: _Endpoint, path: Path | None, transport: httpx2.BaseTransport | None,
          notify: Callable[[str], None], sdk: dict[str, Any], trace: CallTrace, system_messages: str) -> _Built:
    """Live or record: the real endpoint, wrapped to record, or to fall back on the recording."""
    if not endpoint.configured:
        raise _missing_key(endpoint, mode)
    if mode == "record" and path is None:
        raise SettingError("recording", None, "record mode needs the name of a recording: connect('record', "
                           "recording='02_summary_memory_run') writes data/recordings/02_summary_memory_run.json")
    network = transport or httpx2.HTTPTransport(proxy=_proxy_for(endpoint.base_url))
    custom = endpoint.provider == "custom"
    model = shown = endpoint.model or "?"
    if custom:  # a custom server's model is known once it has listed its models
        served = _served(endpoint, network, sdk["timeout"])
        model, shown = served.name, served.label
        if served.wire != served.name:  # a model file's path: sent, but never held above this transport
            network = ModelFileTransport(network, served.name, served.wire)

    def checked(**options: Any) -> CheckedTransport:
        return CheckedTransport(network, where=f"{endpoint.public_url} (model {model})", secrets=endpoint.secrets,
                                **options)

    key_text = f"key from {endpoint.key_source}" if endpoint.key_source != "no key needed" else "no key"
    label = f"Model: {mode} | {endpoint.name} {endpoint.public_url} | {shown} | {key_text}"
    if system_messages in ADAPTED:
        label += f" | system messages {ADAPTED[system_messages]} (LLM_SYSTEM_MESSAGES={system_messages})"
    wrapped: httpx2.BaseTransport = DeliveryTransport(
        checked(timeout=sdk["timeout"], trace=trace, notify=notify, max_retries=sdk["max_retries"]),
        probe=checked(timeout=sdk["timeout"]), mode=system_messages, check=custom, notify=notify, trace=trace)
    if mode == "record":
        wrapped = RecordTransport(wrapped, Recording.load(path, missing_ok=True), endpoint=endpoint.public_url,
                                  secrets=endpoint.secrets)
        label += f" | saving exchanges to {display_path(path)}"
    elif path is not None and path.exists():
        wrapped = FallbackTransport(wrapped, Recording.load(path), max_retries=sdk["max_retries"], notify=notify)
        label += f" | a failed call is answered from {display_path(path)}"
    http_client = openai.DefaultHttpxClient(transport=wrapped)
    client = openai.OpenAI(api_key=endpoint.api_key, base_url=endpoint.base_url, http_client=http_client, **sdk)
    return client, model, label, endpoint.public_url, endpoint.provider


def _chosen_mode(mode: str | None, endpoint: _Endpoint | None, path: Path | None) -> tuple[str, str]:
    """The mode (the argument, else ``LLM_MODE``, else decided here) and, when decided here, why (for the label)."""
    chosen = (mode or env("LLM_MODE") or "").lower() or None
    if chosen is not None and chosen not in MODES:
        raise SettingError("LLM_MODE", chosen, f"unknown mode {chosen!r}: use one of {', '.join(MODES)} (argument "
                           "or env LLM_MODE)")
    if chosen is not None:
        return chosen, ""
    assert endpoint is not None  # no endpoint setting failed (else only offline or replay was possible)
    if endpoint.configured:
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
    """A real ``openai.OpenAI`` client for the chosen mode, and one printed line saying what it talks to.

    ``recording`` names this notebook's recording (``data/recordings/NAME.json``; ``recordings_dir``
    or env ``LLM_RECORDINGS_DIR`` moves the folder). ``transport`` replaces the network transport of
    live and record modes (tests use it). ``max_retries`` (env ``LLM_MAX_RETRIES``, default 2) and
    ``timeout`` (env ``LLM_TIMEOUT``, default ``DEFAULT_TIMEOUT`` seconds) go to the SDK;
    ``system_messages`` (env ``LLM_SYSTEM_MESSAGES``) says how a live server gets system messages.
    ``load_env``: True reads the repository's ``.env``, a path reads that file, False reads none.
    """
    if load_env:
        load_env_file(None if load_env is True else load_env)
    path = recording_path(recording, recordings_dir) if recording else None
    try:
        endpoint: _Endpoint | None = _resolve_endpoint(provider, base_url, model, api_key)
        endpoint_error: SettingError | None = None
    except SettingError as error:  # a bad live setting matters only if we go live
        endpoint, endpoint_error = None, error
    chosen, why = _chosen_mode(mode, endpoint, path)
    if endpoint is None and chosen not in ("offline", "replay"):
        raise endpoint_error  # type: ignore[misc]
    notices: list[str] = []  # shared with the ModelAccess: transports report fallbacks and retries here

    def notify(line: str) -> None:
        notices.append(line)
        if not quiet:
            print(line, flush=True)

    sdk: dict[str, Any] = {"max_retries": max_retries_setting(max_retries), "timeout": timeout_seconds(timeout)}
    sent_as = system_message_mode(system_messages)
    trace = CallTrace()
    if chosen == "offline":
        client, model_name, label, where, provider_name = _offline(sdk)
    elif chosen == "replay":
        client, model_name, label, where, provider_name = _replay(path, model, sdk, trace)
    else:
        assert endpoint is not None
        client, model_name, label, where, provider_name = _live(chosen, endpoint, path, transport, notify, sdk,
                                                                trace, sent_as)
    traits = _model_traits(model_name, _recorded_provider(path) if chosen == "replay" else provider_name)
    access = ModelAccess(client=client, model=model_name, mode=chosen, label=label + why, endpoint=where,
                         provider=provider_name, recording_path=path, accepts_reasoning_effort=traits[0],
                         token_limit_parameter=traits[1], accepts_temperature=traits[2],
                         max_retries=sdk["max_retries"], key_env=endpoint.key_env if endpoint else DEFAULT_KEY_ENV,
                         notices=notices, quiet=quiet, timeout=sdk["timeout"], trace=trace,
                         secrets=endpoint.secrets() if endpoint else [],
                         system_messages=sent_as if chosen in ("live", "record") else "as-written")
    explain_in_notebooks(str(client.base_url), access.explain)  # a notebook's own SDK calls explain their errors
    if not quiet:
        print(access.label, flush=True)
    return access
