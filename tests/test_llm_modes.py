"""helpers.model.connect: every mode gives a real openai client; failures explain themselves (issue 3).

All calls go through the real openai SDK (its retries included) over an ``httpx2.MockTransport``
or in-process transports; nothing leaves the machine.
"""
from __future__ import annotations

import json

import httpx2
import openai
import pytest

from helpers.memory.types import SettingError
from helpers.model import connect as llm
from helpers.model.connect import (
    EmptyReply,
    MissingKey,
    ModelUnavailable,
    RecordingMissing,
    UnknownModel,
    connect,
)
from helpers.model.offline.markers import MARKER, MODEL_NAME
from tests.support.errors import assert_fields
from tests.support.mock_api import Scripted, ok, status

KEY = "gsk_" + "TESTKEYabcdefghijklmnopqrstuvwxyz0123"
ASK = [{"role": "user", "content": "What is my salary?"}]


pytestmark = pytest.mark.usefixtures("model_env")


def live(handler: Scripted, **kwargs) -> llm.ModelAccess:
    kwargs.setdefault("max_retries", 2)
    return connect("live", api_key=KEY, transport=handler.transport(), load_env=False, quiet=True, **kwargs)


# ----- choosing a mode ---------------------------------------------------------------------------

def test_every_mode_gives_a_real_openai_client_and_a_label_without_the_key(tmp_path, capsys):
    handler = Scripted(ok("live answer"))
    accesses = {
        "live": connect("live", api_key=KEY, transport=handler.transport(), load_env=False),
        "record": connect("record", api_key=KEY, transport=handler.transport(), recording="run", load_env=False),
        "offline": connect("offline", load_env=False),
    }
    accesses["record"].client.chat.completions.create(model=accesses["record"].model, messages=ASK)
    accesses["replay"] = connect("replay", recording="run", load_env=False)
    printed = capsys.readouterr().out
    for mode, access in accesses.items():
        assert isinstance(access.client, openai.OpenAI)
        assert access.mode == mode
        assert access.label.startswith(f"Model: {mode} |")
        assert access.label in printed  # the one line each connect() printed
        assert KEY not in access.label and KEY not in printed
    assert accesses["live"].model == "openai/gpt-oss-120b"
    assert "https://api.groq.com/openai/v1" in accesses["live"].label
    assert "GROQ_API_KEY" not in accesses["live"].label  # the key came from the argument here
    assert "not a language model" in accesses["offline"].label
    assert accesses["replay"].model == "openai/gpt-oss-120b"  # taken from the recording


def test_the_mode_comes_from_LLM_MODE_and_the_argument_wins(monkeypatch):
    monkeypatch.setenv("LLM_MODE", "offline")
    assert connect(load_env=False, quiet=True).mode == "offline"
    monkeypatch.setenv("GROQ_API_KEY", KEY)
    assert connect(load_env=False, quiet=True).mode == "offline"  # LLM_MODE beats the key
    assert connect("live", load_env=False, quiet=True).mode == "live"  # the argument beats LLM_MODE
    monkeypatch.setenv("LLM_MODE", "sideways")
    with pytest.raises(SettingError) as raised:
        connect(load_env=False, quiet=True)
    assert (raised.value.setting, raised.value.value) == ("LLM_MODE", "sideways")


def test_default_is_live_with_a_key_else_replay_with_a_recording_else_offline(monkeypatch):
    assert connect(recording="run", load_env=False, quiet=True).mode == "offline"
    handler = Scripted(ok("recorded"))
    recorder = connect("record", api_key=KEY, transport=handler.transport(), recording="run", load_env=False,
                       quiet=True)
    recorder.client.chat.completions.create(model=recorder.model, messages=ASK)
    replaying = connect(recording="run", load_env=False, quiet=True)
    assert replaying.mode == "replay" and "LLM_MODE not set" in replaying.label
    assert connect(load_env=False, quiet=True).mode == "offline"  # no recording named: offline
    monkeypatch.setenv("GROQ_API_KEY", KEY)
    assert connect(recording="run", load_env=False, quiet=True).mode == "live"


