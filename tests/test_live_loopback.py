"""Live mode end to end over real HTTP, against an OpenAI-compatible server on 127.0.0.1 (issues 3 and 5).

Live mode is pointed at the server by base URL, as a user points it at Ollama or vLLM. The
server serves the offline stand-in and answers 429/5xx when told to. No traffic leaves loopback.
"""
from __future__ import annotations

import json

import pytest

from helpers.display.lines import turn_lines
from helpers.lessons.data import lesson3, lesson4, prompt
from helpers.memory.summary import SummaryMemory
from helpers.memory.summary_buffer import SummaryBufferMemory
from helpers.model import connect as llm
from helpers.model.chat import chat
from helpers.model.connect import ModelUnavailable, connect
from helpers.model import served
from helpers.model.errors import Reason
from helpers.model.recordings import recording_path
from helpers.model.summarisers import make_summariser
from helpers.memory.state import save, to_dict
from tests.support.errors import assert_fields
from tests.support.loopback import KEY, connect_to
from tests.support.openai_compatible_server import OpenAICompatibleServer

SYSTEM = prompt("fincoach_system")
SALARY = lesson3()["summary_run"]["salary_marker"]


pytestmark = pytest.mark.usefixtures("model_env")


def to(server, mode="live", **kwargs) -> llm.ModelAccess:
    return connect_to(server, mode, **kwargs)


def run_lesson3(access, turns=None):
    memory = SummaryMemory(SYSTEM, make_summariser(access, "summary_memory"), max_turns_before_summary=4, turns_to_keep_verbatim=2)
    records = [chat(memory, text, access, watch=SALARY) for text in (turns or lesson3()["summary_run"]["user_turns"])]
    return memory, records


def test_live_mode_by_base_url_runs_six_turns_over_http(server, monkeypatch, capsys):
    monkeypatch.setenv("LLM_BASE_URL", server.base_url)  # configured as a user would, by environment
    monkeypatch.setenv("LLM_MODEL", "stand-in")
    monkeypatch.setenv("LLM_API_KEY", KEY)
    access = connect(load_env=False)  # no mode chosen: a configured server means live
    label = capsys.readouterr().out.strip()
    assert access.mode == "live" and label == access.label
    assert f"OpenAI-compatible server {server.base_url} | stand-in | key from LLM_API_KEY" in label
    assert KEY not in label
    memory, records = run_lesson3(access)
    assert [r.watch_in_verbatim for r in records] == [True] * 4 + [False] * 2
    assert "₹1,20,000" in records[-1].reply
    assert len(server.model_calls) == 6 + 2  # six replies and two summaries (and the probes of what arrives)
    assert all(r["headers"]["authorization"] == f"Bearer {KEY}" for r in server.chat_requests)
    summary_body = server.model_calls[4]["body"]  # after turn 4's reply comes the first summary
    assert summary_body["messages"][0]["content"] == prompt("summary_memory")


def test_summary_buffer_memory_runs_live_over_http(server):
    access = to(server)
    memory = SummaryBufferMemory(SYSTEM, make_summariser(access, "summary_buffer"), max_buffer_tokens=140, messages_to_compress_on_overflow=4)
    records = [chat(memory, text, access) for text in lesson4()["buffer_run"]["user_turns"]]
    assert memory.overflow_count >= 1 and sum(len(r.fold_events) for r in records) == memory.overflow_count
    assert records[0].prompt_tokens == records[0].snapshot.request_tokens


def test_a_429_over_http_is_retried_then_succeeds(server):
    server.fail_next(2, status=429)
    reply = to(server).complete([{"role": "user", "content": "hello"}], max_tokens=100)
    assert reply.choices[0].message.content.startswith("[offline stand-in]")
    assert [r["headers"]["x-stainless-retry-count"] for r in server.chat_requests] == ["0", "1", "2"]


