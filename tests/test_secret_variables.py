"""One list of secret variables and one scrubber: a key is never printed, stored in a memory or a state, or recorded,
in any form a server can echo it (escaped, percent-encoded, in another case, base64 or base64url at any alignment)."""
from __future__ import annotations

import base64
import json
import os
import re
import runpy
from urllib.parse import quote, quote_plus

import pytest

from helpers.base.paths import REPO_ROOT
from helpers.memory.state import save
from helpers.memory.stubs import turn_range_stub
from helpers.memory.summary import SummaryMemory
from helpers.model import settings
from helpers.model.chat import chat
from helpers.model.connect import connect
from helpers.model.errors import MissingKey, ModelUnavailable, UnknownModel
from helpers.model.recordings import recording_path
from helpers.model.settings import Provider, configured_secrets, public_url, scrub_text, url_credentials
from tests.support.mock_api import assert_fields, Scripted, ok, status
from tests.support.openai_compatible_server import OpenAICompatibleServer

NEW_KEY = "nk-" + "a-short-new-provider-key"  # no known key shape: only the list can scrub it
SLASHED = "lb/Echo+Key=0123456789abcdefXYZ"  # a '/' to be JSON-escaped, a '+' and '=' to be URL-encoded

pytestmark = pytest.mark.usefixtures("model_env")


def b64(data: bytes, url: bool = False) -> str:
    return (base64.urlsafe_b64encode if url else base64.b64encode)(data).decode()


def forms(key: str) -> dict[str, str]:
    """The forms a server may write ``key`` in, worked out here (not by the scrubber)."""
    raw = key.encode()
    return {"raw": key, "json-escaped": key.replace("/", "\\/"), "unicode-escaped": "\\u006c" + key[1:],
            "url-encoded": quote(key, safe=""), "form-encoded": quote_plus(key), "upper case": key.upper(),
            "lower case": key.lower(), "base64": b64(raw), "base64 unpadded": b64(raw).rstrip("="),
            "base64url": b64(raw, True), "base64url unpadded": b64(raw, True).rstrip("="),
            **{f"base64 inside a longer text, {n} bytes before": b64(b"x" * n + raw + b" and more") for n in range(3)},
            "base64url inside a longer text": b64(b"Authorization: " + raw + b"!", True)}


