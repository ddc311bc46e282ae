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

The mode comes from the argument or ``LLM_MODE``; with neither: live if a key (or server URL) is
set, else replay if the recording exists, else offline. Keys come from the environment or the
repository's ``.env`` file (see ``.env.example``), never from a prompt, and are never printed or stored.
"""
from __future__ import annotations

import math
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
from helpers.model.errors import (
    BadResponse,
    EmptyReply,
    MissingKey,
    ModelAccessError,
    ModelUnavailable,
    RecordingMissing,
)
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
from helpers.model.notebook_errors import explain_in_notebooks
from helpers.model.responses import CallTrace, CheckedTransport
from helpers.model.secrets import (
    configured_secrets,
    public_url,
    scrub_text,
    url_credentials,
)

__all__ = ["MODES", "PROVIDERS", "ModelAccess", "connect", "explain_error", "BadResponse", "EmptyReply", "MissingKey",
           "ModelAccessError", "ModelUnavailable", "RecordingMissing"]

MODES = ("live", "record", "replay", "offline")
DEFAULT_MAX_RETRIES = 2  # the SDK's own default
# Seconds to wait for one answer. The SDK's own default is 600, which in a live demo on a flaky
# network looks like a frozen notebook; the lessons' calls take a few seconds. LLM_TIMEOUT overrides.
DEFAULT_TIMEOUT = 60.0
ENV_FILE = REPO_ROOT / ".env"


@dataclass(frozen=True)
class Provider:
    """A hosted OpenAI-compatible endpoint we know by name."""

    name: str
    base_url: str
    key_env: str
    default_model: str


PROVIDERS: dict[str, Provider] = {
    "groq": Provider("Groq", "https://api.groq.com/openai/v1", "GROQ_API_KEY", "openai/gpt-oss-120b"),
    "openai": Provider("OpenAI", "https://api.openai.com/v1", "OPENAI_API_KEY", "gpt-4o-mini"),
}
_REPLAY_URL = "http://replay.invalid/v1"  # never contacted: the replay transport answers
_OFFLINE_URL = "http://offline-stand-in.invalid/v1"  # never contacted: the stand-in answers in process
_NO_KEY_NEEDED = "no-key-needed"  # the SDK insists on a key; local servers ignore it


def _env(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


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
    provider = (provider or _env("LLM_PROVIDER") or "").lower() or None
    base_url = base_url or _env("LLM_BASE_URL")
    model = model or _env("LLM_MODEL")
    if provider not in (None, "groq", "openai", "custom"):
        raise ValueError(f"unknown provider {provider!r}: use 'groq', 'openai', or 'custom' with a base URL")
    if provider == "custom" or (provider is None and base_url):
        if not base_url:
            raise ValueError("a custom provider needs its base URL: set LLM_BASE_URL (e.g. "
                             "http://localhost:11434/v1 for Ollama) or pass base_url=")
        key = api_key or _env("LLM_API_KEY")
        source = "argument" if api_key else ("LLM_API_KEY" if key else "no key needed")
        return _Endpoint("custom", "OpenAI-compatible server", base_url.rstrip("/"), model,
                         key or _NO_KEY_NEEDED, source, "LLM_API_KEY")
    if provider is None:
        # Groq, the lessons' provider, unless only an OpenAI key is set (a key passed in means Groq)
        provider = "openai" if (not api_key and _env("OPENAI_API_KEY") and not _env("GROQ_API_KEY")) else "groq"
    known = PROVIDERS[provider]
    key = api_key or _env(known.key_env)
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
    override = (_env("LLM_REASONING_EFFORT") or "").lower()
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
    no_proxy = [h.strip().lstrip(".") for h in (_env("NO_PROXY") or _env("no_proxy") or "").split(",") if h.strip()]
    if "*" in no_proxy or any(parsed.host == h or parsed.host.endswith("." + h) for h in no_proxy):
        return None
    scheme = parsed.scheme.upper()
    return _env(f"{scheme}_PROXY") or _env(f"{scheme.lower()}_proxy") or _env("ALL_PROXY") or _env("all_proxy")


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
    key_env: str = "GROQ_API_KEY"
    notices: list[str] = field(default_factory=list)
    quiet: bool = False
    timeout: float = DEFAULT_TIMEOUT
    trace: CallTrace = field(default_factory=CallTrace)  # what the transport saw during the last call
    secrets: list[str] = field(default_factory=list, repr=False)  # scrubbed from every message
    warned: set[str] = field(default_factory=set)  # plain-words warnings already given once

    def warn_once(self, topic: str, line: str) -> None:
        """``notify`` a warning the first time ``topic`` comes up for this client."""
        if topic not in self.warned:
            self.warned.add(topic)
            self.notify(line)

    def notify(self, line: str) -> None:
        """Print a one-line notice (unless quiet) and keep it in ``notices``."""
        self.notices.append(line)
        if not self.quiet:
            print(line)

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

        SDK errors become ``ModelUnavailable`` saying what to do. An empty reply cut off by the
        token limit (gpt-oss spends ``max_tokens`` on hidden reasoning) is retried once with twice
        the limit; still empty -> ``EmptyReply``.
        """
        limit = max_tokens
        for attempt in (1, 2):
            options = self.request_options(messages, max_tokens=limit, temperature=temperature,
                                           reasoning_effort=reasoning_effort)
            self.trace.reset()
            try:
                response = self.client.chat.completions.create(**options)
            except ModelAccessError:
                raise
            except openai.APIError as error:
                raise ModelUnavailable(self.explain(error)) from error
            choice = response.choices[0] if response.choices else None
            text = (choice.message.content or "") if choice else ""
            if text.strip():
                return response
            finish = choice.finish_reason if choice else None
            if finish == "length" and attempt == 1:
                self.notify(f"empty {purpose} (finish_reason='length': the model spent {self.token_limit_parameter}="
                            f"{limit} before writing); retrying once with {limit * 2}")
                limit *= 2
                continue
            if finish == "length":
                raise EmptyReply(
                    f"The model returned an empty {purpose} twice (finish_reason='length' at "
                    f"{self.token_limit_parameter}={max_tokens} and {limit}): a reasoning model such as gpt-oss "
                    "spent the whole limit on hidden reasoning. Nothing was stored. Raise max_tokens, lower "
                    "reasoning_effort, or switch to LLM_MODE=replay / LLM_MODE=offline.")
            raise EmptyReply(f"The model returned an empty {purpose} (finish_reason={finish!r}). Nothing was "
                             "stored. Run the cell again, or switch to LLM_MODE=replay / LLM_MODE=offline.")
        raise AssertionError("unreachable")

    def explain(self, error: BaseException) -> str:
        """What a failed call means and what to do about it, in one paragraph (never the key)."""
        return explain_error(error, self)

    def close(self) -> None:
        self.client.close()


