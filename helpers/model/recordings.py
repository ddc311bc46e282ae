"""Record and replay model exchanges under the real openai SDK, as ``httpx2`` transports.

A recording is one JSON file, ``data/recordings/NAME.json``, holding the exchanges of one
notebook: each the request body the SDK sent (model, messages, settings) and the response body
the server returned. No header is ever stored, so no key and no authorization header can end up
in the file, and any key text found in a body is replaced before writing.

* ``RecordTransport`` passes requests to the live endpoint and saves each successful exchange.
* ``ReplayTransport`` answers from the file by exact request match; a request with no recording
  raises ``RecordingMissing`` naming the file and how to record it.
* ``FallbackTransport`` is live, but when a call has failed for good (connection error, or
  429/5xx on the SDK's last retry) and the recording holds that exact request, it answers from
  the recording and says so: the instructor's safety net in class.
"""
from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

from helpers.base import signing
from helpers.base.json_limits import JSONRefused, load_limited
from helpers.base.paths import DATA_DIR, REPO_ROOT
from helpers.model.errors import BadResponse, RecordingMissing
from helpers.model.responses import RETRIED_STATUSES, retries_taken, sdk_retries
from helpers.model.secrets import public_url, scrub_text

FORMAT_VERSION = 1
MAX_RECORDING_BYTES = 256 * 2**20  # a notebook's recording is some hundred kilobytes


class BadRecording(RecordingMissing):
    """A recording file that cannot be replayed (damaged, edited, too large or too deep); ``field`` names
    the part at fault ("file", "exchanges", "number", ...), as ``StateError`` does for a saved state."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def recordings_dir(override: str | Path | None = None) -> Path:
    """Where recordings live: the argument, else env ``LLM_RECORDINGS_DIR``, else ``data/recordings``."""
    if override:
        return Path(override)
    configured = os.environ.get("LLM_RECORDINGS_DIR", "").strip()
    return Path(configured) if configured else DATA_DIR / "recordings"


def recording_path(name: str, directory: str | Path | None = None) -> Path:
    """``NAME`` -> ``<recordings dir>/NAME.json`` (a name may already end in ``.json``)."""
    if not name or "/" in name or "\\" in name or name.startswith("."):
        raise ValueError(f"a recording name is a plain file name such as '02_summary_memory_run', got {name!r}")
    file_name = name if name.endswith(".json") else f"{name}.json"
    return recordings_dir(directory) / file_name


def display_path(path: Path) -> str:
    """A path as a reader should see it: relative to the repository when inside it."""
    try:
        return path.resolve().relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return str(path)


def endpoint_path(path: str) -> str:
    """The API path without the server's prefix: ``/openai/v1/chat/completions`` -> ``chat/completions``."""
    return path.rstrip("/").rsplit("/v1/", 1)[-1].lstrip("/")