def test_5xx_over_http_exhausting_the_retries_explains_itself(server):
    server.fail_always(502)
    with pytest.raises(ModelUnavailable) as raised:
        to(server, max_retries=1).complete([{"role": "user", "content": "hello"}], max_tokens=100)
    assert len(server.chat_requests) == 2
    assert_fields(raised.value, reason="server error", status=502, attempts=2, retry_can_help=True)


def test_an_empty_reply_over_http_is_retried_with_a_larger_limit(server):
    server.empty_next(1)
    reply = to(server).complete([{"role": "user", "content": "hello"}], max_tokens=100)
    assert reply.choices[0].message.content
    assert [r["body"]["max_tokens"] for r in server.chat_requests] == [100, 200]


def test_a_wrong_key_over_http_names_the_variable(server):
    with pytest.raises(ModelUnavailable) as raised:
        connect("live", base_url=server.base_url, model="stand-in", api_key="wrong-key-123456", load_env=False,
                quiet=True).complete([{"role": "user", "content": "hi"}], max_tokens=10)
    assert_fields(raised.value, reason="rejected key", status=401, setting="LLM_API_KEY", retry_can_help=False)
    assert "wrong-key-123456" not in str(raised.value)


@pytest.mark.parametrize("listed", [["stand-in"], None], ids=["lists models", "no list"])
@pytest.mark.parametrize("model", [None, "stand-in"], ids=["LLM_MODEL unset", "LLM_MODEL set"])
@pytest.mark.parametrize("key", ["wrong-key-123456", None], ids=["wrong key", "no key"])
def test_a_key_refused_at_the_list_of_models_is_said_as_a_rejected_key_whatever_llm_model_is(server, listed, model,
                                                                                              key):
    server.models = listed
    with pytest.raises(ModelUnavailable) as raised:
        connect("live", base_url=server.base_url, model=model, api_key=key, load_env=False, quiet=True)
    assert_fields(raised.value, reason=Reason.REJECTED_KEY, status=401, setting="LLM_API_KEY", retry_can_help=False)
    assert [r["path"] for r in server.received] == ["/v1/models"]  # said at connect(), before any chat call
    assert (key or "no-key-needed") not in str(raised.value)
    assert ("LLM_API_KEY is not set" in str(raised.value)) is (key is None)


def test_a_model_file_path_never_reaches_an_output_a_recording_or_a_saved_state(server, capsys, tmp_path):
    folder = "/home/teacher/models/"
    server.models, server.echo_model = [folder + "gemma-3-270m-it-Q4_K_M.gguf"], True  # as llama-cpp-python lists it
    recorder = to(server, "record", recording="run", model=None, quiet=False)  # LLM_MODEL unset, as the README says
    memory, records = run_lesson3(recorder)
    save(memory, tmp_path / "state.json")
    options = recorder.request_options(memory.get_messages_for_api(), max_tokens=10)
    shown = [capsys.readouterr().out, recorder.label, str(options), recording_path("run").read_text(encoding="utf-8"),
             (tmp_path / "state.json").read_text(encoding="utf-8"), *("\n".join(turn_lines(r)) for r in records),
             *(r.model for r in records)]
    assert not [text for text in shown if folder in text]
    assert recorder.model == "gemma-3-270m-it-Q4_K_M" and {r.model for r in records} == {recorder.model}
    assert {r["body"]["model"] for r in server.chat_requests} == {folder + "gemma-3-270m-it-Q4_K_M.gguf"}
    replayed = [turn_lines(r) for r in run_lesson3(connect("replay", recording="run", load_env=False, quiet=True))[1]]
    assert replayed == [turn_lines(r) for r in records]  # the recording answers by the file name


def test_a_stopped_server_is_a_connection_error_with_what_to_do(server):
    access = to(server, max_retries=0)
    server.stop()
    with pytest.raises(ModelUnavailable) as raised:
        access.complete([{"role": "user", "content": "hello"}], max_tokens=10)
    assert_fields(raised.value, reason="no connection", status=None, attempts=1, setting="LLM_BASE_URL")


# ----- the instructor's flow (issue 5): record before class, fall back to it in class -------------

