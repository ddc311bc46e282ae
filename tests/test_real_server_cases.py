"""What real OpenAI-compatible servers do, against a loopback server that does the same (issue 9).

Bad 200 bodies, slow servers, long Retry-After waits, keys echoed in errors, dropped system
messages, replies and summaries cut at max_tokens: each gives a clear error or a visible warning,
never a raw exception, a stored half-answer or a leaked secret. Every call here has a tiny timeout
and no retries unless retries are the point, so each test takes well under a few seconds.
"""
from __future__ import annotations

import json
import math
import time

import openai
import pytest

from helpers.display.lines import fold_line, turn_line, turn_lines
from helpers.lessons.data import lesson3, prompt
from helpers.memory.summary import SummaryMemory
from helpers.memory.summary_buffer import SummaryBufferMemory
from helpers.memory.types import SummariserError
from helpers.memory.types import SettingError
from helpers.model import connect as llm
from helpers.model.chat import chat
from helpers.model.connect import (
    BadResponse,
    ModelUnavailable,
    RecordingMissing,
    UnknownModel,
    connect,
)
from helpers.model.recordings import recording_path
from helpers.model.summarisers import make_summariser
from helpers.memory.state import load, to_dict
from tests.support.errors import assert_fields
from tests.support.loopback import KEY, connect_to
from tests.support.openai_compatible_server import OpenAICompatibleServer

SYSTEM = prompt("fincoach_system")
TURNS = lesson3()["summary_run"]["user_turns"]
HELLO = [{"role": "user", "content": "hello"}]

pytestmark = pytest.mark.usefixtures("model_env")


def to(server, mode="live", **kwargs) -> llm.ModelAccess:
    kwargs.setdefault("max_retries", 0)
    return connect_to(server, mode, **kwargs)


# ----- 200 answers that are not chat completions --------------------------------------------------

@pytest.mark.parametrize("kind", list(OpenAICompatibleServer.BAD_BODIES))
def test_a_200_that_is_not_a_chat_completion_is_a_clear_error_and_changes_nothing(server, kind):
    access = to(server)
    memory = SummaryMemory(SYSTEM, make_summariser(access), max_turns_before_summary=4, turns_to_keep_verbatim=2)
    chat(memory, TURNS[0], access)
    before = to_dict(memory)
    server.bad_body_next(1, kind)
    with pytest.raises(BadResponse) as raised:
        chat(memory, TURNS[1], access)
    assert to_dict(memory) == before
    assert_fields(raised.value, reason="bad response", status=200, retry_can_help=True)


def test_in_live_mode_the_recording_answers_a_bad_200(server):
    recorder = to(server, "record", recording="run")
    expected = recorder.complete(HELLO, max_tokens=50).choices[0].message.content
    server.bad_body_next(1, "html")
    live = to(server, recording="run")
    answer = live.complete(HELLO, max_tokens=50)
    assert answer.choices[0].message.content == expected
    assert live.notices == [f"live call failed (answered 200 without a usable chat completion); answered from "
                            f"recording {llm.display_path(recording_path('run'))}"]


def test_record_mode_never_stores_a_reply_with_half_an_emoji_and_leaves_no_temporary_file(server):
    recorder = to(server, "record", recording="run")
    recorder.complete(HELLO, max_tokens=50)
    path = recording_path("run")
    good = path.read_bytes()
    server.bad_body_next(1, "half emoji")
    with pytest.raises(BadResponse) as raised:
        recorder.complete([{"role": "user", "content": "again"}], max_tokens=50)
    assert "lone surrogate at character 7" in str(raised.value)  # what is wrong with the body, and where
    assert path.read_bytes() == good
    assert [p.name for p in path.parent.iterdir()] == ["run.json"]


@pytest.mark.parametrize("exchange, problem", [
    ({"request": {"path": "chat/completions", "body": {}}}, "has no response"),
    ({"request": {"path": "chat/completions", "body": {}}, "response": {"status_code": 200, "body": "ok"}},
     "has a response body that is str"),
    ("hello", "is a str"),
])
def test_replaying_a_damaged_recording_names_the_exchange(exchange, problem):
    path = recording_path("run")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"format": 1, "exchanges": [exchange]}), encoding="utf-8")
    with pytest.raises(RecordingMissing) as raised:
        connect("replay", recording="run", load_env=False, quiet=True)
    assert raised.value.reason == "no recording" and f"exchange 1 {problem}" in str(raised.value)  # which, and why