def test_keys_come_from_a_dotenv_file_without_overriding_the_environment(tmp_path, monkeypatch):
    env_file = tmp_path / ".env"
    env_file.write_text(f"GROQ_API_KEY={KEY}\nLLM_MODEL=from-dotenv\n", encoding="utf-8")
    monkeypatch.setenv("LLM_MODEL", "from-environment")
    access = connect(load_env=env_file, quiet=True)
    assert access.mode == "live" and access.model == "from-environment"
    assert "key from GROQ_API_KEY" in access.label and KEY not in access.label
    assert access.client.api_key == KEY


def test_openai_and_custom_servers_are_chosen_by_their_variables(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-" + "openai-key-0123456789abcdef")
    access = connect(load_env=False, quiet=True)
    assert (access.provider, access.model) == ("openai", "gpt-4o-mini")
    assert str(access.client.base_url).startswith("https://api.openai.com/v1")
    monkeypatch.setenv("LLM_BASE_URL", "http://localhost:11434/v1")
    monkeypatch.setenv("LLM_MODEL", "llama3.2")
    custom = connect(load_env=False, quiet=True)
    assert (custom.mode, custom.provider, custom.model) == ("live", "custom", "llama3.2")
    assert str(custom.client.base_url) == "http://localhost:11434/v1/"
    monkeypatch.delenv("LLM_MODEL")
    with pytest.raises(UnknownModel) as raised:  # the server at localhost:11434 is not running: nothing listed
        connect(load_env=False, quiet=True)
    assert_fields(raised.value, reason="unknown model", setting="LLM_MODEL", retry_can_help=False)
    assert raised.value.listed == ()


def test_live_without_a_key_says_how_to_set_it_or_run_without_one():
    for mode in ("live", "record"):
        with pytest.raises(MissingKey) as raised:
            connect(mode, recording="run", load_env=False, quiet=True)
        assert_fields(raised.value, reason="missing key", setting="GROQ_API_KEY", retry_can_help=False)
        assert not isinstance(raised.value, ModelUnavailable)  # a setting to fix, not an endpoint that failed
        assert "getpass" not in str(raised.value)  # keys come from .env or the environment, never a prompt


def test_replay_without_the_recording_names_the_file_and_how_to_record_it():
    with pytest.raises(RecordingMissing) as raised:
        connect("replay", recording="02_summary_memory_run", load_env=False, quiet=True)
    assert_fields(raised.value, reason="no recording", retry_can_help=False)
    assert "02_summary_memory_run.json" in str(raised.value)  # the file it looked for


# ----- failures through the SDK's retries ---------------------------------------------------------

def test_a_429_is_retried_by_the_sdk_and_then_succeeds():
    handler = Scripted(status(429), ok("after the rate limit"))
    response = live(handler).complete(ASK, max_tokens=50)
    assert response.choices[0].message.content == "after the rate limit"
    assert len(handler.requests) == 2
    assert [r.headers["x-stainless-retry-count"] for r in handler.requests] == ["0", "1"]
    assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in handler.requests)


def test_429s_that_outlast_the_retries_say_to_wait_or_switch_mode():
    handler = Scripted(status(429, "Rate limit reached for model openai/gpt-oss-120b"))
    access = live(handler)
    with pytest.raises(ModelUnavailable) as raised:
        access.complete(ASK, max_tokens=50)
    assert len(handler.requests) == 3  # the first attempt and the SDK's 2 retries
    assert_fields(raised.value, reason="rate limit", status=429, attempts=3, retry_after=0.001, retry_can_help=True)
    assert "Rate limit reached" in str(raised.value)  # the server's own words are passed on
    assert isinstance(raised.value.__cause__, openai.RateLimitError)
    # each retry was announced as it happened, with the wait
    assert [n.split(":")[0] for n in access.notices] == ["attempt 1 of 3", "attempt 2 of 3"]
    assert all("answered 429; the SDK tries again in 0.001 seconds" in n for n in access.notices)