def test_record_before_class_then_a_rate_limited_or_dead_endpoint_is_answered_from_the_recording(server, capsys):
    recorder = to(server, "record", recording="02_summary_memory_run")
    recorded_memory, recorded = run_lesson3(recorder)
    path = recording_path("02_summary_memory_run")
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert len(saved["exchanges"]) == 8 and KEY not in path.read_text(encoding="utf-8")
    requests_while_recording = len(server.chat_requests)

    # in class: the same code, live, while the endpoint rate-limits every call
    server.fail_always(429)
    in_class = to(server, recording="02_summary_memory_run", quiet=False)
    memory, records = run_lesson3(in_class)
    out = capsys.readouterr().out
    assert [turn_lines(r) for r in records] == [turn_lines(r) for r in recorded]
    assert to_dict(memory) == to_dict(recorded_memory)
    fallback_lines = [line for line in out.splitlines() if line.startswith("live call failed")]
    assert len(fallback_lines) == 8
    assert all(line.startswith("live call failed (429); answered from recording ")
               and line.endswith("02_summary_memory_run.json") for line in fallback_lines)
    assert len(server.chat_requests) - requests_while_recording == 8 * 3  # every call tried live 3 times first
    assert all(r.notices for r in records)  # each turn's record says where its answer came from

    # and with the endpoint gone altogether
    server.stop()
    offline_class = to(server, recording="02_summary_memory_run", max_retries=0)
    memory, records = run_lesson3(offline_class, lesson3()["summary_run"]["user_turns"][:2])
    assert [turn_lines(r) for r in records] == [turn_lines(r) for r in recorded[:2]]
    assert all("connection error" in notice for notice in offline_class.notices)


@pytest.mark.parametrize("model_id, shown", [
    ("/home/teacher/models/gemma-3-270m-it-Q4_K_M.gguf", "gemma-3-270m-it-Q4_K_M"),  # llama-cpp-python
    ("C:\\Users\\teacher\\models\\Llama-3.2-1B.Q4_K_M.gguf", "Llama-3.2-1B.Q4_K_M"),  # the same on Windows
    ("./models/phi-3-mini.gguf", "phi-3-mini"), ("models/phi-3-mini.gguf", "phi-3-mini"),
    ("/srv/vllm/Qwen2.5-1.5B-Instruct", "Qwen2.5-1.5B-Instruct"),  # vLLM given a folder
    ("~/models/tiny.gguf", "tiny"),
    ("llama3.2:latest", "llama3.2:latest"), ("Qwen/Qwen2.5-1.5B-Instruct", "Qwen/Qwen2.5-1.5B-Instruct"),
    ("gpt-4o-mini", "gpt-4o-mini"), ("hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M",
                                     "hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M"),
])
def test_a_model_id_is_shown_by_its_file_name_only_when_it_is_a_path(model_id, shown):
    assert served.shown(model_id) == shown
    assert served.is_file_path(model_id) is (shown != model_id)


def test_llm_model_set_to_the_listed_path_is_used_by_its_file_name_and_sent_as_the_path(server):
    path = "/home/teacher/models/gemma-3-270m-it-Q4_K_M.gguf"
    server.models = [path]
    access = to(server, model=path)  # copied from the server's /v1/models
    assert access.model == "gemma-3-270m-it-Q4_K_M" and path not in access.label
    access.complete([{"role": "user", "content": "hello"}], max_tokens=10)
    assert server.model_calls[-1]["body"]["model"] == path


def test_a_key_refused_with_403_at_the_list_of_models_is_a_rejected_key_too():
    class Forbidding(OpenAICompatibleServer):
        def _answer(self, method, path, headers, content):
            return 403, {"error": {"message": "Forbidden", "type": "permission_denied"}}, {}

    with Forbidding() as forbidding:
        with pytest.raises(ModelUnavailable) as raised:
            connect("live", base_url=forbidding.base_url, api_key="k", load_env=False, quiet=True)
    assert_fields(raised.value, reason=Reason.REJECTED_KEY, status=403, setting="LLM_API_KEY", retry_can_help=False)