def request_key(path: str, body: dict[str, Any]) -> str:
    """The exact-match key of a request: its API path and its canonical JSON body."""
    return endpoint_path(path) + " " + json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def scrub(value: Any, secrets: Iterable[str]) -> Any:
    """A copy of JSON data with every secret, whatever its length (and anything shaped like an API key), replaced."""
    secrets = [secret for secret in secrets if secret]
    if isinstance(value, str):
        return scrub_text(value, secrets)
    if isinstance(value, list):
        return [scrub(item, secrets) for item in value]
    if isinstance(value, dict):
        return {key: scrub(item, secrets) for key, item in value.items()
                if key.lower() not in ("authorization", "api_key", "api-key", "x-api-key")}
    return value


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
        """Read a recording file; with ``missing_ok`` a missing file gives an empty recording."""
        if not path.exists():
            if missing_ok:
                return cls(path)
            raise RecordingMissing(
                f"There is no recording {display_path(path)}. Record it first: with a key set "
                "(GROQ_API_KEY in .env, or another endpoint), run the notebook once with LLM_MODE=record; "
                "or run it offline with LLM_MODE=offline (the deterministic stand-in).")
        raw = signing.read_verified(path)  # signed recordings (notebook 06): read once, checked, then parsed
        where = display_path(path)
        try:  # size, depth and number lengths checked before the parser sees it
            data = load_limited(raw, what=where, max_bytes=MAX_RECORDING_BYTES)
        except JSONRefused as error:
            raise BadRecording(error.field, f"{error}; delete it and record again with LLM_MODE=record") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT_VERSION or isinstance(data.get("format"), bool):
            raise BadRecording("format", f"{where} is not a recording of format {FORMAT_VERSION}; delete it and "
                               "record again with LLM_MODE=record")
        if not isinstance(data.get("exchanges"), list):
            raise BadRecording("exchanges", f"{where} has no list of exchanges; delete it and record again with "
                               "LLM_MODE=record")
        for index, exchange in enumerate(data["exchanges"]):
            problem = _exchange_problem(exchange)
            if problem:
                raise BadRecording(f"exchanges[{index}]", f"{where}: exchange {index + 1} {problem}, so it cannot "
                                   "be replayed; delete that exchange (or the file) and record again with "
                                   "LLM_MODE=record")
        endpoint = data.get("endpoint")
        return cls(path, data["exchanges"], public_url(endpoint) if isinstance(endpoint, str) else None)

    # ----- lookup --------------------------------------------------------------------------------
    def _matches(self, key: str) -> list[dict[str, Any]]:
        return [exchange for exchange in self.exchanges
                if request_key(exchange["request"]["path"], exchange["request"]["body"]) == key]

    def lookup(self, path: str, body: dict[str, Any]) -> dict[str, Any] | None:
        """The recorded response body for this exact request, or None.

        The same request recorded several times is answered in the recorded order (the last
        answer repeats), so a replay follows the run that was recorded.
        """
        key = request_key(path, body)
        matches = self._matches(key)
        if not matches:
            return None
        index = self._served.get(key, 0)
        self._served[key] = index + 1
        return matches[min(index, len(matches) - 1)]["response"]["body"]

    @property
    def models(self) -> list[str]:
        """The models named in the recorded requests, most used first."""
        counts: dict[str, int] = {}
        for exchange in self.exchanges:
            model = exchange["request"]["body"].get("model")
            if isinstance(model, str):
                counts[model] = counts.get(model, 0) + 1
        return sorted(counts, key=lambda model: -counts[model])

    def closest_difference(self, path: str, body: dict[str, Any]) -> str:
        """In words, where this request first differs from the most similar recorded one."""
        if not self.exchanges:
            return "the recording holds no exchanges yet"
        messages = body.get("messages") or []
        best: tuple[int, dict[str, Any]] | None = None
        for exchange in self.exchanges:
            recorded = exchange["request"]["body"].get("messages") or []
            same = 0
            while same < min(len(messages), len(recorded)) and messages[same] == recorded[same]:
                same += 1
            if best is None or same > best[0]:
                best = (same, exchange["request"]["body"])
        assert best is not None
        same, recorded_body = best
        recorded_messages = recorded_body.get("messages") or []
        if same == len(messages) == len(recorded_messages):
            settings = sorted(k for k in set(body) | set(recorded_body)
                              if k != "messages" and body.get(k) != recorded_body.get(k))
            return ("the closest recorded request has the same messages but different settings: "
                    + ", ".join(f"{k}={body.get(k)!r} (recorded {recorded_body.get(k)!r})" for k in settings))
        if same < len(messages):
            role = messages[same].get("role")
            return (f"the closest recorded request matches the first {same} messages; message {same + 1} "
                    f"({role}) differs. If an earlier answer came from another mode or a changed prompt, "
                    "every later request differs too: replay the notebook from the top, or record it again")
        return f"the closest recorded request has more messages ({len(recorded_messages)} vs {len(messages)})"

    # ----- writing -------------------------------------------------------------------------------
    def add(self, path: str, body: dict[str, Any], response_body: dict[str, Any], *, status: int,
            endpoint: str, secrets: Iterable[str]) -> None:
        """Add one exchange (scrubbed) and write the file at once, so a crash loses nothing recorded.

        A request recorded in an earlier session is replaced; repeats within this session are kept in order.
        """
        secrets = list(secrets)
        body, response_body = scrub(body, secrets), scrub(response_body, secrets)
        key = request_key(path, body)
        if key not in self._recorded_now:
            self.exchanges = [exchange for exchange in self.exchanges
                              if request_key(exchange["request"]["path"], exchange["request"]["body"]) != key]
            self._recorded_now.add(key)
        self.exchanges.append({"request": {"path": endpoint_path(path), "body": body},
                               "response": {"status_code": status, "body": response_body}})
        self.endpoint = public_url(endpoint)
        self.save()

    def save(self) -> None:
        data = {
            "format": FORMAT_VERSION,
            "about": "Model exchanges recorded with LLM_MODE=record and answered again with LLM_MODE=replay "
                     "(helpers.model.recordings). Request and response bodies only: no headers, no keys.",
            "endpoint": self.endpoint,
            "models": self.models,
            "exchanges": self.exchanges,
        }
        try:
            content = (json.dumps(data, ensure_ascii=False, indent=1) + "\n").encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: \u-escaped JSON stores it losslessly
            content = (json.dumps(data, ensure_ascii=True, indent=1) + "\n").encode("utf-8")
        # signed (notebook 06) when a signing key is configured; the file and its signature are written together
        signing.write_signed(self.path, content)


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
    if not isinstance(response.get("body"), dict):
        return f"has a response body that is {type(response.get('body')).__name__}, not an object"
    return None


