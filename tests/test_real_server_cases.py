"""What real OpenAI-compatible servers do, against a loopback server that does the same, over real HTTP through the
SDK: bad 200 bodies, slow servers, long waits, a small context, models listed by path, chat formats that drop system
messages (and LLM_SYSTEM_MESSAGES that fixes it), and the instructor's flow: record before class, fall back in class,
replay with no endpoint. Each is a clear error or a visible line, never a raw exception or a stored half-answer."""
from __future__ import annotations

import json
import time
from email.utils import formatdate

import pytest

from helpers.display.lines import fold_line, turn_line, turn_lines
from helpers.lessons.data import lesson3, prompt
from helpers.memory.state import save, to_dict
from helpers.memory.summary import SummaryMemory
from helpers.model.chat import chat
from helpers.model.connect import connect
from helpers.model.errors import ContextOverflow
from helpers.model.recordings import recording_path
from helpers.model.summarisers import make_summariser
from tests.support.mock_api import assert_fields
from tests.support.loopback import KEY, connect_to
from tests.support.openai_compatible_server import BAD_BODIES

SYSTEM, TURNS = prompt("fincoach_system"), lesson3()["summary_run"]["user_turns"]
SALARY, HELLO = lesson3()["summary_run"]["salary_marker"], [{"role": "user", "content": "hello"}]

pytestmark = pytest.mark.usefixtures("model_env")


def to(server, mode="live", **kwargs):
    kwargs.setdefault("max_retries", 0)
    return connect_to(server, mode, **kwargs)


def run(access, turns=TURNS, max_tokens=1024, **settings):
    """Lesson 3's run (summarise after 4 turns, keep 2) through chat(): the records, the summariser, the memory."""
    summarise = make_summariser(access, "summary_memory")
    memory = SummaryMemory(SYSTEM, summarise, **(settings or dict(max_turns_before_summary=4,
                                                                  turns_to_keep_verbatim=2)))
    return [chat(memory, text, access, watch=SALARY, watch_label="salary", max_tokens=max_tokens)
            for text in turns], summarise, memory


def error_of(call, *args, **kwargs) -> BaseException:
    with pytest.raises(Exception) as raised:
        call(*args, **kwargs)
    return raised.value


@pytest.mark.parametrize("kind", list(BAD_BODIES))
def test_a_200_that_is_not_a_chat_completion_is_a_clear_error_and_changes_nothing(server, kind):
    _, _, memory = run(access := to(server), TURNS[:1])
    before = to_dict(memory)
    server.answer_next(f"bad:{kind}")
    assert_fields(error_of(chat, memory, TURNS[1], access), reason="bad response", status=200, retry_can_help=True)
    assert to_dict(memory) == before


@pytest.mark.parametrize("where", ["trickle", "trickle_headers"])
def test_a_server_trickling_its_answer_is_cut_off_at_the_timeout_which_bounds_the_whole_answer(server, where):
    setattr(server, where, 0.05)  # a byte every 50 ms: a whole answer would take many seconds
    access = to(server, timeout=0.4, max_retries=1)
    error = error_of(access.complete, HELLO, max_tokens=50)  # an answer that came whole would raise nothing
    assert_fields(error, reason="timeout", status=None, attempts=2, setting="LLM_TIMEOUT", retry_can_help=True)
    assert "LLM_TIMEOUT=0.4 seconds" in str(error) and len(access.notices) == 1  # the retry said as it happened
    assert access.notices[0].startswith(f"attempt 1 of 2: {server.base_url} (model stand-in) sent no complete answer")


def test_a_long_retry_after_is_reported_with_the_real_attempts_and_wait_and_a_date_is_read_too(server):
    server.answer_next("wait:3600")
    error = error_of(to(server, max_retries=2).complete, HELLO, max_tokens=50)
    assert_fields(error, reason="rate limit", status=429, attempts=1, retry_after=3600.0)  # the SDK did not retry
    assert "60 minutes" in str(error) and "Please try again in 1h." in str(error)
    server.answer_next(f"wait:{formatdate(time.time() + 3600, usegmt=True)}")
    assert 3590 < error_of(to(server, max_retries=2).complete, HELLO).retry_after <= 3600