def test_5xx_exhausting_the_retries_gives_a_clear_message():
    handler = Scripted(status(503, "upstream overloaded"))
    with pytest.raises(ModelUnavailable) as raised:
        live(handler, max_retries=1).complete(ASK, max_tokens=50)
    assert len(handler.requests) == 2
    assert_fields(raised.value, reason="server error", status=503, attempts=2, retry_can_help=True)


def test_no_network_says_so_and_how_to_run_without_it():
    handler = Scripted(httpx2.ConnectError("[Errno 101] Network is unreachable"))
    with pytest.raises(ModelUnavailable) as raised:
        live(handler, max_retries=0).complete(ASK, max_tokens=50)
    assert_fields(raised.value, reason="no connection", status=None, attempts=1, retry_can_help=True)
    assert "https://api.groq.com/openai/v1" in str(raised.value)  # where it tried


def test_a_rejected_key_points_at_the_variable_and_never_shows_the_key():
    handler = Scripted(httpx2.Response(401, json={"error": {"message": "Invalid API Key", "type": "auth"}}))
    with pytest.raises(ModelUnavailable) as raised:
        live(handler).complete(ASK, max_tokens=50)
    assert len(handler.requests) == 1  # 401 is not retried
    assert_fields(raised.value, reason="rejected key", status=401, attempts=1, setting="GROQ_API_KEY",
                  retry_can_help=False)
    assert KEY not in str(raised.value)


# ----- empty replies -----------------------------------------------------------------------------

def test_an_empty_reply_cut_by_the_limit_is_retried_once_with_a_larger_limit():
    handler = Scripted(ok("", finish_reason="length"), ok("the answer"))
    access = live(handler)
    response = access.complete(ASK, max_tokens=300, purpose="summary")
    assert response.choices[0].message.content == "the answer"
    assert [body["max_tokens"] for body in handler.bodies] == [300, 600]
    assert any("retrying once with 600" in notice for notice in access.notices)


def test_an_empty_reply_after_the_retry_is_a_clear_error():
    handler = Scripted(ok(None, finish_reason="length"))
    with pytest.raises(EmptyReply) as raised:
        live(handler).complete(ASK, max_tokens=300)
    assert len(handler.requests) == 2
    assert_fields(raised.value, reason="empty reply cut", attempts=2, setting="max_tokens", retry_can_help=False)
    assert "max_tokens=300 and 600" in str(raised.value)  # both limits it tried


def test_an_empty_reply_that_was_not_cut_off_is_not_retried():
    handler = Scripted(ok("   ", finish_reason="stop"))
    with pytest.raises(EmptyReply) as raised:
        live(handler).complete(ASK, max_tokens=300)
    assert len(handler.requests) == 1
    assert_fields(raised.value, reason="empty reply", retry_can_help=True)


# ----- request options per endpoint ---------------------------------------------------------------

def test_reasoning_effort_is_sent_only_where_the_endpoint_accepts_it(monkeypatch):
    groq = Scripted(ok("x"))
    live(groq).complete(ASK, max_tokens=10, reasoning_effort="low")
    assert groq.bodies[0]["reasoning_effort"] == "low"
    assert groq.bodies[0]["temperature"] == 0 and groq.bodies[0]["max_tokens"] == 10

    small = Scripted(ok("x"))
    live(small, provider="openai", model="gpt-4o-mini").complete(ASK, max_tokens=10, reasoning_effort="low")
    assert "reasoning_effort" not in small.bodies[0]

    reasoning = Scripted(ok("x"))
    live(reasoning, provider="openai", model="o4-mini").complete(ASK, max_tokens=10, reasoning_effort="low")
    assert reasoning.bodies[0]["max_completion_tokens"] == 10 and "max_tokens" not in reasoning.bodies[0]
    assert "temperature" not in reasoning.bodies[0] and reasoning.bodies[0]["reasoning_effort"] == "low"

    monkeypatch.setenv("LLM_REASONING_EFFORT", "off")
    switched_off = Scripted(ok("x"))
    live(switched_off).complete(ASK, max_tokens=10, reasoning_effort="low")
    assert "reasoning_effort" not in switched_off.bodies[0]


