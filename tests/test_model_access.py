"""connect() in every mode, the settings, and each failure explained by its fields, through the real openai SDK (its
retries included) over an httpx2.MockTransport; nothing leaves the machine."""
from __future__ import annotations

import httpx2
import openai
import pytest

from helpers.base.errors import SettingError, short_traceback
from helpers.memory.types import SummariserError
from helpers.model import connect as llm
from helpers.model.connect import connect
from helpers.model.errors import ContextOverflow, MissingKey, RecordingMissing, UnknownModel, explain_error
from helpers.model.offline.markers import MARKER, MODEL_NAME
from tests.support.mock_api import assert_fields, Scripted, ok, status

KEY = "gsk_" + "TESTKEYabcdefghijklmnopqrstuvwxyz0123"
ASK = [{"role": "user", "content": "What is my salary?"}]
PAGE_CALL = dict(max_tokens=1000, temperature=0, reasoning_effort="low", messages=ASK)  # as the lesson pages write it

pytestmark = pytest.mark.usefixtures("model_env")


def live(handler: Scripted, **kwargs) -> llm.ModelAccess:
    return connect("live", api_key=KEY, transport=handler.transport(), load_env=False, quiet=True, **kwargs)


def failure(access: llm.ModelAccess, **kwargs) -> BaseException:
    with pytest.raises(Exception) as raised:
        access.complete(ASK, max_tokens=50, **kwargs)
    return raised.value


def test_every_mode_gives_a_real_openai_client_and_a_mode_line_without_the_key(monkeypatch, capsys):
    assert connect(recording="run", load_env=False).mode == "offline"  # no key, no recording
    recorder = connect("record", api_key=KEY, transport=Scripted(ok("recorded")).transport(), recording="run",
                       load_env=False)
    recorder.client.chat.completions.create(model=recorder.model, messages=ASK)
    accesses = [connect("live", api_key=KEY, load_env=False), recorder, connect("offline", load_env=False),
                connect(recording="run", load_env=False)]  # no key, a recording: replay
    printed = capsys.readouterr().out
    for access, mode in zip(accesses, ("live", "record", "offline", "replay")):
        assert isinstance(access.client, openai.OpenAI) and access.mode == mode
        assert access.label.startswith(f"Model: {mode} |") and access.label in printed and KEY not in printed
    assert accesses[0].model == accesses[3].model == "openai/gpt-oss-120b"  # replay: the recording's model
    assert "https://api.groq.com/openai/v1" in accesses[0].label and "not a language model" in accesses[2].label
    assert "LLM_MODE not set" in accesses[3].label and (accesses[0].timeout, accesses[0].max_retries) == (60.0, 2)
    monkeypatch.setenv("GROQ_API_KEY", KEY)
    assert connect(recording="run", load_env=False, quiet=True).mode == "live"
    monkeypatch.setenv("LLM_MODE", "offline")
    assert connect(load_env=False, quiet=True).mode == "offline"  # LLM_MODE beats the key
    assert connect("live", load_env=False, quiet=True).mode == "live"  # the argument beats LLM_MODE
    monkeypatch.setenv("LLM_MODE", "sideways")
    with pytest.raises(SettingError) as raised:
        connect(load_env=False, quiet=True)
    assert (raised.value.setting, raised.value.value) == ("LLM_MODE", "sideways")


def test_keys_come_from_dotenv_without_overriding_the_environment_and_an_empty_export_is_unset(tmp_path, monkeypatch):
    env_file = tmp_path / ".env"
    env_file.write_text(f"GROQ_API_KEY={KEY}\nLLM_MODEL=from-dotenv\n", encoding="utf-8")
    monkeypatch.setenv("LLM_MODEL", "from-environment")
    monkeypatch.setenv("GROQ_API_KEY", "")
    access = connect(load_env=env_file, quiet=True)
    assert (access.mode, access.model, access.client.api_key) == ("live", "from-environment", KEY)
    assert "key from GROQ_API_KEY" in access.label and KEY not in access.label


