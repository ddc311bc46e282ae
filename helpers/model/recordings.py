"""Model exchanges recorded and replayed under the real openai SDK: one JSON file per notebook (``data/recordings/``),
request and response bodies only, keys scrubbed, and one transport, ``RecordingTransport``, for every mode."""
from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

from helpers.base import signing
from helpers.base.errors import SettingError
from helpers.base.files import lone_surrogate_at
from helpers.base.json_limits import JSONRefused, load_limited
from helpers.base.paths import DATA_DIR, REPO_ROOT
from helpers.model.errors import BadResponse, RecordingMissing
from helpers.model.responses import RETRIED_STATUSES, json_of, request_json, retries_taken, sdk_retries
from helpers.model.secrets import public_url, scrub_text

FORMAT_VERSION = 1
MAX_RECORDING_BYTES = 256 * 2**20  # a notebook's recording is some hundred kilobytes
RECORD_AGAIN = "delete it and record again with LLM_MODE=record"


class BadRecording(RecordingMissing):
    """A recording file that cannot be replayed; ``field`` names the part at fault, as ``StateError`` does."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def recordings_dir(override: str | Path | None = None) -> Path:
    """Where recordings live: the argument, else env ``LLM_RECORDINGS_DIR``, else ``data/recordings``."""
    configured = override or os.environ.get("LLM_RECORDINGS_DIR", "").strip()
    return Path(configured) if configured else DATA_DIR / "recordings"


def recording_path(name: str, directory: str | Path | None = None) -> Path:
    """``NAME`` -> ``<recordings dir>/NAME.json`` (a name may already end in ``.json``)."""
    if not name or "/" in name or "\\" in name or name.startswith("."):
        raise SettingError("recording", name, "a recording name is a plain file name such as "
                           f"'02_summary_memory_run', got {name!r}")
    return recordings_dir(directory) / (name if name.endswith(".json") else f"{name}.json")


def display_path(path: Path) -> str:
    """A path as a reader should see it: relative to the repository when inside it."""
    resolved = path.resolve()
    return resolved.relative_to(REPO_ROOT).as_posix() if resolved.is_relative_to(REPO_ROOT) else str(path)


def endpoint_path(path: str) -> str:
    """The API path without the server's prefix: ``/openai/v1/chat/completions`` -> ``chat/completions``."""
    return path.rstrip("/").rsplit("/v1/", 1)[-1].lstrip("/")


def request_key(path: str, body: dict[str, Any]) -> str:
    """The exact-match key of a request: its API path and its canonical JSON body."""
    return endpoint_path(path) + " " + json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def scrub(value: Any, secrets: Iterable[str]) -> Any:
    """A copy of JSON data with every secret (and anything shaped like an API key) replaced, key fields dropped."""
    secrets = [secret for secret in secrets if secret]
    if isinstance(value, str):
        return scrub_text(value, secrets)
    if isinstance(value, list):
        return [scrub(item, secrets) for item in value]
    if isinstance(value, dict):
        return {key: scrub(item, secrets) for key, item in value.items()
                if key.lower() not in ("authorization", "api_key", "api-key", "x-api-key")}
    return value


def _exchange_problem(exchange: Any) -> str | None:
    """What makes a recorded exchange unusable, or None."""
    if not isinstance(exchange, dict):
        return f"is a {type(exchange).__name__}, not an object"
    request, response = exchange.get("request"), exchange.get("response")
    if not isinstance(request, dict) or not isinstance(request.get("path"), str):
        return "has no request path"
    if not isinstance(request.get("body"), dict):
        return "has no request body"
    if not isinstance(response, dict):
        return "has no response"
    body = response.get("body")
    return None if isinstance(body, dict) else f"has a response body that is {type(body).__name__}, not an object"