def test_a_request_too_long_for_the_servers_context_says_what_to_change_and_changes_nothing(server):
    access = to(server)
    _, _, memory = run(access, TURNS[:1])
    server.context_tokens = 700  # like --n_ctx 700
    before = to_dict(memory)
    error = error_of(chat, memory, TURNS[1], access)  # the messages fit, a reply of max_tokens=1024 does not
    assert_fields(error, reason="context overflow", status=400, attempts=1, setting="--n_ctx", retry_can_help=False)
    assert error.context_tokens == 700 and error.prompt_tokens < 700 and "lower max_tokens" in str(error)
    server.context_tokens = 100
    alone = error_of(chat, memory, TURNS[1], access, max_tokens=10)  # the messages alone are longer
    assert isinstance(alone, ContextOverflow) and alone.prompt_tokens > 100 and "lower max_tokens" not in str(alone)
    assert to_dict(memory) == before


def test_a_fold_that_can_never_fit_is_sent_once_and_said_once_and_nothing_is_lost(server):
    server.context_tokens, server.cut_at = 1100, 12  # replies fit; a summariser request (max_tokens=1000) never
    access = to(server)
    records, _, memory = run(access, TURNS[:5], 40, max_turns_before_summary=2, turns_to_keep_verbatim=1)
    summaries = [r for r in server.model_calls if r["body"]["messages"][0]["content"] == prompt("summary_memory")]
    assert len(summaries) == 1 and memory.summary is None and len(memory.archive) == 10 and memory.fold_waits
    assert [bool(r.notes) for r in records] == [False, True, False, False, False]
    assert "fold not retried until something changes" in records[1].notes[0]
    overflow = error_of(make_summariser(access), [{"role": "user", "content": TURNS[0]}])
    assert isinstance(overflow, ContextOverflow) and overflow.retry_can_help is False  # what the memory reads
    assert all("REPLY CUT at the token limit" in turn_line(r) for r in records)


def test_a_cut_summary_is_flagged_on_its_fold(server):
    server.cut_at = 6
    _, summarise, memory = run(to(server), TURNS[:4])
    assert memory.fold_events[0].cut and "SUMMARY CUT at the token limit" in fold_line(memory.fold_events[0],
                                                                                       "summary memory")
    assert type(summarise([{"role": "user", "content": TURNS[0]}])) is str  # called directly: plain text


# ----- which model a local server serves ----------------------------------------------------------------------------

def test_a_model_listed_by_its_file_path_is_named_by_its_file_everywhere_and_sent_as_the_path(server, tmp_path,
                                                                                             capsys):
    folder = "/home/teacher/models/"
    server.models, server.echo_model = [folder + "gemma-3-270m-it-Q4_K_M.gguf"], True  # as llama-cpp-python does
    recorder = to(server, "record", recording="run", model=None, quiet=False)  # LLM_MODEL unset, as the README says
    assert recorder.model == "gemma-3-270m-it-Q4_K_M" and "(the one model the server lists, named by its file)" in (
        recorder.label)
    records, _, memory = run(recorder, TURNS[:5])
    shown = [capsys.readouterr().out, str(recorder.traits.adapt({"model": recorder.model, "messages": HELLO})), *map(turn_line, records),
             recording_path("run").read_text(encoding="utf-8"), save(memory, tmp_path / "s.json").read_text()]
    assert not [text for text in shown if folder in text] and {r.model for r in records} == {recorder.model}
    assert {r["body"]["model"] for r in server.chat_requests} == {folder + "gemma-3-270m-it-Q4_K_M.gguf"}
    replayed = run(connect("replay", recording="run", load_env=False, quiet=True), TURNS[:5])[0]
    assert [turn_lines(r) for r in replayed] == [turn_lines(r) for r in records]  # answered by the file name
    assert to(server, model=folder + "gemma-3-270m-it-Q4_K_M.gguf").model == "gemma-3-270m-it-Q4_K_M"