def test_openai_and_a_custom_server_are_chosen_by_their_variables(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-" + "openai-key-0123456789abcdef")
    assert (lambda a: (a.provider, a.model))(connect(load_env=False, quiet=True)) == ("openai", "gpt-4o-mini")
    monkeypatch.setenv("LLM_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there: no list of models
    monkeypatch.setenv("LLM_MODEL", "llama3.2")
    custom = connect(load_env=False, quiet=True)
    assert (custom.mode, custom.provider, custom.model) == ("live", "custom", "llama3.2")
    monkeypatch.delenv("LLM_MODEL")
    with pytest.raises(UnknownModel) as raised:
        connect(load_env=False, quiet=True)
    assert_fields(raised.value, reason="unknown model", setting="LLM_MODEL", retry_can_help=False, listed=())


@pytest.mark.parametrize("model_id, name", [
    ("/home/teacher/models/gemma-3-270m-it-Q4_K_M.gguf", "gemma-3-270m-it-Q4_K_M"), ("~/models/tiny.gguf", "tiny"),
    ("C:\\Users\\t\\Llama-3.2-1B.Q4_K_M.gguf", "Llama-3.2-1B.Q4_K_M"), ("models/phi-3.gguf", "phi-3"),
    ("/srv/vllm/Qwen2.5-1.5B-Instruct", "Qwen2.5-1.5B-Instruct"), ("Qwen/Qwen2.5-1.5B-Instruct", None),
    ("llama3.2:latest", None), ("hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M", None)])
def test_a_model_id_is_shown_by_its_file_name_only_when_it_is_a_path(model_id, name):
    assert llm.shown(model_id) == (name or model_id) and llm.is_file_path(model_id) is (name is not None)


def test_a_missing_key_or_recording_says_what_to_set():
    for mode in ("live", "record"):
        with pytest.raises(MissingKey) as raised:
            connect(mode, recording="run", load_env=False, quiet=True)
        assert_fields(raised.value, reason="missing key", setting="GROQ_API_KEY", retry_can_help=False)
    with pytest.raises(RecordingMissing) as missing:
        connect("replay", recording="02_summary_memory_run", load_env=False, quiet=True)
    assert_fields(missing.value, reason="no recording", retry_can_help=False)
    assert "02_summary_memory_run.json" in str(missing.value)


@pytest.mark.parametrize("variable, value", [("LLM_TIMEOUT", "nan"), ("LLM_TIMEOUT", "inf"), ("LLM_TIMEOUT", "0"),
                                             ("LLM_TIMEOUT", "soon"), ("LLM_MAX_RETRIES", "-1"),
                                             ("LLM_MAX_RETRIES", "1.5"), ("LLM_SYSTEM_MESSAGES", "squash")])
def test_a_setting_that_means_nothing_is_refused_naming_it(monkeypatch, variable, value):
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingError) as raised:
        connect("offline", load_env=False, quiet=True)
    assert (raised.value.setting, raised.value.value) == (variable, value)
    with pytest.raises(SettingError) as argument:
        connect("offline", timeout=-1.0, max_retries=2, load_env=False, quiet=True)
    assert argument.value.setting == "timeout"  # the argument, not the variable


# ----- failures through the SDK's retries --------------------------------------------------------------------------

def test_each_sdk_call_counts_its_attempts_from_its_own_start_a_notebooks_own_calls_too():
    """A server killed mid-notebook: the error counts that call's attempts, not every attempt since connect()."""
    handler = Scripted(status(429), ok("after the rate limit"), ok(), httpx2.ConnectError("connection refused"))
    access = live(handler)
    assert access.complete(ASK).choices[0].message.content == "after the rate limit"
    access.client.chat.completions.create(model=access.model, messages=ASK)
    with pytest.raises(openai.APIConnectionError) as raised:
        access.client.chat.completions.create(model=access.model, messages=ASK)
    assert [r.headers["x-stainless-retry-count"] for r in handler.requests] == ["0", "1", "0", "0", "1", "2"]
    assert "after 3 attempts" in explain_error(raised.value, access)
    assert_fields(llm.model_error(raised.value, access), reason="no connection", attempts=3, status=None)
    assert [n.split(":")[0] for n in access.notices] == ["attempt 1 of 3", "attempt 1 of 3", "attempt 2 of 3"]


def test_429s_that_outlast_the_retries_say_to_wait_with_the_servers_words():
    access = live(Scripted(status(429, "Rate limit reached for model openai/gpt-oss-120b")))
    error = failure(access)
    assert_fields(error, reason="rate limit", status=429, attempts=3, retry_after=0.001, retry_can_help=True)
    assert "Rate limit reached" in str(error) and isinstance(error.__cause__, openai.RateLimitError)
    assert [n.split(":")[0] for n in access.notices] == ["attempt 1 of 3", "attempt 2 of 3"]
    assert "answered 429; the SDK tries again in 0.001 seconds" in access.notices[0]


@pytest.mark.parametrize("answer, fields", [
    (status(503, "upstream overloaded"), dict(reason="server error", status=503, attempts=2, retry_can_help=True)),
    (httpx2.ConnectError("Network is unreachable"), dict(reason="no connection", status=None, attempts=2)),
    (httpx2.Response(401, json={"error": {"message": "Invalid API Key"}}),
     dict(reason="rejected key", status=401, attempts=1, setting="GROQ_API_KEY", retry_can_help=False)),
    (httpx2.Response(404, json={"error": {"message": "no such model"}}), dict(reason="not found", setting="LLM_MODEL")),
    (httpx2.Response(400, json={"error": {"message": "reasoning_effort is not supported"}}),
     dict(reason="rejected request", status=400, setting="LLM_REASONING_EFFORT", retry_can_help=False)),
    (httpx2.Response(400, json={"error": {"message": "temperature must be at most 2"}}),
     dict(reason="rejected request", setting=None)),
    (httpx2.Response(418, json={"error": {"message": "teapot"}}), dict(reason="http error", status=418)),
])
def test_each_failure_is_explained_by_its_fields_and_said_once(answer, fields):
    access = live(Scripted(answer), max_retries=1)
    error = failure(access)
    assert_fields(error, **fields)
    assert KEY not in str(error) and explain_error(error, access) == str(error) and " or or " not in str(error)
    wrapped = SummariserError(f"the summariser raised ModelUnavailable while folding 2 messages: {error}")
    assert explain_error(wrapped, access) == str(wrapped)  # the memory's explanation, not a second one around it


def test_a_context_overflow_gives_the_servers_numbers_and_what_to_change():
    words = ("This model's maximum context length is 512 tokens. However, you requested 1566 tokens (542 in the "
             "messages, 1024 in the completion).")
    error = failure(live(Scripted(status(400, words))))
    assert_fields(error, reason="context overflow", status=400, setting="--n_ctx", retry_can_help=False)
    assert (error.context_tokens, error.prompt_tokens) == (512, 542) and isinstance(error, ContextOverflow)
    assert "longer than its context" in str(error) and "run the cell again" not in str(error).lower()


def test_no_configured_secret_reaches_an_explanation_whatever_its_length(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x9")
    monkeypatch.setenv("LLM_API_KEY", "tiny")
    error = failure(live(Scripted(status(500, f"bad key tiny, sk-x9 and {KEY}")), max_retries=0))
    assert "bad key [REDACTED], [REDACTED] and [REDACTED]" in str(error)


def test_an_empty_reply_cut_by_the_limit_is_retried_once_at_twice_the_limit():
    handler = Scripted(ok("", finish_reason="length"), ok("the answer"))
    access = live(handler)
    assert access.complete(ASK, max_tokens=300).choices[0].message.content == "the answer"
    assert [b["max_tokens"] for b in handler.bodies] == [300, 600] and "retrying once with 600" in access.notices[0]
    assert_fields(failure(live(Scripted(ok(None, finish_reason="length")))), reason="empty reply cut", attempts=2,
                  setting="max_tokens", retry_can_help=False)
    assert_fields(failure(live(Scripted(ok("  ")))), reason="empty reply", retry_can_help=True)  # not cut: no retry


# ----- the pages' call, as written, on every endpoint (issue 36) ---------------------------------------------------

@pytest.mark.parametrize("endpoint, sent, adapted", [
    (dict(), dict(max_tokens=1000, temperature=0, reasoning_effort="low"), ""),  # Groq's gpt-oss takes it all
    (dict(provider="openai", model="gpt-4o-mini"), dict(max_tokens=1000, temperature=0), "reasoning_effort left out"),
    (dict(provider="openai", model="o4-mini"), dict(max_completion_tokens=1000, reasoning_effort="low"),
     "max_tokens sent as max_completion_tokens, temperature left out"),
    (dict(base_url="http://127.0.0.1:9/v1", model="gpt-oss-20b"), dict(max_tokens=1000, temperature=0),
     "reasoning_effort left out (LLM_REASONING_EFFORT=on sends"),
    (dict(base_url="http://127.0.0.1:9/v1", model="gpt-oss-20b", reasoning="on"),
     dict(max_tokens=1000, temperature=0, reasoning_effort="low"), ""),
])
def test_the_pages_call_works_on_every_endpoint_and_the_mode_line_says_what_is_adapted(monkeypatch, endpoint, sent,
                                                                                        adapted):
    if endpoint.pop("reasoning", None):
        monkeypatch.setenv("LLM_REASONING_EFFORT", "on")
    handler = Scripted(ok())
    access = live(handler, **endpoint)
    access.client.chat.completions.create(model=access.model, **PAGE_CALL)
    assert {k: v for k, v in handler.bodies[0].items() if k not in ("model", "messages")} == sent
    assert (adapted in access.label if adapted else "adapted" not in access.label)


def test_the_pages_call_works_offline_and_in_replay():
    offline = connect("offline", load_env=False, quiet=True)
    reply = offline.client.chat.completions.create(model=offline.model, **PAGE_CALL)
    assert reply.model == MODEL_NAME and reply.choices[0].message.content.startswith(MARKER)
    assert "do not have your salary" in reply.choices[0].message.content and reply.usage.prompt_tokens > 0
    recorder = connect("record", base_url="http://127.0.0.1:9/v1", model="gpt-oss-20b", recording="run",
                       transport=Scripted(ok("recorded")).transport(), load_env=False, quiet=True)
    recorder.client.chat.completions.create(model=recorder.model, **PAGE_CALL)
    replay = connect("replay", recording="run", load_env=False, quiet=True)
    assert replay.client.chat.completions.create(model=replay.model, **PAGE_CALL).choices[0].message.content == (
        "recorded")  # recorded from a server that takes no reasoning_effort: replay leaves it out the same way
    assert replay.traits.adapt(dict(model="gpt-oss-20b", messages=ASK, max_tokens=5, temperature=0,
                                    reasoning_effort="low")) == dict(model="gpt-oss-20b", messages=ASK, max_tokens=5,
                                                                     temperature=0)


# ----- in a notebook: the message first, where it was raised without an absolute path ------------------------------

def test_an_explained_error_shows_its_message_first_and_no_absolute_path():
    access = live(Scripted(status(503)), max_retries=0)
    with pytest.raises(openai.APIStatusError) as raw:
        access.client.chat.completions.create(model=access.model, messages=ASK)
    lines = short_traceback("InternalServerError", explain_error(raw.value, access), raw.value.__traceback__)
    assert lines[0].startswith("InternalServerError: ") and "503" in lines[0] and "%tb" in lines[-1]
    assert "(_base_client.py, line " in lines[1]  # a library's file by its name alone, wherever the venv is
    with pytest.raises(SettingError) as ours:
        connect("sideways", load_env=False)
    lines = ours.value._render_traceback_()
    assert len(lines) == 3 and "(helpers/model/connect.py, line " in lines[1]  # inside it: relative to it