def test_a_recording_that_is_not_utf8_says_to_record_again():
    path = recording_path("run")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b'{"format": 1, "exchanges": [\xff]}')
    with pytest.raises(RecordingMissing) as raised:
        connect("replay", recording="run", load_env=False, quiet=True)
    assert raised.value.reason == "no recording" and "not valid JSON" in str(raised.value)


# ----- slow servers and the timeout ----------------------------------------------------------------

def test_a_trickling_server_is_cut_off_at_the_timeout_and_the_message_names_llm_timeout(server):
    server.trickle = 0.02  # a byte every 20 ms: a full answer would take half a minute
    access = to(server, timeout=0.5)
    started = time.monotonic()
    with pytest.raises(ModelUnavailable) as raised:
        access.complete(HELLO, max_tokens=50)
    assert time.monotonic() - started < 6  # cut off long before the answer ends (a generous bound: no flakes)
    assert_fields(raised.value, reason="timeout", status=None, attempts=1, setting="LLM_TIMEOUT", retry_can_help=True)
    assert "LLM_TIMEOUT=0.5 seconds" in str(raised.value)  # the bound it had


def test_a_server_trickling_its_headers_is_cut_off_at_the_timeout_too(server):
    server.trickle_headers = 0.15  # the status line and headers a byte every 150 ms: about 14 s before any body
    access = to(server, timeout=0.5)
    started = time.monotonic()
    with pytest.raises(ModelUnavailable) as raised:
        access.complete(HELLO, max_tokens=50)
    assert time.monotonic() - started < 6  # cut off long before the headers end (a generous bound: no flakes)
    assert_fields(raised.value, reason="timeout", attempts=1, setting="LLM_TIMEOUT")


def test_a_timed_out_attempt_that_the_sdk_retries_is_announced_with_what_to_change(server):
    server.trickle = 0.02
    access = to(server, timeout=0.3, max_retries=1)
    with pytest.raises(ModelUnavailable) as raised:
        access.complete(HELLO, max_tokens=50)
    assert raised.value.attempts == 2 and len(access.notices) == 1  # said as it happened, once per retry
    assert access.notices[0].startswith(f"attempt 1 of 2: {server.base_url} (model stand-in) sent no complete answer "
                                        "within LLM_TIMEOUT=0.3 seconds")
    assert "LLM_MAX_RETRIES=0" in access.notices[0] and "tries again in about 0.5 seconds" in access.notices[0]


@pytest.mark.parametrize("value", ["nan", "inf", "1e400", "-5", "0", "soon"])
def test_a_timeout_that_bounds_nothing_is_refused_naming_llm_timeout(monkeypatch, value):
    monkeypatch.setenv("LLM_TIMEOUT", value)
    with pytest.raises(SettingError) as raised:
        connect("offline", load_env=False, quiet=True)
    assert (raised.value.setting, raised.value.value) == ("LLM_TIMEOUT", value)  # the setting to fix


def test_a_timeout_argument_is_checked_too():
    for value in (math.nan, math.inf, -1.0):
        with pytest.raises(SettingError) as raised:
            connect("offline", timeout=value, load_env=False, quiet=True)
        assert raised.value.setting == "timeout"  # the argument, not the variable


def test_a_long_retry_after_gives_the_real_attempts_and_the_real_wait(server):
    server.retry_after_next(1, 3600)
    access = to(server, max_retries=2)
    with pytest.raises(ModelUnavailable) as raised:
        access.complete(HELLO, max_tokens=50)
    assert len(server.chat_requests) == 1 and not access.notices  # the SDK did not retry, so nothing announced it
    assert_fields(raised.value, reason="rate limit", status=429, attempts=1, retry_after=3600.0)
    assert "60 minutes" in str(raised.value) and "Rate limit reached. Please try again in 1h." in str(raised.value)