@dataclass
class Recording:
    """The exchanges of one recording file, with lookup by exact request."""

    path: Path
    exchanges: list[dict[str, Any]] = field(default_factory=list)
    endpoint: str | None = None
    _served: dict[str, int] = field(default_factory=dict, repr=False)
    _recorded_now: set[str] = field(default_factory=set, repr=False)

    @classmethod
    def load(cls, path: Path, *, missing_ok: bool = False) -> Recording:
        """Read a recording file (signed ones checked); with ``missing_ok`` a missing file gives an empty one."""
        if not path.exists():
            if missing_ok:
                return cls(path)
            raise RecordingMissing(
                f"There is no recording {display_path(path)}. Record it first: with a key set "
                "(GROQ_API_KEY in .env, or another endpoint), run the notebook once with LLM_MODE=record; "
                "or run it offline with LLM_MODE=offline (the deterministic stand-in).")
        where = display_path(path)
        try:  # read once, signature checked; size, depth and number lengths checked before parsing
            data = load_limited(signing.read_verified(path), what=where, max_bytes=MAX_RECORDING_BYTES)
        except JSONRefused as error:
            raise BadRecording(error.field, f"{error}; {RECORD_AGAIN}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT_VERSION or isinstance(data.get("format"), bool):
            raise BadRecording("format", f"{where} is not a recording of format {FORMAT_VERSION}; {RECORD_AGAIN}")
        if not isinstance(data.get("exchanges"), list):
            raise BadRecording("exchanges", f"{where} has no list of exchanges; {RECORD_AGAIN}")
        for index, exchange in enumerate(data["exchanges"]):
            if problem := _exchange_problem(exchange):
                raise BadRecording(f"exchanges[{index}]", f"{where}: exchange {index + 1} {problem}, so it cannot "
                                   f"be replayed; delete that exchange (or the file) and record again with "
                                   "LLM_MODE=record")
        endpoint = data.get("endpoint")
        return cls(path, data["exchanges"], public_url(endpoint) if isinstance(endpoint, str) else None)

    def lookup(self, path: str, body: dict[str, Any]) -> dict[str, Any] | None:
        """The recorded response body for this exact request, or None; repeats answer in the recorded order
        (the last answer repeats), so a replay follows the run that was recorded."""
        key = request_key(path, body)
        matches = [exchange for exchange in self.exchanges if self._key(exchange) == key]
        if not matches:
            return None
        index = self._served.get(key, 0)
        self._served[key] = index + 1
        return matches[min(index, len(matches) - 1)]["response"]["body"]

    @staticmethod
    def _key(exchange: dict[str, Any]) -> str:
        return request_key(exchange["request"]["path"], exchange["request"]["body"])

    @property
    def models(self) -> list[str]:
        """The models named in the recorded requests, most used first."""
        models = (exchange["request"]["body"].get("model") for exchange in self.exchanges)
        return [model for model, _ in Counter(model for model in models if isinstance(model, str)).most_common()]

    def closest_difference(self, body: dict[str, Any]) -> str:
        """In words, where this request first differs from the most similar recorded one."""
        if not self.exchanges:
            return "the recording holds no exchanges yet"
        messages = body.get("messages") or []

        def shared(recorded: dict[str, Any]) -> int:
            old = recorded.get("messages") or []
            return next((i for i, (a, b) in enumerate(zip(messages, old)) if a != b), min(len(messages), len(old)))

        closest = max((exchange["request"]["body"] for exchange in self.exchanges), key=shared)
        same, recorded_messages = shared(closest), closest.get("messages") or []
        if same == len(messages) == len(recorded_messages):
            settings = sorted(k for k in set(body) | set(closest) if k != "messages" and body.get(k) != closest.get(k))
            return ("the closest recorded request has the same messages but different settings: "
                    + ", ".join(f"{k}={body.get(k)!r} (recorded {closest.get(k)!r})" for k in settings))
        if same < len(messages):
            return (f"the closest recorded request matches the first {same} messages; message {same + 1} "
                    f"({messages[same].get('role')}) differs. If an earlier answer came from another mode or a changed "
                    "prompt, every later request differs too: replay the notebook from the top, or record it again")
        return f"the closest recorded request has more messages ({len(recorded_messages)} vs {len(messages)})"

    def add(self, path: str, body: dict[str, Any], response_body: dict[str, Any], *, status: int,
            endpoint: str, secrets: Iterable[str]) -> None:
        """Add one exchange (scrubbed) and write the file at once, atomically and signed when a signing key is set; a
        request recorded in an earlier session is replaced, repeats within this session are kept in order."""
        secrets = list(secrets)
        body, response_body = scrub(body, secrets), scrub(response_body, secrets)
        key = request_key(path, body)
        if key not in self._recorded_now:
            self.exchanges = [exchange for exchange in self.exchanges if self._key(exchange) != key]
            self._recorded_now.add(key)
        self.exchanges.append({"request": {"path": endpoint_path(path), "body": body},
                               "response": {"status_code": status, "body": response_body}})
        self.endpoint = public_url(endpoint)
        data = {"format": FORMAT_VERSION,
                "about": "Model exchanges recorded with LLM_MODE=record and answered again with LLM_MODE=replay "
                         "(helpers.model.recordings). Request and response bodies only: no headers, no keys.",
                "endpoint": self.endpoint, "models": self.models, "exchanges": self.exchanges}
        text = json.dumps(data, ensure_ascii=False, indent=1)
        if lone_surrogate_at(text) is not None:  # not UTF-8: \u-escaped JSON stores it losslessly
            text = json.dumps(data, indent=1)
        signing.write_signed(self.path, (text + "\n").encode("utf-8"))


@dataclass
class RecordingTransport(httpx2.BaseTransport):
    """One recording under the SDK, by ``mode``: "replay" answers every request from it (no network); "record" passes
    each to ``inner`` and saves every successful exchange; "fallback" is live, and a call that failed for good (the
    SDK's last attempt, ``max_retries`` being the client's, or a 200 that is no chat completion) is answered from it."""

    recording: Recording
    mode: str
    inner: httpx2.BaseTransport | None = None
    endpoint: str = ""
    secrets: Callable[[], Iterable[str]] = tuple
    max_retries: int = 0
    notify: Callable[[str], None] = print

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        modes = {"replay": self._replay, "record": self._record, "fallback": self._fallback}
        return modes[self.mode](request, request_json(request))

    def _replay(self, request: httpx2.Request, body: dict[str, Any]) -> httpx2.Response:
        answer = self.recording.lookup(request.url.path, body)
        if answer is None:
            raise self._missing(body)
        return httpx2.Response(200, json=answer, request=request)

    def _record(self, request: httpx2.Request, body: dict[str, Any]) -> httpx2.Response:
        response = self.inner.handle_request(request)
        payload = json_of(response.read()) if 200 <= response.status_code < 300 else None
        if isinstance(payload, dict):
            self.recording.add(request.url.path, body, payload, status=response.status_code, endpoint=self.endpoint,
                               secrets=self.secrets())
        return response

    def _fallback(self, request: httpx2.Request, body: dict[str, Any]) -> httpx2.Response:
        response: httpx2.Response | None = None
        try:
            response, failed = self.inner.handle_request(request), None
        except (BadResponse, httpx2.TransportError) as error:
            failed = error
        if response is not None:
            if response.status_code not in RETRIED_STATUSES:
                return response
            why, final = str(response.status_code), not sdk_retries(response)
        elif isinstance(failed, BadResponse):  # a 200 that is not a chat completion: the SDK will not retry it
            why, final = "answered 200 without a usable chat completion", True
        else:
            why, final = f"connection error: {type(failed).__name__}", False
        taken = retries_taken(request)
        if final or taken is None or taken >= self.max_retries:
            answer = self.recording.lookup(request.url.path, body)
            where = display_path(self.recording.path)
            if answer is not None:
                self.notify(f"live call failed ({why}); answered from recording {where}")
                if response is not None:
                    response.close()
                return httpx2.Response(200, json=answer, request=request)
            self.notify(f"live call failed ({why}); {where} has no recording of this exact request, so the error "
                        "stands")
        if failed is not None:
            raise failed
        return response

    def _missing(self, body: dict[str, Any]) -> RecordingMissing:
        messages = body.get("messages") or []
        last = messages[-1].get("content") if messages and isinstance(messages[-1], dict) else None
        last_text = str(last)[:90] if last else "(none)"
        return RecordingMissing(
            f"No recorded answer for this request in {display_path(self.recording.path)} "
            f"({len(self.recording.exchanges)} exchanges recorded). The request: model {body.get('model')!r}, "
            f"{len(messages)} messages, the last one starting {last_text!r}; "
            f"{self.recording.closest_difference(body)}. "
            "To record it: set a key (GROQ_API_KEY in .env) or a server (LLM_BASE_URL) and run the notebook "
            "from the top with LLM_MODE=record; or use LLM_MODE=offline for the deterministic stand-in.")

    def close(self) -> None:
        if self.inner is not None:
            self.inner.close()