def explain_error(error: BaseException, access: ModelAccess) -> str:
    """A message for an SDK error that says what happened and what to do next, with every secret scrubbed."""
    return scrub_text(_explanation(error, access), [*access.secrets, *configured_secrets()])


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."


def _server_words(error: BaseException) -> str:
    """What the server itself said in an error answer (its ``error.message``, else its text), shortened."""
    body = getattr(error, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(inner, dict):
        inner = inner.get("message") or inner.get("detail")
    if isinstance(inner, str) and inner.strip():
        return " ".join(inner.split())[:300]
    response = getattr(error, "response", None)
    try:
        text = response.text if response is not None else ""
    except Exception:  # noqa: BLE001 (an unread stream: nothing more to quote)
        text = ""
    return " ".join(text.split())[:300] or str(getattr(error, "message", "") or "")[:300]


def _duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "longer than any retry"
    if seconds < 120:
        return f"{seconds:g} seconds"
    if seconds < 7200:
        return f"{seconds / 60:.0f} minutes"
    return f"{seconds / 3600:.1f} hours"


def _explanation(error: BaseException, access: ModelAccess) -> str:
    where = f"{access.endpoint} (model {access.model})"
    fallback = "or run without the network: LLM_MODE=replay (recorded answers) or LLM_MODE=offline (the stand-in)"
    made = access.trace.attempts or access.max_retries + 1
    attempts = "1 attempt" if made == 1 else f"{made} attempts, the SDK retrying with backoff"
    wait = access.trace.retry_after if (access.trace.retry_after or 0) >= 1 else None  # a wait worth naming
    detail = ""
    if isinstance(error, openai.APIStatusError):
        words = _server_words(error)
        detail = f" The server said: {_sentence(words)}" if words else ""
    if isinstance(error, openai.APITimeoutError):
        return (f"{where} sent no complete answer within LLM_TIMEOUT={access.timeout:g} seconds ({attempts}). "
                "A slow server needs a larger LLM_TIMEOUT (a local model on a CPU can take minutes for a long "
                "reply): set e.g. LLM_TIMEOUT=300 in .env or your environment and restart the kernel. If the "
                f"server should be fast, check the network or the server, then run again; {fallback}.")
    if isinstance(error, openai.APIConnectionError):
        cause = f" ({type(error.__cause__).__name__})" if error.__cause__ else ""
        return (f"Could not reach {where}{cause} after {attempts}: no network, or the server is not running at "
                f"that address (check LLM_BASE_URL). Connect and run again; {fallback}.")
    if isinstance(error, openai.RateLimitError):
        asked = ""
        if wait is not None:
            asked = f" It asked to wait {_duration(wait)} before trying again (Retry-After)"
            asked += ", longer than the SDK waits, so it did not retry." if wait > 120 and made == 1 else "."
        how_long = _duration(wait) if wait and wait > 60 else "a minute"
        return (f"{where} answered 429 Too Many Requests (rate limit) after {attempts}.{detail}{asked} Free tiers "
                f"limit tokens per minute: wait {how_long} and run the cell again; {fallback}.")
    if isinstance(error, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return (f"{where} rejected the API key ({error.status_code}).{detail} Check {access.key_env} in the "
                f".env file at the repository root (see .env.example) or in your environment; {fallback}.")
    if isinstance(error, openai.NotFoundError):
        return (f"{where} answered 404: the model or the URL does not exist there.{detail} Check LLM_MODEL and "
                f"LLM_BASE_URL; {fallback}.")
    if isinstance(error, openai.BadRequestError):
        hint = (" This endpoint may not accept reasoning_effort: set LLM_REASONING_EFFORT=off."
                if "reasoning" in str(error.message).lower() else "")
        return f"{where} rejected the request (400).{detail}{hint}"
    if isinstance(error, openai.APIStatusError) and error.status_code >= 500:
        asked = f" It asked to wait {_duration(wait)} (Retry-After)." if wait else ""
        return (f"{where} answered {error.status_code} (a server error on their side) after {attempts}.{detail}"
                f"{asked} Wait and run the cell again; {fallback}.")
    if isinstance(error, openai.APIStatusError):
        return f"{where} answered {error.status_code}.{detail} Run again, or {fallback}."
    return f"The call to {where} failed: {type(error).__name__}: {error}. Run again, or {fallback}."


def timeout_seconds(timeout: float | None = None) -> float:
    """The bound on one whole answer, in seconds: ``timeout``, else env ``LLM_TIMEOUT``, else the default.

    Refuses what is not a positive, finite number (``nan``, ``inf``, ``1e400``, ``-5``) with a message naming LLM_TIMEOUT.
    """
    source, value = ("timeout", timeout) if timeout is not None else ("LLM_TIMEOUT", _env("LLM_TIMEOUT"))
    if value is None:
        return DEFAULT_TIMEOUT
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = math.nan
    if isinstance(value, bool) or not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(f"{source} must be a positive number of seconds, such as 60 (the default) or 300 for a "
                         f"slow local server, got {value!r}. Fix LLM_TIMEOUT in .env or your environment (or the "
                         "timeout= argument) and run again.")
    return seconds


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
        "LM Studio) set LLM_BASE_URL and LLM_MODEL instead. Or run without a key: LLM_MODE=replay (recorded "
        "answers) or LLM_MODE=offline (the deterministic stand-in).")


_Built = tuple[openai.OpenAI, str, str, str, str]  # client, model, label, endpoint, provider


def _offline(sdk: dict[str, Any]) -> _Built:
    client = openai.OpenAI(api_key="offline-stand-in", base_url=_OFFLINE_URL,
                           http_client=httpx2.Client(transport=OfflineTransport()), **sdk)
    label = (f"Model: offline | a deterministic stand-in, not a language model: its summaries copy sentences, its "
             f"replies (marked [offline stand-in]) use only what the request holds | {OFFLINE_MODEL} | no network")
    return client, OFFLINE_MODEL, label, "in-process stand-in", "offline"


def _recorded_provider(path: Path | None) -> str:
    """The provider a recording was made against, so a replay sends the parameters the recording holds."""
    endpoint = Recording.load(path).endpoint if path is not None and path.exists() else None
    if not endpoint:
        return "groq"
    known = [name for name, provider in PROVIDERS.items() if endpoint.rstrip("/") == provider.base_url]
    return known[0] if known else "custom"


def _replay(path: Path | None, model: str | None, sdk: dict[str, Any], trace: CallTrace) -> _Built:
    if path is None:
        raise RecordingMissing("replay mode needs the name of a recording: connect('replay', "
                               "recording='02_summary_memory_run') reads data/recordings/02_summary_memory_run.json")
    saved = Recording.load(path)
    # the recorded model wins over LLM_MODEL (which may name a local server's model)
    model_name = model or (saved.models[0] if saved.models else None) or PROVIDERS["groq"].default_model
    checked = CheckedTransport(ReplayTransport(saved), timeout=sdk["timeout"], where=display_path(path), trace=trace)
    client = openai.OpenAI(api_key="replay", base_url=_REPLAY_URL, http_client=httpx2.Client(transport=checked),
                           **sdk)
    origin = f", recorded from {saved.endpoint}" if saved.endpoint else ""
    label = (f"Model: replay | {display_path(path)} ({len(saved.exchanges)} exchanges{origin}) | {model_name} "
             "| no network")
    return client, model_name, label, display_path(path), "replay"


def _live(mode: str, endpoint: _Endpoint, path: Path | None, transport: httpx2.BaseTransport | None,
          notify: Callable[[str], None], sdk: dict[str, Any], trace: CallTrace) -> _Built:
    """Live or record: the real endpoint, wrapped to record, or to fall back on the recording."""
    if not endpoint.configured:
        raise _missing_key(endpoint, mode)
    if not endpoint.model:
        raise ModelUnavailable(f"name the model your server at {endpoint.public_url} serves: set LLM_MODEL "
                               "(e.g. LLM_MODEL=llama3.2 for Ollama) or pass model=")
    key_text = f"key from {endpoint.key_source}" if endpoint.key_source != "no key needed" else "no key"
    label = f"Model: {mode} | {endpoint.name} {endpoint.public_url} | {endpoint.model} | {key_text}"

    def network() -> httpx2.BaseTransport:
        inner = transport or httpx2.HTTPTransport(proxy=_proxy_for(endpoint.base_url))
        return CheckedTransport(inner, timeout=sdk["timeout"], where=f"{endpoint.public_url} (model {endpoint.model})",
                                secrets=endpoint.secrets, trace=trace)

    wrapped: httpx2.BaseTransport = network()
    if mode == "record":
        if path is None:
            raise ValueError("record mode needs the name of a recording: connect('record', "
                             "recording='02_summary_memory_run') writes data/recordings/02_summary_memory_run.json")

        wrapped = RecordTransport(wrapped, Recording.load(path, missing_ok=True), endpoint=endpoint.public_url,
                                  secrets=endpoint.secrets)
        label += f" | saving exchanges to {display_path(path)}"
    elif path is not None and path.exists():
        wrapped = FallbackTransport(wrapped, Recording.load(path), max_retries=sdk["max_retries"], notify=notify)
        label += f" | a failed call is answered from {display_path(path)}"
    http_client = openai.DefaultHttpxClient(transport=wrapped)
    client = openai.OpenAI(api_key=endpoint.api_key, base_url=endpoint.base_url, http_client=http_client, **sdk)
    return client, endpoint.model, label, endpoint.public_url, endpoint.provider


def connect(mode: str | None = None, *, provider: str | None = None, base_url: str | None = None,
            model: str | None = None, api_key: str | None = None, recording: str | None = None,
            recordings_dir: str | Path | None = None, max_retries: int = DEFAULT_MAX_RETRIES,
            timeout: float | None = None, transport: httpx2.BaseTransport | None = None,
            load_env: bool | str | Path = True, quiet: bool = False) -> ModelAccess:
    """A real ``openai.OpenAI`` client for the chosen mode, and one printed line saying what it talks to.

    ``recording`` names this notebook's recording (``data/recordings/NAME.json``; ``recordings_dir``
    or env ``LLM_RECORDINGS_DIR`` moves the folder). ``transport`` replaces the network transport of
    live and record modes (tests use it). ``max_retries`` and ``timeout`` go to the SDK; the timeout
    defaults to env ``LLM_TIMEOUT`` or ``DEFAULT_TIMEOUT`` seconds.
    ``load_env``: True reads the repository's ``.env``, a path reads that file, False reads none.
    """
    if load_env:
        load_env_file(None if load_env is True else load_env)
    chosen = (mode or _env("LLM_MODE") or "").lower() or None
    if chosen is not None and chosen not in MODES:
        raise ValueError(f"unknown mode {chosen!r}: use one of {', '.join(MODES)} (argument or env LLM_MODE)")
    path = recording_path(recording, recordings_dir) if recording else None
    try:
        endpoint: _Endpoint | None = _resolve_endpoint(provider, base_url, model, api_key)
        endpoint_error: ValueError | None = None
    except ValueError as error:  # a bad live setting matters only if we go live
        endpoint, endpoint_error = None, error
    if endpoint is None and chosen not in ("offline", "replay"):
        raise endpoint_error  # type: ignore[misc]
    key_env = endpoint.key_env if endpoint else "GROQ_API_KEY"
    why = ""
    if chosen is None:
        assert endpoint is not None
        if endpoint.configured:
            source = "LLM_BASE_URL" if endpoint.provider == "custom" else endpoint.key_source
            chosen, why = "live", f"{source} is set"
        elif path is not None and path.exists():
            chosen, why = "replay", f"no key set, {display_path(path)} exists"
        else:
            chosen, why = "offline", "no key set" + (f", no recording {display_path(path)}" if path else "")
        why = f" (LLM_MODE not set: {why})"
    if max_retries < 0:
        raise ValueError("max_retries must be 0 or more")
    notices: list[str] = []  # shared with the ModelAccess: transports report fallbacks here

    def notify(line: str) -> None:
        notices.append(line)
        if not quiet:
            print(line)

    sdk: dict[str, Any] = {"max_retries": max_retries, "timeout": timeout_seconds(timeout)}
    trace = CallTrace()
    if chosen == "offline":
        built = _offline(sdk)
    elif chosen == "replay":
        built = _replay(path, model, sdk, trace)
    else:
        assert endpoint is not None
        built = _live(chosen, endpoint, path, transport, notify, sdk, trace)
    client, model_name, label, access_endpoint, provider_name = built
    label += why

    traits_from = _recorded_provider(path) if chosen == "replay" else provider_name
    reasoning, limit_parameter, temperature_ok = _model_traits(model_name, traits_from)
    access = ModelAccess(client=client, model=model_name, mode=chosen, label=label, endpoint=access_endpoint,
                         provider=provider_name, recording_path=path, accepts_reasoning_effort=reasoning,
                         token_limit_parameter=limit_parameter, accepts_temperature=temperature_ok,
                         max_retries=max_retries, key_env=key_env, notices=notices, quiet=quiet,
                         timeout=sdk["timeout"], trace=trace, secrets=endpoint.secrets() if endpoint else [])
    explain_in_notebooks(str(client.base_url), access.explain)  # a notebook's own SDK calls explain their errors
    if not quiet:
        print(label)
    return access