def test_a_retry_after_given_as_an_http_date_is_read_as_the_sdk_reads_it(server):
    from email.utils import formatdate

    to(server, "record", recording="run").complete(HELLO, max_tokens=50)
    server.retry_after_next(2, formatdate(time.time() + 3600, usegmt=True))
    with pytest.raises(ModelUnavailable) as raised:
        to(server, max_retries=2).complete(HELLO, max_tokens=50)
    assert raised.value.attempts == 1 and 3590 < raised.value.retry_after <= 3600
    live = to(server, max_retries=2, recording="run")  # the SDK will not retry: the recording answers at once
    assert live.complete(HELLO, max_tokens=50).choices[0].message.content
    assert "answered from recording" in live.notices[-1]


@pytest.mark.parametrize("headers, seconds", [({"retry-after": "30"}, 30.0), ({"retry-after-ms": "1500"}, 1.5),
                                              ({"retry-after": "1e400"}, math.inf), ({"retry-after": "nan"}, None),
                                              ({"retry-after": "inf"}, None), ({"retry-after": "soon"}, None)])
def test_retry_after_is_read_as_the_sdk_reads_it(headers, seconds):
    import httpx2

    from helpers.model.responses import retry_after_seconds

    assert retry_after_seconds(httpx2.Headers(headers)) == seconds


# ----- secrets ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("key", ["gsk_" + "ECHOEDKEY0123456789abcdefgh", "k3y"])
def test_a_key_echoed_in_a_401_never_reaches_the_message(server, key):
    server.echo_key_in_401 = True
    with pytest.raises(ModelUnavailable) as raised:
        to(server, api_key=key).complete(HELLO, max_tokens=10)
    assert_fields(raised.value, reason="rejected key", status=401, setting="LLM_API_KEY", retry_can_help=False)
    assert key not in str(raised.value) and "Invalid API Key: Bearer [REDACTED]" in str(raised.value)


@pytest.mark.parametrize("key", ["gsk_" + "ECHOEDKEY0123456789abcdefgh", "k3y"])
def test_a_key_echoed_in_a_401_never_reaches_a_notebooks_own_call_or_its_summariser_error(server, key):
    server.echo_key_in_401 = True
    server.expected_key = key
    access = to(server, api_key=key)
    server.expected_key = "another-key"  # the key is revoked after connect(): the calls themselves get the 401

    def summarise(messages, existing_summary=None):  # as notebook 05 writes it: the SDK called directly
        response = access.client.chat.completions.create(model=access.model, messages=HELLO, max_tokens=10)
        return response.choices[0].message.content

    with pytest.raises(openai.AuthenticationError) as raw:
        summarise([])
    assert key not in str(raw.value) and key not in str(raw.value.body) and key not in raw.value.response.text
    assert "Invalid API Key: Bearer [REDACTED]" in str(raw.value)
    memory = SummaryBufferMemory(SYSTEM, summarise, max_buffer_tokens=20, messages_to_compress_on_overflow=2)
    with pytest.raises(SummariserError) as raised:
        for text in ("a first question of some length " * 2, "a reply of some length " * 2, "another question"):
            memory.add_message("user" if len(memory.archive) % 2 == 0 else "assistant", text)
    assert key not in str(raised.value) and "Bearer [REDACTED]" in str(raised.value)


def test_credentials_in_the_base_url_are_never_printed_or_recorded(capsys):
    with OpenAICompatibleServer() as open_server:
        url = open_server.base_url.replace("http://", "http://teacher:hunter2@")
        access = connect("record", base_url=url, model="stand-in", recording="run", load_env=False, max_retries=0)
        access.complete(HELLO, max_tokens=20)
        printed = capsys.readouterr().out
        stored = recording_path("run").read_text(encoding="utf-8")
        assert "hunter2" not in printed + access.label + access.endpoint + stored and "teacher" not in stored
        assert open_server.base_url in printed and json.loads(stored)["endpoint"] == open_server.base_url


def test_credentials_in_the_base_url_never_reach_the_missing_model_message():
    with pytest.raises(UnknownModel) as raised:
        connect("live", base_url="http://teacher:hunter2@127.0.0.1:9/v1", load_env=False, quiet=True)
    assert_fields(raised.value, reason="unknown model", setting="LLM_MODEL", retry_can_help=False)
    assert "hunter2" not in str(raised.value) and "http://127.0.0.1:9/v1" in str(raised.value)