# ----- transports ----------------------------------------------------------------------------------

def _body(request: httpx2.Request) -> dict[str, Any]:
    try:
        parsed = json.loads(request.read() or b"{}")
    except json.JSONDecodeError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _json_response(status: int, payload: dict[str, Any], request: httpx2.Request) -> httpx2.Response:
    return httpx2.Response(status, json=payload, request=request)


def _missing(recording: Recording, request: httpx2.Request, body: dict[str, Any]) -> RecordingMissing:
    messages = body.get("messages") or []
    last = messages[-1].get("content") if messages and isinstance(messages[-1], dict) else None
    last_text = (last if isinstance(last, str) else str(last))[:90] if last else "(none)"
    return RecordingMissing(
        f"No recorded answer for this request in {display_path(recording.path)} "
        f"({len(recording.exchanges)} exchanges recorded). The request: model {body.get('model')!r}, "
        f"{len(messages)} messages, the last one starting {last_text!r}; "
        f"{recording.closest_difference(request.url.path, body)}. "
        "To record it: set a key (GROQ_API_KEY in .env) or a server (LLM_BASE_URL) and run the notebook "
        "from the top with LLM_MODE=record; or use LLM_MODE=offline for the deterministic stand-in.")


class ReplayTransport(httpx2.BaseTransport):
    """Answers every request from a recording, by exact match; never touches the network."""

    def __init__(self, recording: Recording) -> None:
        self.recording = recording

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        body = _body(request)
        answer = self.recording.lookup(request.url.path, body)
        if answer is None:
            raise _missing(self.recording, request, body)
        return _json_response(200, answer, request)


def _read(response: httpx2.Response, request: httpx2.Request) -> tuple[httpx2.Response, bytes]:
    """Read a live response and rebuild it so the SDK can read it again (encoding already undone)."""
    try:
        content = response.read()
    finally:
        response.close()
    headers = [(k, v) for k, v in response.headers.multi_items()
               if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")]
    return httpx2.Response(response.status_code, headers=headers, content=content, request=request), content


class RecordTransport(httpx2.BaseTransport):
    """Sends requests to the live endpoint and saves each successful exchange to the recording."""

    def __init__(self, inner: httpx2.BaseTransport, recording: Recording, *, endpoint: str,
                 secrets: Callable[[], Iterable[str]]) -> None:
        self.inner, self.recording, self.endpoint, self.secrets = inner, recording, endpoint, secrets

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        body = _body(request)
        response, content = _read(self.inner.handle_request(request), request)
        if 200 <= response.status_code < 300:
            try:
                payload = json.loads(content)
            except json.JSONDecodeError:
                payload = None
            if isinstance(payload, dict):
                self.recording.add(request.url.path, body, payload, status=response.status_code,
                                   endpoint=self.endpoint, secrets=self.secrets())
        return response

    def close(self) -> None:
        self.inner.close()


class FallbackTransport(httpx2.BaseTransport):
    """Live; a call that failed for good is answered from the recording when it holds that exact request.

    "For good" means on the SDK's last attempt: earlier attempts pass the failure up so the SDK
    retries with its backoff as usual. ``max_retries`` must be the client's.
    """

    def __init__(self, inner: httpx2.BaseTransport, recording: Recording, *, max_retries: int,
                 notify: Callable[[str], None]) -> None:
        self.inner, self.recording, self.max_retries, self.notify = inner, recording, max_retries, notify

    def _last_attempt(self, request: httpx2.Request) -> bool:
        taken = retries_taken(request)
        return taken is None or taken >= self.max_retries

    def _from_recording(self, request: httpx2.Request, why: str, *, final: bool = False) -> httpx2.Response | None:
        if not (final or self._last_attempt(request)):
            return None
        answer = self.recording.lookup(request.url.path, _body(request))
        if answer is None:
            self.notify(f"live call failed ({why}); {display_path(self.recording.path)} has no recording of this "
                        "exact request, so the error stands")
            return None
        self.notify(f"live call failed ({why}); answered from recording {display_path(self.recording.path)}")
        return _json_response(200, answer, request)

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            response = self.inner.handle_request(request)
        except BadResponse:  # a 200 that is not a chat completion: the SDK will not retry it
            fallback = self._from_recording(request, "answered 200 without a usable chat completion", final=True)
            if fallback is None:
                raise
            return fallback
        except httpx2.TransportError as error:
            fallback = self._from_recording(request, f"connection error: {type(error).__name__}")
            if fallback is None:
                raise
            return fallback
        if response.status_code in RETRIED_STATUSES:
            fallback = self._from_recording(request, str(response.status_code),
                                            final=not sdk_retries(response))
            if fallback is not None:
                response.close()
                return fallback
        return response

    def close(self) -> None:
        self.inner.close()