def test_offline_mode_answers_through_the_sdk_with_its_marker_and_model_name():
    access = connect("offline", load_env=False, quiet=True)
    response = access.client.chat.completions.create(model=access.model, messages=ASK, max_tokens=200)
    assert response.model == MODEL_NAME
    assert response.choices[0].message.content.startswith(MARKER)
    assert "do not have your salary" in response.choices[0].message.content
    assert response.usage.prompt_tokens > 0


def test_a_recording_replays_through_the_sdk_by_exact_request():
    handler = Scripted(ok("recorded answer", model="openai/gpt-oss-120b"))
    recorder = connect("record", api_key=KEY, transport=handler.transport(), recording="exact",
                       load_env=False, quiet=True)
    recorder.complete(ASK, max_tokens=64)
    replay = connect("replay", recording="exact", load_env=False, quiet=True)
    assert replay.complete(ASK, max_tokens=64).choices[0].message.content == "recorded answer"
    with pytest.raises(RecordingMissing) as raised:
        replay.complete(ASK, max_tokens=65)  # one setting differs: not the recorded request
    assert_fields(raised.value, reason="no recording", retry_can_help=False)
    assert "exact.json" in str(raised.value) and "max_tokens=65" in str(raised.value)  # the file and the difference
    saved = json.loads(replay.recording_path.read_text(encoding="utf-8"))
    assert saved["exchanges"][0]["request"]["body"]["max_tokens"] == 64


def test_a_live_call_waits_60_seconds_by_default_not_the_sdks_600(monkeypatch):
    assert connect("live", api_key=KEY, load_env=False, quiet=True).client.timeout == 60.0
    monkeypatch.setenv("LLM_TIMEOUT", "15")
    assert connect("live", api_key=KEY, load_env=False, quiet=True).client.timeout == 15.0
    monkeypatch.setenv("LLM_TIMEOUT", "soon")
    with pytest.raises(SettingError) as raised:
        connect("live", api_key=KEY, load_env=False, quiet=True)
    assert (raised.value.setting, raised.value.value) == ("LLM_TIMEOUT", "soon")


def test_the_retry_count_is_a_setting(monkeypatch):
    assert connect("live", api_key=KEY, load_env=False, quiet=True).client.max_retries == 2  # the SDK's default
    monkeypatch.setenv("LLM_MAX_RETRIES", "0")
    handler = Scripted(status(429))
    access = connect("live", api_key=KEY, transport=handler.transport(), load_env=False, quiet=True)
    assert access.client.max_retries == access.max_retries == 0
    with pytest.raises(ModelUnavailable) as raised:
        access.complete(ASK, max_tokens=5)
    assert len(handler.requests) == 1 and raised.value.attempts == 1 and not access.notices
    assert connect("offline", max_retries=5, load_env=False, quiet=True).client.max_retries == 5  # the argument wins
    for value in ("-1", "two", "1.5"):
        monkeypatch.setenv("LLM_MAX_RETRIES", value)
        with pytest.raises(SettingError) as raised:
            connect("offline", load_env=False, quiet=True)
        assert (raised.value.setting, raised.value.value) == ("LLM_MAX_RETRIES", value)


def test_a_rejected_request_says_which_setting_when_it_is_reasoning_effort():
    handler = Scripted(httpx2.Response(400, json={"error": {"message": "reasoning_effort is not supported",
                                                            "type": "invalid_request_error"}}))
    with pytest.raises(ModelUnavailable) as raised:
        live(handler).complete(ASK, max_tokens=5, reasoning_effort="low")
    assert_fields(raised.value, reason="rejected request", status=400, attempts=1, setting="LLM_REASONING_EFFORT",
                  retry_can_help=False)
    other = Scripted(httpx2.Response(400, json={"error": {"message": "temperature must be at most 2"}}))
    with pytest.raises(ModelUnavailable) as plain:
        live(other).complete(ASK, max_tokens=5)
    assert_fields(plain.value, reason="rejected request", setting=None)