def test_percent_encoded_credentials_in_the_base_url_are_scrubbed_in_every_form_a_server_may_echo():
    from helpers.model.secrets import scrub_text, url_credentials

    secrets = url_credentials("http://te%40cher:hun%2Fter2@127.0.0.1:9/v1")
    echoed = "user te%40cher / te@cher, password hun%2Fter2 / hun/ter2, header Basic dGVAY2hlcjpodW4vdGVyMg=="
    assert scrub_text(echoed, secrets).count("[REDACTED]") == 5 and "te@cher" not in scrub_text(echoed, secrets)


def test_a_short_key_is_scrubbed_from_recordings(server):
    short = "k3y!"
    with OpenAICompatibleServer(expected_key=short) as keyed:
        recorder = connect("record", base_url=keyed.base_url, model="stand-in", api_key=short, recording="run",
                           load_env=False, quiet=True, max_retries=0)
        recorder.complete([{"role": "user", "content": f"my key is {short}"}], max_tokens=20)
    assert short not in recording_path("run").read_text(encoding="utf-8")


def test_an_empty_exported_key_is_treated_as_unset_so_env_is_used(monkeypatch, tmp_path):
    env_file = tmp_path / ".env"
    env_file.write_text("GROQ_API_KEY=gsk_fromthedotenvfile0123456789abcd\n", encoding="utf-8")
    monkeypatch.setenv("GROQ_API_KEY", "")
    access = connect(load_env=env_file, quiet=True)
    assert access.mode == "live" and "GROQ_API_KEY is set" in access.label


# ----- real servers' habits: dropped system messages, cut replies, parameters -------------------------

def test_a_server_that_keeps_every_message_gets_no_warning(server):
    server.billing_ratio, server.template_tokens = 1.2, 4  # its own tokenizer and chat template
    access = to(server)
    memory = SummaryMemory(SYSTEM, make_summariser(access), max_turns_before_summary=4, turns_to_keep_verbatim=2)
    records = [chat(memory, text, access) for text in TURNS]
    assert not any("NOT RECEIVED" in turn_line(r) or "CUT" in turn_line(r) for r in records) and not access.notices
    assert server.probes  # it was checked, and found to keep them


def test_replies_and_summaries_cut_at_max_tokens_are_reported(server):
    server.cut_at = 6
    access = to(server)
    memory = SummaryMemory(SYSTEM, make_summariser(access), max_turns_before_summary=4, turns_to_keep_verbatim=2)
    records = [chat(memory, text, access) for text in TURNS[:4]]
    assert all("REPLY CUT at the token limit" in turn_line(r) for r in records)
    assert memory.fold_events[0].cut
    assert "SUMMARY CUT at the token limit" in fold_line(memory.fold_events[0], "summary memory")
    assert any("SUMMARY CUT" in line for line in turn_lines(records[3]))
    assert len([n for n in access.notices if "summary was cut" in n]) == 1
    # called directly, as a student's class calls it, the summariser gives plain text; the memory reads the cut
    direct = make_summariser(access)([{"role": "user", "content": TURNS[0]}], None)
    assert type(direct) is str and direct


def test_a_local_server_gets_max_tokens_and_temperature_whatever_the_model_is_called(server):
    access = connect("live", base_url=server.base_url, model="o3-mini", api_key=KEY, load_env=False, quiet=True)
    access.complete(HELLO, max_tokens=30)
    body = server.chat_requests[-1]["body"]
    assert body["max_tokens"] == 30 and body["temperature"] == 0 and "max_completion_tokens" not in body
    openai_access = connect("live", provider="openai", model="o3-mini", api_key="sk-x", load_env=False, quiet=True)
    assert openai_access.token_limit_parameter == "max_completion_tokens" and not openai_access.accepts_temperature


# ----- notebooks: the helpful message first ----------------------------------------------------------

def test_the_projects_errors_show_their_message_first_with_a_short_traceback(server):
    server.bad_body_next(1, "html")
    try:
        to(server).complete(HELLO, max_tokens=10)
    except BadResponse as error:
        lines = error._render_traceback_()
        message = str(error)
    assert lines[0] == f"BadResponse: {message}"
    assert len(lines) <= 3 and "%tb" in lines[-1]
    assert isinstance(BadResponse("x"), openai.OpenAIError)


