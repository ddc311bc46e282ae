"""Recordings: one JSON file per notebook (``data/recordings/``) of request and response bodies, keys scrubbed,
answered by exact request; a file larger than its stated maximum is refused from its size, before it is read."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from helpers.base import signing
from helpers.base.errors import SettingError
from helpers.base.files import lone_surrogate_at
from helpers.base.json_limits import JSONRefused, load_limited
from helpers.base.paths import DATA_DIR, REPO_ROOT
from helpers.model.errors import RecordingMissing
from helpers.model.settings import env, public_url, scrub_text

FORMAT_VERSION = 1
MAX_RECORDING_BYTES = 64 * 2**20  # a notebook's recording is some hundred kilobytes
RECORD_AGAIN = "delete it and record again with LLM_MODE=record"


class BadRecording(RecordingMissing):
    """A recording file that cannot be replayed; ``field`` names the part at fault, as ``StateError`` does."""

    def __init__(self, field: str, message: str, setting: str | None = None) -> None:
        super().__init__(message, setting=setting)
        self.field = field


def recordings_dir() -> Path:
    """Where recordings live: env ``LLM_RECORDINGS_DIR``, else ``data/recordings``."""
    return Path(env("LLM_RECORDINGS_DIR") or DATA_DIR / "recordings")


def recording_path(name: str) -> Path:
    """``NAME`` -> ``<recordings dir>/NAME.json`` (a name may already end in ``.json``)."""
    if not name or "/" in name or "\\" in name or name.startswith("."):
        raise SettingError("recording", name, "a recording name is a plain file name such as "
                           f"'02_summary_memory_run', got {name!r}")
    return recordings_dir() / (name if name.endswith(".json") else f"{name}.json")


def display_path(path: Path) -> str:
    """A path as a reader should see it: relative to the repository when inside it."""
    resolved = path.resolve()
    return resolved.relative_to(REPO_ROOT).as_posix() if resolved.is_relative_to(REPO_ROOT) else str(path)


def request_key(path: str, body: dict[str, Any]) -> str:
    """The exact-match key of a request: its API path without the server's prefix, and its canonical JSON body."""
    endpoint = path.rstrip("/").rsplit("/v1/", 1)[-1].lstrip("/")
    return endpoint + " " + json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def scrub(value: Any, secrets: list[str]) -> Any:
    """A copy of JSON data with every secret (and anything shaped like a key) replaced in its texts."""
    if isinstance(value, str):
        return scrub_text(value, secrets)
    if isinstance(value, list):
        return [scrub(item, secrets) for item in value]
    return {key: scrub(item, secrets) for key, item in value.items()} if isinstance(value, dict) else value


def _problem(exchange: Any) -> str | None:
    """What makes a recorded exchange unusable, or None."""
    if not isinstance(exchange, dict):
        return f"is a {type(exchange).__name__}, not an object"
    request, response = exchange.get("request"), exchange.get("response")
    if not isinstance(request, dict) or not isinstance(request.get("path"), str):
        return "has no request path"
    if not isinstance(request.get("body"), dict):
        return "has no request body"
    body = response.get("body") if isinstance(response, dict) else None
    return None if isinstance(body, dict) else "has no response" if not isinstance(response, dict) else (
        f"has a response body that is {type(body).__name__}, not an object")


