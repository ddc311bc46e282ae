"""One list of secret variable names (issue 15): a provider added in one place has its key used by connect(),
scrubbed from messages and recordings, and removed from the tests' environment."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from helpers.base.paths import REPO_ROOT
from helpers.model import settings
from helpers.model.connect import MissingKey, ModelUnavailable, connect
from helpers.model.recordings import recording_path
from helpers.model.settings import configured_secrets, scrub_text
from helpers.model.settings import Provider
from tests.support.errors import assert_fields
from tests.support.mock_api import Scripted, ok, status

NEW_KEY = "nk-" + "a-short-new-provider-key"  # no known key shape: only the list can scrub it

pytestmark = pytest.mark.usefixtures("model_env")


@pytest.fixture
def new_provider(monkeypatch):
    """A provider added to the one table, and nowhere else."""
    monkeypatch.setitem(settings.PROVIDERS, "newco", Provider("NewCo", "https://api.newco.invalid/v1", "NEWCO_API_KEY",
                                                              "newco-small"))
    return "NEWCO_API_KEY"


def test_a_provider_added_to_the_table_is_a_secret_everywhere(new_provider, monkeypatch):
    assert new_provider in settings.secret_variables() and new_provider in settings.model_variables()
    monkeypatch.setenv(new_provider, NEW_KEY)
    assert NEW_KEY in configured_secrets()
    assert scrub_text(f"the key {NEW_KEY} leaked", configured_secrets()) == "the key [REDACTED] leaked"


def test_connect_uses_the_new_providers_key_and_scrubs_it_from_errors_and_recordings(new_provider, monkeypatch):
    monkeypatch.setenv(new_provider, NEW_KEY)
    echo = Scripted(ok(f"you sent {NEW_KEY}"), status(500, f"bad key {NEW_KEY}"))
    access = connect("record", provider="newco", transport=echo.transport(), recording="run", load_env=False,
                     quiet=True, max_retries=0)
    assert access.model == "newco-small"
    access.complete([{"role": "user", "content": f"my key is {NEW_KEY}"}], max_tokens=5)
    assert echo.requests[0].headers["authorization"] == f"Bearer {NEW_KEY}"  # the key it was given was used...
    stored = recording_path("run").read_text(encoding="utf-8")
    assert NEW_KEY not in stored and json.loads(stored)["exchanges"]  # ...and never stored
    with pytest.raises(ModelUnavailable) as raised:
        access.complete([{"role": "user", "content": "again"}], max_tokens=5)
    assert NEW_KEY not in str(raised.value)
    monkeypatch.delenv(new_provider)
    with pytest.raises(MissingKey) as missing:
        connect("live", provider="newco", load_env=False, quiet=True)
    assert_fields(missing.value, reason="missing key", setting=new_provider)


def test_the_tests_environment_is_cleaned_of_every_model_variable():
    """The root conftest removes each variable of the one list before any test or notebook kernel starts."""
    leaked = {name: "set-by-the-developer" for name in settings.model_variables()}
    script = ("import os, runpy; runpy.run_path('conftest.py'); "
              "print(sorted(n for n in os.environ if n in %r and n != 'LLM_MODE'), os.environ['LLM_MODE'])"
              % (list(leaked),))
    out = subprocess.run([sys.executable, "-c", script], cwd=REPO_ROOT, env={**os.environ, **leaked},
                         capture_output=True, text=True, check=True).stdout
    assert out.split() == ["[]", "offline"]


def test_env_example_names_every_variable_model_access_reads():
    example = (REPO_ROOT / ".env.example").read_text(encoding="utf-8")
    assert [name for name in settings.model_variables() if f"{name}=" not in example] == []


# ----- one boundary for secrets: every form a server can echo the key in (issue 25 item 4) -----------

from urllib.parse import quote, quote_plus  # noqa: E402

from helpers.memory.state import save  # noqa: E402
from helpers.memory.summary import SummaryMemory  # noqa: E402
from helpers.memory.stubs import turn_range_stub  # noqa: E402
from helpers.model.chat import chat  # noqa: E402
from helpers.model.connect import UnknownModel  # noqa: E402
from tests.support.openai_compatible_server import OpenAICompatibleServer  # noqa: E402

SLASHED = "lb/Echo+Key=0123456789abcdefXYZ"  # a '/' to be JSON-escaped, a '+' and '=' to be URL-encoded


def rendered(key: str) -> dict[str, str]:
    """The forms a server or the SDK may write ``key`` in, worked out here (not by the scrubber)."""
    return {"raw": key, "json-escaped": key.replace("/", "\\/"), "unicode-escaped": "\\u006c" + key[1:],
            "url-encoded": quote(key, safe=""), "form-encoded": quote_plus(key), "upper case": key.upper(),
            "lower case": key.lower()}


def holds_key(text: str, key: str = SLASHED) -> bool:
    """True if any form of ``key`` is in ``text`` (case ignored)."""
    folded = text.lower()
    return any(form.lower() in folded for form in rendered(key).values()) or "echo+key" in folded


def error_texts(error: BaseException) -> str:
    """Every message of an error and its causes and contexts, and their fields."""
    texts, seen = [], set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        texts += [str(error), repr(getattr(error, "fields", "")), repr(getattr(error, "listed", "")),
                  str(getattr(error, "body", "")), str(getattr(error, "message", ""))]
        error = error.__cause__ or error.__context__
    return "\n".join(texts)


@pytest.fixture
def echoing():
    with OpenAICompatibleServer(expected_key=SLASHED) as running:
        yield running


@pytest.mark.parametrize("form", rendered(SLASHED))
def test_a_model_list_echoing_the_key_never_reaches_the_label_or_the_unknown_model_error(form, echoing, capsys):
    echoing.models = ["ECHOED"]
    echoing.body_filter = lambda data: data.replace(b"ECHOED", rendered(SLASHED)[form].encode())
    access = connect("live", base_url=echoing.base_url, api_key=SLASHED, load_env=False, max_retries=0)
    assert not holds_key(access.label + access.model + capsys.readouterr().out) and "[REDACTED]" in access.label
    with pytest.raises(UnknownModel) as raised:
        connect("live", base_url=echoing.base_url, api_key=SLASHED, model="other", load_env=False, quiet=True)
    assert not holds_key(error_texts(raised.value))


@pytest.mark.parametrize("form", rendered(SLASHED))
def test_a_401_body_echoing_the_key_reaches_no_error_or_cause(form, echoing):
    echoing.echo_key_in_401 = True
    wrong = SLASHED[:-3] + "abc"  # the key the client sent: the one the server echoes
    echoing.body_filter = lambda data: data.replace(wrong.encode(), rendered(wrong)[form].encode())  # valid JSON
    with pytest.raises(Exception) as raised:  # connect() reads the model list, so the 401 comes there already
        access = connect("live", base_url=echoing.base_url, api_key=wrong, model="stand-in", load_env=False,
                         quiet=True, max_retries=0)
        access.complete([{"role": "user", "content": "hello"}], max_tokens=5)
    assert echoing.received[-1]["headers"]["authorization"] == f"Bearer {wrong}"  # the server had it to echo
    assert not holds_key(error_texts(raised.value), wrong)


@pytest.mark.parametrize("form", rendered(SLASHED))
def test_a_200_reply_quoting_the_key_reaches_no_memory_saved_state_or_recording(form, echoing, tmp_path):
    echoing.body_filter = lambda data: data.replace(  # every form is valid inside a JSON string as it is
        b'"content": "', b'"content": "' + rendered(SLASHED)[form].encode() + b" ", 1)
    access = connect("record", base_url=echoing.base_url, api_key=SLASHED, model="stand-in", recording="run",
                     load_env=False, quiet=True, max_retries=0)
    memory = SummaryMemory("You are a test assistant.", turn_range_stub)
    record = chat(memory, "hello", access)
    state = save(memory, tmp_path / "state.json").read_text(encoding="utf-8")
    stored = recording_path("run").read_text(encoding="utf-8")
    reply = memory.archive[-1]["content"]
    assert "[REDACTED]" in reply and not holds_key(reply + state + stored + repr(record))


def test_a_base_url_that_cannot_be_parsed_is_never_shown_with_its_password(capsys):
    from helpers.model.settings import public_url

    url = "http://teacher:hun\uff20ter2@127.0.0.1:9/v1"  # a full-width @ in the password: urlsplit refuses it
    with pytest.raises(ValueError):
        __import__("urllib.parse").parse.urlsplit(url)
    assert public_url(url) == "http://127.0.0.1:9/v1"
    with pytest.raises(Exception) as raised:
        connect("live", base_url=url, model="stand-in", load_env=False, max_retries=0, timeout=2).complete(
            [{"role": "user", "content": "hi"}], max_tokens=5)
    shown = capsys.readouterr().out + error_texts(raised.value)
    assert "hun\uff20ter2" not in shown and quote("hun\uff20ter2") not in shown and "teacher" not in shown


def test_a_short_secret_is_found_in_every_encoding_but_only_in_its_own_case():
    """A short password ("Pune") in any case would take every "pune" of a reply with it; a key is long."""
    assert scrub_text("Pune, P%75ne, \\u0050une; pune and PUNE are words", ["Pune"]) == (
        "[REDACTED], [REDACTED], [REDACTED]; pune and PUNE are words")
    assert scrub_text(f"{SLASHED.upper()} / {quote(SLASHED.lower())}", [SLASHED]) == "[REDACTED] / [REDACTED]"