def test_a_reply_that_takes_the_buffer_over_budget_is_reported():
    access = connect("offline", load_env=False, quiet=True)
    budget = 25  # the first question fits; the stand-in's short reply takes the buffer over
    memory = SummaryBufferMemory(SYSTEM, make_summariser(access, "summary_buffer"), max_buffer_tokens=budget, messages_to_compress_on_overflow=2)
    record = chat(memory, TURNS[0], access, max_tokens=400)
    assert record.snapshot.verbatim_tokens <= budget and record.after_reply.verbatim_tokens > budget
    assert turn_line(record).endswith(f"| the reply took the buffer to {record.after_reply.verbatim_tokens}/{budget}: "
                                      "OVER BUDGET until the next overflow")
    assert turn_line(record).startswith(f"[Turn 1] prompt_tokens: {record.prompt_tokens} | summary: 0 tokens | "
                                        f"buffer: {record.snapshot.verbatim_tokens}/{budget} tokens in 1 message | overflows: 0")


def test_a_replay_sends_the_parameters_its_recording_was_made_with(server):
    gpt_oss = connect("record", base_url=server.base_url, model="gpt-oss-20b", api_key=KEY, recording="run",
                      load_env=False, quiet=True, max_retries=0)
    assert not gpt_oss.accepts_reasoning_effort  # a local server: no reasoning_effort, whatever the name
    gpt_oss.complete(HELLO, max_tokens=30, reasoning_effort="low")
    replay = connect("replay", recording="run", load_env=False, quiet=True)
    assert not replay.accepts_reasoning_effort
    replay.complete(HELLO, max_tokens=30, reasoning_effort="low")  # the same request, so it is found


def test_a_recording_save_that_fails_leaves_the_previous_file_whole(monkeypatch):
    import os

    from helpers.model.recordings import Recording

    path = recording_path("run")
    recording = Recording(path)
    recording.add("/v1/chat/completions", {"messages": HELLO}, {"choices": []}, status=200, endpoint="http://x/v1",
                  secrets=[])
    good = path.read_bytes()
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(28, "No space left on device")))
    with pytest.raises(OSError) as full:
        recording.add("/v1/chat/completions", {"messages": [{"role": "user", "content": "more"}]}, {"choices": []},
                      status=200, endpoint="http://x/v1", secrets=[])
    assert full.value.errno == 28
    assert path.read_bytes() == good and [p.name for p in path.parent.iterdir()] == ["run.json"]


def test_a_request_with_half_an_emoji_is_recorded_losslessly():
    from helpers.model.recordings import Recording

    path = recording_path("run")
    half = json.loads('"rocket \\ud83d"')
    Recording(path).add("/v1/chat/completions", {"messages": [{"role": "user", "content": half}]}, {"choices": []},
                        status=200, endpoint="http://x/v1", secrets=[])
    assert Recording.load(path).exchanges[0]["request"]["body"]["messages"][0]["content"] == half


# ----- a context too small, a model that is not there -----------------------------------------------------

def test_a_request_too_long_for_the_servers_context_says_what_to_change_and_changes_nothing(server):
    server.context_tokens = 700  # like --n_ctx 700
    access = to(server)
    memory = SummaryMemory(SYSTEM, make_summariser(access), max_turns_before_summary=4, turns_to_keep_verbatim=2)
    chat(memory, TURNS[0], access, max_tokens=100)
    before = to_dict(memory)
    with pytest.raises(llm.ContextOverflow) as raised:
        chat(memory, TURNS[1], access)  # the messages fit, a reply of max_tokens=1024 does not
    assert to_dict(memory) == before
    error = raised.value
    assert_fields(error, reason="context overflow", status=400, attempts=1, setting="--n_ctx", retry_can_help=False)
    assert error.context_tokens == 700 and error.prompt_tokens < 700 and isinstance(error, ModelUnavailable)
    assert "lower max_tokens" in str(error)  # the messages fit: a shorter reply would
    server.context_tokens = 100  # the messages alone are longer than the context
    with pytest.raises(llm.ContextOverflow) as alone:
        chat(memory, TURNS[1], access, max_tokens=10)
    assert alone.value.prompt_tokens > 100 and "lower max_tokens" not in str(alone.value)
    assert to_dict(memory) == before