def holds_key(text: str, key: str = SLASHED) -> bool:
    """True if ``text`` holds ``key`` in a readable form: as text in any case, or in base64 at any alignment."""
    if any(form.lower() in text.lower() for name, form in forms(key).items() if "base64" not in name):
        return True
    for run in re.findall(r"[A-Za-z0-9+/_-]{12,}", text):
        for pad in ("", "A", "AA", "AAA"):
            chunk = pad + run.replace("-", "+").replace("_", "/")
            decoded = base64.b64decode(chunk[:len(chunk) // 4 * 4])
            if key.encode()[:12] in decoded or key.encode()[-12:] in decoded:
                return True
    return False


def test_a_provider_added_to_the_table_is_a_secret_everywhere(monkeypatch):
    monkeypatch.setitem(settings.PROVIDERS, "newco", Provider("NewCo", "https://x.invalid/v1", "NEWCO_API_KEY", "nc-1"))
    monkeypatch.setenv("NEWCO_API_KEY", NEW_KEY)
    assert "NEWCO_API_KEY" in settings.model_variables() and NEW_KEY in configured_secrets()
    echo = Scripted(ok(f"you sent {NEW_KEY}"), status(500, f"bad key {NEW_KEY}"))
    access = connect("record", provider="newco", transport=echo.transport(), recording="run", load_env=False,
                     quiet=True, max_retries=0)
    access.complete([{"role": "user", "content": f"my key is {NEW_KEY}"}], max_tokens=5)
    assert access.model == "nc-1" and echo.requests[0].headers["authorization"] == f"Bearer {NEW_KEY}"
    assert NEW_KEY not in recording_path("run").read_text(encoding="utf-8")
    with pytest.raises(ModelUnavailable) as raised:
        access.complete([{"role": "user", "content": "again"}], max_tokens=5)
    assert NEW_KEY not in str(raised.value)
    monkeypatch.delenv("NEWCO_API_KEY")
    with pytest.raises(MissingKey) as missing:
        connect("live", provider="newco", load_env=False, quiet=True)
    assert_fields(missing.value, reason="missing key", setting="NEWCO_API_KEY")


def test_the_tests_environment_is_cleaned_of_every_model_variable_and_env_example_names_them_all(monkeypatch):
    for name in settings.model_variables():
        monkeypatch.setenv(name, "set-by-the-developer")
    runpy.run_path(str(REPO_ROOT / "conftest.py"))  # what every test and notebook kernel starts with
    assert [name for name in settings.model_variables() if name in os.environ] == ["LLM_MODE"]
    assert os.environ["LLM_MODE"] == "offline"
    example = (REPO_ROOT / ".env.example").read_text(encoding="utf-8")
    assert [name for name in settings.model_variables() if f"{name}=" not in example] == []


@pytest.mark.parametrize("form", forms(SLASHED))
def test_the_one_scrubber_finds_the_key_in_every_form_it_can_be_echoed_in(form):
    echoed = f"you sent {forms(SLASHED)[form]} to us"
    scrubbed = scrub_text(echoed, [SLASHED])
    assert "[REDACTED]" in scrubbed and scrubbed.startswith("you sent ") and not holds_key(scrubbed)


def test_a_short_secret_is_found_in_its_encodings_but_only_in_its_own_case():
    """A short password ("Pune") in any case would take every "pune" of a reply with it; a key is long."""
    assert scrub_text("Pune, P%75ne, \\u0050une, UHVuZQ==; pune and PUNE are words", ["Pune"]) == (
        "[REDACTED], [REDACTED], [REDACTED], [REDACTED]; pune and PUNE are words")


def test_credentials_in_a_base_url_are_scrubbed_as_written_decoded_and_as_a_basic_header():
    secrets = url_credentials("http://te%40cher:hun%2Fter2@127.0.0.1:9/v1")
    echoed = "user te%40cher / te@cher, password hun%2Fter2 / hun/ter2, header Basic dGVAY2hlcjpodW4vdGVyMg=="
    assert scrub_text(echoed, secrets) == ("user [REDACTED] / [REDACTED], password [REDACTED] / [REDACTED], header "
                                           "Basic [REDACTED]")
    assert public_url("http://teacher:hun\uff20ter2@127.0.0.1:9/v1") == "http://127.0.0.1:9/v1"  # urlsplit refuses it


@pytest.fixture
def echoing():
    with OpenAICompatibleServer(expected_key=SLASHED) as running:
        yield running


@pytest.mark.parametrize("form", ["raw", "json-escaped", "upper case", "base64", "base64url unpadded",
                                  "base64 inside a longer text, 1 bytes before"])
def test_a_200_reply_holding_the_key_reaches_no_memory_saved_state_or_recording(form, echoing, tmp_path):
    echoing.body_filter = lambda data: data.replace(  # every form is valid inside a JSON string as it is
        b'"content": "', b'"content": "' + forms(SLASHED)[form].encode() + b" ", 1)
    access = connect("record", base_url=echoing.base_url, api_key=SLASHED, model="stand-in", recording="run",
                     load_env=False, quiet=True, max_retries=0)
    memory = SummaryMemory("You are a test assistant.", turn_range_stub)
    record = chat(memory, "hello", access)
    stored = [memory.archive[-1]["content"], save(memory, tmp_path / "state.json").read_text(encoding="utf-8"),
              recording_path("run").read_text(encoding="utf-8"), repr(record)]
    assert "[REDACTED]" in stored[0] and not any(holds_key(text) for text in stored)


@pytest.mark.parametrize("form", ["raw", "url-encoded", "lower case", "base64"])
def test_a_key_echoed_by_a_server_reaches_no_label_error_or_cause(form, echoing, capsys):
    echoing.models, echoing.echo_key_in_401 = ["ECHOED"], True
    echoing.body_filter = lambda data: data.replace(b"ECHOED", forms(SLASHED)[form].encode())
    access = connect("live", base_url=echoing.base_url, api_key=SLASHED, load_env=False, max_retries=0)
    assert "[REDACTED]" in access.label and not holds_key(access.label + access.model + capsys.readouterr().out)
    with pytest.raises(UnknownModel) as unknown:
        connect("live", base_url=echoing.base_url, api_key=SLASHED, model="other", load_env=False, quiet=True)
    echoing.models, echoing.public_models, wrong = None, True, SLASHED[:-3] + "abc"  # the 401 echoes the key sent
    echoing.body_filter = lambda data: data.replace(wrong.encode(), forms(wrong)[form].encode())
    access = connect("live", base_url=echoing.base_url, api_key=wrong, model="s", load_env=False, quiet=True)
    with pytest.raises(Exception) as rejected:  # a notebook's own call: the SDK's error, its body and response
        access.client.chat.completions.create(model="s", messages=[{"role": "user", "content": "hi"}])
    error = rejected.value
    texts = [str(unknown.value), repr(unknown.value.listed), str(error), str(error.body), error.response.text]
    assert not any(holds_key(text, key) for text in texts for key in (SLASHED, wrong))


def test_credentials_in_the_base_url_are_never_printed_recorded_or_in_an_error(capsys):
    with OpenAICompatibleServer() as server:
        url = server.base_url.replace("http://", "http://teacher:hunter2@")
        access = connect("record", base_url=url, model="stand-in", recording="run", load_env=False, max_retries=0)
        access.complete([{"role": "user", "content": "hello"}], max_tokens=20)
        stored = recording_path("run").read_text(encoding="utf-8")
        assert "hunter2" not in capsys.readouterr().out + access.label + stored and "teacher" not in stored
        assert json.loads(stored)["endpoint"] == server.base_url
    with pytest.raises(UnknownModel) as raised:
        connect("live", base_url="http://teacher:hunter2@127.0.0.1:9/v1", load_env=False, quiet=True)
    assert "hunter2" not in str(raised.value) and "http://127.0.0.1:9/v1" in str(raised.value)
