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
from helpers.model import connect as llm
from helpers.model.chat import chat
from helpers.model.connect import (
    BadResponse,
    ModelUnavailable,
    RecordingMissing,
    connect,
)
from helpers.model.recordings import recording_path
from helpers.model.summarisers import make_summariser
from helpers.memory.state import load, to_dict
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
    memory = SummaryMemory(SYSTEM, make_summariser(access), 4, 2)
    chat(memory, TURNS[0], access)
    before = to_dict(memory)
    server.bad_body_next(1, kind)
    with pytest.raises(BadResponse, match="answered 200, but not with a chat completion") as raised:
        chat(memory, TURNS[1], access)
    assert to_dict(memory) == before
    assert "LLM_MODE=replay" in str(raised.value) and str(raised.value).count(". ") >= 3


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
    with pytest.raises(BadResponse, match="lone surrogate"):
        recorder.complete([{"role": "user", "content": "again"}], max_tokens=50)
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
    with pytest.raises(RecordingMissing, match=f"exchange 1 {problem}"):
        connect("replay", recording="run", load_env=False, quiet=True)


def test_a_recording_that_is_not_utf8_says_to_record_again():
    path = recording_path("run")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b'{"format": 1, "exchanges": [\xff]}')
    with pytest.raises(RecordingMissing, match="not valid JSON.*LLM_MODE=record"):
        connect("replay", recording="run", load_env=False, quiet=True)


# ----- slow servers and the timeout ----------------------------------------------------------------

def test_a_trickling_server_is_cut_off_at_the_timeout_and_the_message_names_llm_timeout(server):
    server.trickle = 0.02  # a byte every 20 ms: a full answer would take half a minute
    access = to(server, timeout=0.5)
    started = time.monotonic()
    with pytest.raises(ModelUnavailable) as raised:
        access.complete(HELLO, max_tokens=50)
    assert time.monotonic() - started < 6  # cut off long before the answer ends (a generous bound: no flakes)
    message = str(raised.value)
    assert "LLM_TIMEOUT=0.5 seconds (1 attempt)" in message and "LLM_TIMEOUT=300" in message


def test_a_server_trickling_its_headers_is_cut_off_at_the_timeout_too(server):
    server.trickle_headers = 0.15  # the status line and headers a byte every 150 ms: about 14 s before any body
    access = to(server, timeout=0.5)
    started = time.monotonic()
    with pytest.raises(ModelUnavailable) as raised:
        access.complete(HELLO, max_tokens=50)
    assert time.monotonic() - started < 6  # cut off long before the headers end (a generous bound: no flakes)
    assert "LLM_TIMEOUT=0.5 seconds (1 attempt)" in str(raised.value)


@pytest.mark.parametrize("value", ["nan", "inf", "1e400", "-5", "0", "soon"])
def test_a_timeout_that_bounds_nothing_is_refused_naming_llm_timeout(monkeypatch, value):
    monkeypatch.setenv("LLM_TIMEOUT", value)
    with pytest.raises(ValueError, match=r"LLM_TIMEOUT must be a positive number of seconds.*Fix LLM_TIMEOUT"):
        connect("offline", load_env=False, quiet=True)


def test_a_timeout_argument_is_checked_too():
    for value in (math.nan, math.inf, -1.0):
        with pytest.raises(ValueError, match="timeout must be a positive number"):
            connect("offline", timeout=value, load_env=False, quiet=True)


def test_a_long_retry_after_gives_the_real_attempts_and_the_real_wait(server):
    server.retry_after_next(1, 3600)
    with pytest.raises(ModelUnavailable) as raised:
        to(server, max_retries=2).complete(HELLO, max_tokens=50)
    message = str(raised.value)
    assert len(server.chat_requests) == 1  # the SDK did not retry...
    assert "after 1 attempt." in message and "3 attempts" not in message  # ...and the message says so
    assert "wait 60 minutes before trying again (Retry-After)" in message and "wait a minute" not in message
    assert "The server said: Rate limit reached. Please try again in 1h." in message


def test_a_retry_after_given_as_an_http_date_is_read_as_the_sdk_reads_it(server):
    from email.utils import formatdate

    to(server, "record", recording="run").complete(HELLO, max_tokens=50)
    server.retry_after_next(2, formatdate(time.time() + 3600, usegmt=True))
    with pytest.raises(ModelUnavailable) as raised:
        to(server, max_retries=2).complete(HELLO, max_tokens=50)
    assert "after 1 attempt." in str(raised.value) and "wait 60 minutes before trying again" in str(raised.value)
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
    message = str(raised.value)
    assert key not in message
    assert "rejected the API key (401). The server said: Invalid API Key: Bearer [REDACTED]. Check LLM_API_KEY" in message