def test_a_summariser_request_that_can_never_fit_is_marked_as_one_a_retry_cannot_fix(server):
    access = to(server)
    memory = SummaryMemory(SYSTEM, make_summariser(access), max_turns_before_summary=2, turns_to_keep_verbatim=1)
    memory.add_message("user", TURNS[0])
    memory.add_message("assistant", "A reply.")
    memory.add_message("user", TURNS[1])
    server.context_tokens = 300  # the chat still fits; the summariser's request (its prompt, max_tokens=1000) never
    with pytest.raises(SummariserError) as raised:
        memory.add_message("assistant", "Another reply.")
    causes = [raised.value]
    while causes[-1].__cause__ is not None:
        causes.append(causes[-1].__cause__)
    overflow = next(c for c in causes if isinstance(c, llm.ContextOverflow))  # what the memory can read
    assert overflow.retry_can_help is False and overflow.setting == "--n_ctx"
    assert raised.value.will_retry is False  # and the memory read it: it says the fold is not tried again
    assert len(memory.archive) == 4 and memory.summary is None  # nothing lost, nothing folded


def test_a_fold_that_can_never_fit_is_sent_once_not_after_every_reply_and_said_once(server):
    access = to(server)
    memory = SummaryMemory(SYSTEM, make_summariser(access), max_turns_before_summary=2, turns_to_keep_verbatim=1)
    server.context_tokens, server.cut_at = 1100, 12  # replies fit; a summariser request (max_tokens=1000) never
    records = [chat(memory, text, access, max_tokens=40) for text in TURNS[:5]]

    def summariser_calls() -> int:
        return sum(r["body"]["messages"][0]["content"] == prompt("summary_memory") for r in server.model_calls)

    assert summariser_calls() == 1 and memory.summary is None and len(memory.archive) == 10  # one try, nothing lost
    assert [bool(r.notes) for r in records] == [False, True, False, False, False]  # said once, at the failed fold
    note = records[1].notes[0]
    assert "fold not retried until something changes" in note and "retried later" not in note
    assert "Nothing was lost" in note and "Nothing was stored" not in note  # one account of what was kept
    assert memory.fold_waits
    memory.max_turns_before_summary = 3  # a change of settings could make it fit: tried once more
    chat(memory, TURNS[5], access, max_tokens=40)
    assert summariser_calls() == 2 and memory.fold_waits
    server.context_tokens = None  # the server restarted with a larger context; a new summariser is tried at once
    memory.summarise = make_summariser(to(server))
    memory.add_message("user", "One more question.")
    memory.add_message("assistant", "One more reply.")
    assert summariser_calls() == 3 and memory.summary is not None and not memory.fold_waits


def test_an_unknown_model_is_reported_with_the_names_the_server_lists(server):
    served = "/models/gemma-3-270m-q4_k_m.gguf"  # llama-cpp-python lists the path it loaded
    server.models = [served]
    with pytest.raises(UnknownModel) as raised:
        to(server)  # asks for "stand-in"
    assert_fields(raised.value, reason="unknown model", setting="LLM_MODEL", retry_can_help=False)
    assert raised.value.listed == ("gemma-3-270m-q4_k_m",) and "/models/" not in str(raised.value)  # by file name
    by_file_name = connect("live", base_url=server.base_url, model="gemma-3-270m-q4_k_m", api_key=KEY,
                           load_env=False, quiet=True)
    assert by_file_name.model == "gemma-3-270m-q4_k_m" and "| gemma-3-270m-q4_k_m |" in by_file_name.label
    only_one = connect("live", base_url=server.base_url, api_key=KEY, load_env=False, quiet=True)  # LLM_MODEL unset
    assert only_one.model == "gemma-3-270m-q4_k_m" and "(the one model the server lists" in only_one.label
    server.models = ["llama3.2:latest", "qwen2.5:7b"]
    ollama = connect("live", base_url=server.base_url, model="llama3.2", api_key=KEY, load_env=False, quiet=True)
    assert ollama.model == "llama3.2" and "llama3.2 (served as llama3.2:latest)" in ollama.label  # the tag left off
    with pytest.raises(UnknownModel) as unset:
        connect("live", base_url=server.base_url, api_key=KEY, load_env=False, quiet=True)
    assert unset.value.listed == ("llama3.2:latest", "qwen2.5:7b")


def test_a_server_that_lists_no_models_is_taken_at_its_word(server):
    assert server.models is None  # GET /v1/models answers 404
    assert to(server).model == "stand-in"