class Recording:
    """The exchanges of one recording file, answered by exact request in the recorded order."""

    def __init__(self, path: Path, exchanges: list[dict[str, Any]] | None = None, endpoint: str | None = None) -> None:
        self.path, self.exchanges, self.endpoint = path, exchanges or [], endpoint
        self._served: Counter[str] = Counter()
        self._recorded_now: set[str] = set()

    @classmethod
    def load(cls, path: Path, *, missing_ok: bool = False, max_bytes: int = MAX_RECORDING_BYTES) -> Recording:
        """Read a recording file, refused if larger than ``max_bytes`` on disk (signed ones checked); with
        ``missing_ok`` a missing file gives an empty one."""
        where = display_path(path)
        if not path.exists():
            if missing_ok:
                return cls(path)
            raise RecordingMissing(
                f"There is no recording {where}. Record it first: with a key set (GROQ_API_KEY in .env, or another "
                "endpoint), run the notebook once with LLM_MODE=record; or run it offline with LLM_MODE=offline.")
        if (size := path.stat().st_size) > max_bytes:
            raise BadRecording("file", f"{where} is {size:,} bytes, more than the {max_bytes:,} a recording may hold "
                               "(max_bytes=, default helpers.model.recordings.MAX_RECORDING_BYTES); it was not read. "
                               "A notebook's recording is some hundred kilobytes: record it again, or raise the "
                               "limit if you trust the file.", setting="MAX_RECORDING_BYTES")
        try:  # read once, at most max_bytes, signature checked; depth and number lengths checked before parsing
            data = load_limited(signing.read_verified(path), what=where, max_bytes=max_bytes)
        except JSONRefused as error:
            raise BadRecording(error.field, f"{error}; {RECORD_AGAIN}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT_VERSION or isinstance(data.get("format"), bool):
            raise BadRecording("format", f"{where} is not a recording of format {FORMAT_VERSION}; {RECORD_AGAIN}")
        if not isinstance(data.get("exchanges"), list):
            raise BadRecording("exchanges", f"{where} has no list of exchanges; {RECORD_AGAIN}")
        for index, exchange in enumerate(data["exchanges"]):
            if problem := _problem(exchange):
                raise BadRecording(f"exchanges[{index}]", f"{where}: exchange {index + 1} {problem}, so it cannot be "
                                   "replayed; delete that exchange (or the file) and record again with LLM_MODE=record")
        endpoint = data.get("endpoint")
        return cls(path, data["exchanges"], public_url(endpoint) if isinstance(endpoint, str) else None)

    @staticmethod
    def _key(exchange: dict[str, Any]) -> str:
        return request_key(exchange["request"]["path"], exchange["request"]["body"])

    def lookup(self, path: str, body: dict[str, Any]) -> dict[str, Any] | None:
        """The recorded response body for this exact request, or None; repeats answer in the recorded order (the
        last one repeats), so a replay follows the run that was recorded."""
        key = request_key(path, body)
        matches = [exchange for exchange in self.exchanges if self._key(exchange) == key]
        self._served[key] += 1
        return matches[min(self._served[key], len(matches)) - 1]["response"]["body"] if matches else None

    @property
    def models(self) -> list[str]:
        """The models named in the recorded requests, most used first."""
        models = Counter(e["request"]["body"].get("model") for e in self.exchanges)
        return [model for model, _ in models.most_common() if isinstance(model, str)]

    def closest_difference(self, body: dict[str, Any]) -> str:
        """In words, where this request first differs from the most similar recorded one."""
        if not self.exchanges:
            return "the recording holds no exchanges yet"
        messages = body.get("messages") or []

        def shared(recorded: dict[str, Any]) -> int:
            old = recorded.get("messages") or []
            return next((i for i, (a, b) in enumerate(zip(messages, old)) if a != b), min(len(messages), len(old)))

        closest = max((exchange["request"]["body"] for exchange in self.exchanges), key=shared)
        same, recorded = shared(closest), closest.get("messages") or []
        if same == len(messages) == len(recorded):
            settings = sorted(k for k in set(body) | set(closest) if k != "messages" and body.get(k) != closest.get(k))
            return ("the closest recorded request has the same messages but different settings: "
                    + ", ".join(f"{k}={body.get(k)!r} (recorded {closest.get(k)!r})" for k in settings))
        if same < len(messages):
            return (f"the closest recorded request matches the first {same} messages; message {same + 1} "
                    f"({messages[same].get('role')}) differs. If an earlier answer came from another mode or a "
                    "changed prompt, every later request differs too: replay the notebook from the top, or record it "
                    "again")
        return f"the closest recorded request has more messages ({len(recorded)} vs {len(messages)})"

    def missing(self, body: dict[str, Any]) -> RecordingMissing:
        """The error for a request this recording does not hold, with where it differs from the closest one."""
        messages = body.get("messages") or []
        last = messages[-1].get("content") if messages and isinstance(messages[-1], dict) else None
        return RecordingMissing(
            f"No recorded answer for this request in {display_path(self.path)} ({len(self.exchanges)} exchanges "
            f"recorded). The request: model {body.get('model')!r}, {len(messages)} messages, the last one starting "
            f"{str(last)[:90] if last else '(none)'!r}; {self.closest_difference(body)}. To record it: set a key "
            "(GROQ_API_KEY in .env) or a server (LLM_BASE_URL) and run the notebook from the top with LLM_MODE=record; "
            "or use LLM_MODE=offline for the deterministic stand-in.")

    def add(self, path: str, body: dict[str, Any], response_body: dict[str, Any], *, status: int, endpoint: str,
            secrets: list[str]) -> None:
        """Add one exchange (scrubbed) and write the file at once, atomically and signed when a signing key is set; a
        request recorded in an earlier session is replaced, repeats within this session are kept in order."""
        body, response_body = scrub(body, secrets), scrub(response_body, secrets)
        key = request_key(path, body)
        if key not in self._recorded_now:
            self.exchanges = [exchange for exchange in self.exchanges if self._key(exchange) != key]
            self._recorded_now.add(key)
        self.exchanges.append({"request": {"path": key.split(" ", 1)[0], "body": body},
                               "response": {"status_code": status, "body": response_body}})
        self.endpoint = public_url(endpoint)
        data = {"format": FORMAT_VERSION, "about": "Model exchanges recorded with LLM_MODE=record and answered again "
                "with LLM_MODE=replay (helpers.model.recordings). Request and response bodies only: no headers, no "
                "keys.", "endpoint": self.endpoint, "models": self.models, "exchanges": self.exchanges}
        text = json.dumps(data, ensure_ascii=False, indent=1)
        if lone_surrogate_at(text) is not None:  # not UTF-8: \u-escaped JSON stores it losslessly
            text = json.dumps(data, indent=1)
        signing.write_signed(self.path, (text + "\n").encode("utf-8"))