@pytest.mark.parametrize("key", ["gsk_" + "ECHOEDKEY0123456789abcdefgh", "k3y"])
def test_a_key_echoed_in_a_401_never_reaches_a_notebooks_own_call_or_its_summariser_error(server, key):
    server.echo_key_in_401 = True
    access = to(server, api_key=key)

    def summarise(messages, existing_summary=None):  # as notebook 05 writes it: the SDK called directly
        response = access.client.chat.completions.create(model=access.model, messages=HELLO, max_tokens=10)
        return response.choices[0].message.content

    with pytest.raises(openai.AuthenticationError) as raw:
        summarise([])
    assert key not in str(raw.value) and key not in str(raw.value.body) and key not in raw.value.response.text
    assert "Invalid API Key: Bearer [REDACTED]" in str(raw.value)
    memory = SummaryBufferMemory(SYSTEM, summarise, 20, 2)
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
    with pytest.raises(ModelUnavailable, match="set LLM_MODEL") as raised:
        connect("live", base_url="http://teacher:hunter2@127.0.0.1:9/v1", load_env=False, quiet=True)
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

def test_a_server_that_drops_system_messages_is_noticed_on_the_turn_line_and_once_in_words(server):
    server.system_role = "none"  # llama.cpp's gemma format
    access = to(server)
    memory = SummaryMemory(SYSTEM, make_summariser(access), 4, 2)
    records = [chat(memory, text, access) for text in TURNS]
    assert all("FAR BELOW THE" in turn_line(r) for r in records)
    assert len([n for n in access.notices if "may not have reached the model" in n]) == 1
    assert "'gemma' format drops every one" in access.notices[0] and "--chat_format chatml" in access.notices[0]


def test_a_server_that_keeps_every_message_gets_no_warning(server):
    access = to(server)
    memory = SummaryMemory(SYSTEM, make_summariser(access), 4, 2)
    records = [chat(memory, text, access) for text in TURNS]
    assert not any("FAR BELOW" in turn_line(r) or "CUT" in turn_line(r) for r in records) and not access.notices


def test_replies_and_summaries_cut_at_max_tokens_are_reported(server):
    server.cut_at = 6
    access = to(server)
    memory = SummaryMemory(SYSTEM, make_summariser(access), 4, 2)
    records = [chat(memory, text, access) for text in TURNS[:4]]
    assert all("REPLY CUT at the token limit" in turn_line(r) for r in records)
    assert memory.fold_events[0].cut
    assert "SUMMARY CUT at the token limit" in fold_line(memory.fold_events[0], "summary memory")
    assert any("SUMMARY CUT" in line for line in turn_lines(records[3]))
    assert len([n for n in access.notices if "summary was cut" in n]) == 1


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
    assert lines[0].startswith("BadResponse: ") and "captive portal" in lines[0]
    assert len(lines) <= 3 and "%tb" in lines[-1]
    assert isinstance(BadResponse("x"), openai.OpenAIError)


def test_a_reply_that_takes_the_buffer_over_budget_is_reported():
    access = connect("offline", load_env=False, quiet=True)
    memory = SummaryBufferMemory(SYSTEM, make_summariser(access, "summary_buffer"), 60, 2)
    record = chat(memory, TURNS[0], access, max_tokens=400)
    assert record.snapshot.verbatim_tokens <= 60 and record.after_reply.verbatim_tokens > 60
    assert turn_line(record).endswith(f"| the reply took the buffer to {record.after_reply.verbatim_tokens}/60: "
                                      "OVER BUDGET until the next overflow")
    assert turn_line(record).startswith(f"[Turn 1] prompt_tokens: {record.prompt_tokens} | summary: 0 tokens | "
                                        f"buffer: {record.snapshot.verbatim_tokens}/60 tokens in 1 message | overflows: 0")


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
    with pytest.raises(OSError, match="No space"):
        recording.add("/v1/chat/completions", {"messages": [{"role": "user", "content": "more"}]}, {"choices": []},
                      status=200, endpoint="http://x/v1", secrets=[])
    assert path.read_bytes() == good and [p.name for p in path.parent.iterdir()] == ["run.json"]


def test_a_request_with_half_an_emoji_is_recorded_losslessly():
    from helpers.model.recordings import Recording

    path = recording_path("run")
    half = json.loads('"rocket \\ud83d"')
    Recording(path).add("/v1/chat/completions", {"messages": [{"role": "user", "content": half}]}, {"choices": []},
                        status=200, endpoint="http://x/v1", secrets=[])
    assert Recording.load(path).exchanges[0]["request"]["body"]["messages"][0]["content"] == half