def test_an_unknown_model_is_reported_with_what_the_server_lists(server):
    server.models = ["/models/gemma-3-270m-q4_k_m.gguf"]
    error = error_of(to, server)  # asks for "stand-in"
    assert_fields(error, reason="unknown model", setting="LLM_MODEL", retry_can_help=False,
                  listed=("gemma-3-270m-q4_k_m",))
    assert "/models/" not in str(error)
    server.models = ["llama3.2:latest", "qwen2.5:7b"]
    assert to(server, model="llama3.2").model == "llama3.2"  # Ollama's tag left off
    assert error_of(to, server, model=None).listed == ("llama3.2:latest", "qwen2.5:7b")  # several: name one


@pytest.mark.parametrize("key", ["wrong-key-123456", None])
@pytest.mark.parametrize("model", [None, "stand-in"])
def test_a_key_refused_at_the_list_of_models_is_a_rejected_key_whatever_llm_model_is(server, key, model):
    server.models = ["stand-in"]
    error = error_of(connect, "live", base_url=server.base_url, model=model, api_key=key, load_env=False, quiet=True)
    assert_fields(error, reason="rejected key", status=401, setting="LLM_API_KEY", retry_can_help=False)
    assert [r["path"] for r in server.received] == ["/v1/models"] and (key or "no-key-needed") not in str(error)
    assert ("LLM_API_KEY is not set" in str(error)) is (key is None)


# ----- system messages a chat format drops (llama-cpp-python 0.3.36's, with a tokenizer unlike tiktoken) -----------

def dropping(server, chat_format, ratio=1.2):
    server.chat_format, server.billing_ratio, server.template_tokens = chat_format, ratio, 4
    return connect_to(server)


def warnings(access, start="WARNING"):
    return [n for n in access.notices if n.startswith(start)]


def test_a_format_that_drops_every_system_message_is_named_on_each_request_chat_and_summariser(server):
    access = dropping(server, "gemma")
    records, summarise, _ = run(access)
    assert records[0].not_received == ("the system prompt",)
    assert turn_line(records[0]).endswith("| NOT RECEIVED BY THE MODEL: the system prompt")
    assert records[4].not_received == ("the system prompt", "the summary")  # the first turn with a summary
    assert [call.not_received for call in summarise.calls] == [("the summariser prompt",)] * 2
    assert len(warnings(access)) == 1 and "drops every system message" in warnings(access)[0]
    assert "--chat_format llama-3" in warnings(access)[0] and "LLM_SYSTEM_MESSAGES=user" in warnings(access)[0]
    assert len(warnings(access, "NOT RECEIVED")) == 6 + 2 and SALARY not in records[-1].reply


@pytest.mark.parametrize("chat_format, ratio", [("chatml", 1.2), ("llama-2", 0.6), ("chatml", 1.5)])
def test_a_format_that_keeps_only_the_first_is_silent_until_the_summary_comes(server, chat_format, ratio):
    access = dropping(server, chat_format, ratio)
    records, summarise, _ = run(access)
    assert [r.not_received for r in records] == [()] * 4 + [("the summary",)] * 2
    assert all(call.not_received == () for call in summarise.calls)  # one system message: it arrives
    assert "keeps only the first" in warnings(access)[0] and "LLM_SYSTEM_MESSAGES=merge" in warnings(access)[0]


def test_a_format_that_keeps_every_message_gets_no_warning_and_a_few_probes(server):
    access = dropping(server, "llama-3")
    records, _, _ = run(access)
    assert not any(r.not_received for r in records) and not access.notices
    assert len(server.probes) == 2 * (1 + 2)  # a pair per system message of each request shape, for the whole run


def test_a_notebooks_own_sdk_calls_are_checked_too(server):
    access = dropping(server, "chatml")
    request = [{"role": "system", "content": SYSTEM}, {"role": "system", "content": "Summary: the user earns a lot."},
               {"role": "user", "content": TURNS[5]}]
    access.client.chat.completions.create(model=access.model, messages=request, max_tokens=100)
    assert access.trace.not_received == (1,) and warnings(access, "NOT RECEIVED") == [
        "NOT RECEIVED: the server dropped system message 2 of 2 ('Summary: the user earns a lot.') from this request; "
        "the model answered without it."]


@pytest.mark.parametrize("chat_format, setting", [("chatml", "merge"), ("gemma", "user")])
def test_the_readmes_setting_gets_every_system_text_to_the_model_and_the_mode_line_says_so(server, monkeypatch,
                                                                                           chat_format, setting):
    monkeypatch.setenv("LLM_SYSTEM_MESSAGES", setting)
    access = dropping(server, chat_format)
    assert f"(LLM_SYSTEM_MESSAGES={setting})" in access.label
    records, summarise, _ = run(access)
    assert not any(r.not_received for r in records) and not any(c.not_received for c in summarise.calls)
    assert not warnings(access, "NOT RECEIVED") and len(warnings(access, "sent adapted")) >= 2
    turn_6 = [c for c in server.model_calls if c["body"]["messages"][0]["content"].startswith(SYSTEM)][-1]["body"][
        "messages"]
    assert [m["role"] for m in turn_6].count("system") == (setting == "merge")
    assert records[-1].snapshot.summary in turn_6[0]["content"] and turn_6[0]["content"].startswith(SYSTEM)
    if setting == "merge":  # the stand-in (the server's "model") reads a summary merged into the prompt
        assert "₹1,20,000" in records[-1].reply


def test_merge_is_not_enough_for_a_format_with_no_system_role_and_the_warning_says_what_is(server, monkeypatch):
    monkeypatch.setenv("LLM_SYSTEM_MESSAGES", "merge")
    records, _, _ = run(access := dropping(server, "gemma"), TURNS[:5])
    assert records[4].not_received == ("the system prompt", "the summary")  # both went in the one merged message
    assert "LLM_SYSTEM_MESSAGES=user" in warnings(access)[0]


# ----- the instructor's flow: record before class, fall back in class, replay with no endpoint ----------------------

def test_record_before_class_then_fall_back_on_a_rate_limited_or_dead_endpoint_then_replay(server, monkeypatch,
                                                                                           capsys):
    monkeypatch.setenv("LLM_SYSTEM_MESSAGES", "merge")  # a recording holds the requests as written: no setting needed
    server.chat_format = "chatml"
    recorded, _, recorded_memory = run(to(server, "record", recording="02_summary_memory_run"))
    stored = recording_path("02_summary_memory_run").read_text(encoding="utf-8")
    assert len(json.loads(stored)["exchanges"]) == 8 and KEY not in stored
    turn_6 = [e for e in json.loads(stored)["exchanges"] if e["request"]["body"]["messages"][0]["content"] == SYSTEM
              ][-1]
    assert [m["role"] for m in turn_6["request"]["body"]["messages"]][:2] == ["system"] * 2  # as written, not merged
    monkeypatch.delenv("LLM_SYSTEM_MESSAGES")
    before, probes, server.always = len(server.chat_requests), len(server.probes), "429"
    in_class = to(server, recording="02_summary_memory_run", max_retries=2, quiet=False)
    records, _, memory = run(in_class)
    fallbacks = [line for line in capsys.readouterr().out.splitlines() if line.startswith("live call failed")]
    assert [turn_lines(r) for r in records] == [turn_lines(r) for r in recorded] and to_dict(memory) == to_dict(
        recorded_memory)
    assert len(fallbacks) == 8 and all(line.startswith("live call failed (429); answered from recording ") for line in
                                       fallbacks)
    assert len(server.chat_requests) - before == 8 * 3  # every call tried live first, 3 times, with its key
    assert {r["headers"]["authorization"] for r in server.chat_requests} == {f"Bearer {KEY}"}
    assert len(server.probes) == probes  # an answer from the recording says nothing of the server: not probed
    server.stop()
    dead = to(server, recording="02_summary_memory_run")
    assert [turn_lines(r) for r in run(dead, TURNS[:2])[0]] == [turn_lines(r) for r in recorded[:2]]
    assert all("connection error" in notice for notice in dead.notices)
    assert_fields(error_of(dead.complete, HELLO), reason="no connection", attempts=1, setting="LLM_BASE_URL")
    replayed = connect(recording="02_summary_memory_run", load_env=False, quiet=True)  # no key, no server: replay
    assert replayed.mode == "replay" and [r.reply for r in run(replayed)[0]] == [r.reply for r in recorded]
    assert not replayed.notices  # nothing only a live server could say

