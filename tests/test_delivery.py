"""What reaches the model on a local server (issue 18), against a loopback server whose chat format drops system
messages as llama-cpp-python 0.3.36's do and whose tokenizer bills 1.2 times tiktoken plus a chat template:
the first affected turn names what was dropped, for the chat and the summariser alike; LLM_SYSTEM_MESSAGES gets
every message there; replay says nothing only a live server could say."""
from __future__ import annotations

import json

import pytest

from helpers.display.lines import turn_line
from helpers.lessons.data import lesson3, prompt
from helpers.memory.summary import SummaryMemory
from helpers.memory.types import SettingError
from helpers.model.chat import chat
from helpers.model.connect import connect
from helpers.model.responses import adapt, shape
from helpers.model.recordings import recording_path
from helpers.model.summarisers import make_summariser
from tests.support.loopback import connect_to

SYSTEM = prompt("fincoach_system")
TURNS = lesson3()["summary_run"]["user_turns"]
SALARY = lesson3()["summary_run"]["salary_marker"]

pytestmark = pytest.mark.usefixtures("model_env")


def real_server(server, chat_format):
    server.chat_format = chat_format
    server.billing_ratio, server.template_tokens = 1.2, 4  # counts differently from tiktoken, as real ones do
    return server


def run(access, turns=TURNS):
    """Lesson 3's run (summarise after 4 turns, keep 2) through chat(): the records and the summariser."""
    summarise = make_summariser(access, "summary_memory")
    memory = SummaryMemory(SYSTEM, summarise, max_turns_before_summary=4, turns_to_keep_verbatim=2)
    return [chat(memory, text, access, watch=SALARY, watch_label="salary") for text in turns], summarise


def not_received_lines(access):
    return [n for n in access.notices if n.startswith("NOT RECEIVED")]


# ----- what the check finds, per chat format -----------------------------------------------------------

def test_a_format_that_drops_every_system_message_is_named_on_the_first_turn_for_chat_and_summariser(server):
    access = connect_to(real_server(server, "gemma"))
    records, summarise = run(access)
    assert records[0].not_received == ("the system prompt",)
    assert turn_line(records[0]).endswith("| NOT RECEIVED BY THE MODEL: the system prompt")
    assert records[4].not_received == ("the system prompt", "the summary")  # turn 5: the first with a summary
    assert all(call.not_received == ("the summariser prompt",) for call in summarise.calls)
    warnings = [n for n in access.notices if n.startswith("WARNING")]
    assert len(warnings) == 1 and "drops every system message" in warnings[0]
    assert "--chat_format llama-3" in warnings[0] and "LLM_SYSTEM_MESSAGES=user" in warnings[0]
    assert len(not_received_lines(access)) == 6 + 2  # every affected request said so, as it happened
    assert "the summariser prompt" in not_received_lines(access)[4]  # the first fold came after turn 4's reply
    assert SALARY not in records[-1].reply  # and indeed: the model never saw the summary that holds the salary


@pytest.mark.parametrize("chat_format", ["chatml", "llama-2"])
def test_a_format_that_keeps_only_the_first_is_silent_until_the_summary_comes(server, chat_format):
    access = connect_to(real_server(server, chat_format))
    records, summarise = run(access)
    assert [r.not_received for r in records] == [()] * 4 + [("the summary",)] * 2
    assert "NOT RECEIVED BY THE MODEL: the summary" in turn_line(records[4])
    assert all(call.not_received == () for call in summarise.calls)  # one system message: it arrives
    warning = next(n for n in access.notices if n.startswith("WARNING"))
    assert "keeps only the first system message" in warning and "LLM_SYSTEM_MESSAGES=merge" in warning


def test_a_format_that_keeps_every_system_message_gets_no_warning_and_few_probes(server):
    access = connect_to(real_server(server, "llama-3"))
    records, _ = run(access)
    assert not any(r.not_received for r in records) and not access.notices
    # one probe pair per system message of each request shape, for the whole run: (system) and (system, system)
    assert len(server.probes) == 2 * (1 + 2)


def test_the_check_is_robust_to_a_tokenizer_far_from_tiktoken(server):
    for ratio in (0.6, 1.5):
        real_server(server, "chatml").billing_ratio = ratio
        access = connect_to(server)
        records, _ = run(access, TURNS[:5])
        assert [r.not_received for r in records] == [()] * 4 + [("the summary",)], ratio


def test_a_notebooks_own_sdk_calls_are_checked_too(server):
    """Notebooks 02 and 05 build their request in their own class and call client.chat.completions.create."""
    access = connect_to(real_server(server, "chatml"), quiet=True)
    request = [{"role": "system", "content": SYSTEM}, {"role": "system", "content": "Summary: the user earns a lot."},
               {"role": "user", "content": TURNS[5]}]
    access.client.chat.completions.create(model=access.model, messages=request, max_tokens=100)
    assert access.trace.not_received == (1,)
    assert not_received_lines(access) == ["NOT RECEIVED: the server dropped system message 2 of 2 ('Summary: the user "
                                          "earns a lot.') from this request; the model answered without it."]


# ----- the setting that fixes it ------------------------------------------------------------------------

def test_merge_gets_the_summary_to_a_format_that_keeps_only_the_first(server, monkeypatch, capsys):
    monkeypatch.setenv("LLM_SYSTEM_MESSAGES", "merge")
    access = connect_to(real_server(server, "chatml"), quiet=False)
    assert "system messages joined into one (LLM_SYSTEM_MESSAGES=merge)" in access.label
    records, _ = run(access)
    assert not any(r.not_received for r in records) and not not_received_lines(access)
    replies = [r["body"]["messages"] for r in server.model_calls if r["body"]["messages"][0]["content"] != prompt(
        "summary_memory")]
    sent = replies[-1]  # turn 6 as the server got it: one system message
    assert [m["role"] for m in sent].count("system") == 1 and sent[0]["content"].startswith(SYSTEM)
    assert records[-1].snapshot.summary in sent[0]["content"]  # the summary is there now
    adapted = [n for n in access.notices if n.startswith("sent adapted")]
    assert adapted == ["sent adapted (LLM_SYSTEM_MESSAGES=merge): 2 system messages joined into one"] * 2  # turns 5-6
    assert access.label in capsys.readouterr().out


def test_merge_is_not_enough_for_a_format_with_no_system_role_and_the_warning_says_what_is(server, monkeypatch):
    monkeypatch.setenv("LLM_SYSTEM_MESSAGES", "merge")
    access = connect_to(real_server(server, "gemma"))
    records, _ = run(access, TURNS[:5])
    assert records[4].not_received == ("the system prompt", "the summary")  # both went in the one merged message
    assert "LLM_SYSTEM_MESSAGES=user" in next(n for n in access.notices if n.startswith("WARNING"))


def test_user_gets_every_system_text_to_a_format_with_no_system_role(server, monkeypatch):
    monkeypatch.setenv("LLM_SYSTEM_MESSAGES", "user")
    access = connect_to(real_server(server, "gemma"))
    records, summarise = run(access)
    assert not any(r.not_received for r in records) and not not_received_lines(access)
    assert all(call.not_received == () for call in summarise.calls)
    turn_6 = [r["body"]["messages"] for r in server.model_calls if SYSTEM in r["body"]["messages"][0]["content"]][-1]
    assert turn_6[0]["role"] == "user" and records[-1].snapshot.summary in turn_6[0]["content"]  # it reaches the model
    summariser_call = next(r for r in server.model_calls if "CONVERSATION TURNS TO SUMMARISE" in json.dumps(r["body"]))
    assert [m["role"] for m in summariser_call["body"]["messages"]] == ["user"]  # the prompt went into the user message
    assert summariser_call["body"]["messages"][0]["content"].startswith(prompt("summary_memory"))


def test_a_recording_holds_the_request_as_written_so_replay_needs_no_setting(server, monkeypatch):
    monkeypatch.setenv("LLM_SYSTEM_MESSAGES", "merge")
    recorder = connect_to(real_server(server, "chatml"), "record", recording="run")
    recorded, _ = run(recorder)
    stored = json.loads(recording_path("run").read_text(encoding="utf-8"))
    turn_6 = [e for e in stored["exchanges"] if e["request"]["body"]["messages"][0]["content"] == SYSTEM][-1]
    assert [m["role"] for m in turn_6["request"]["body"]["messages"]][:2] == ["system", "system"]
    monkeypatch.delenv("LLM_SYSTEM_MESSAGES")
    replay = connect("replay", recording="run", load_env=False, quiet=True)
    replayed, _ = run(replay)
    assert [r.reply for r in replayed] == [r.reply for r in recorded]


def test_a_bad_value_of_the_setting_names_the_values(monkeypatch):
    monkeypatch.setenv("LLM_SYSTEM_MESSAGES", "squash")
    with pytest.raises(SettingError) as raised:
        connect("offline", load_env=False, quiet=True)
    assert (raised.value.setting, raised.value.value) == ("LLM_SYSTEM_MESSAGES", "squash")
    assert "as-written, merge, user" in str(raised.value)  # the values to choose from: the message is the help


# ----- replay and offline say nothing only a live server could say ----------------------------------------

def test_replay_of_a_run_recorded_on_a_dropping_server_says_nothing_about_a_server(server):
    recorder = connect_to(real_server(server, "gemma"), "record", recording="run")
    recorded, _ = run(recorder)
    assert any(r.not_received for r in recorded)
    for access in (connect("replay", recording="run", load_env=False, quiet=True),
                   connect("offline", load_env=False, quiet=True)):
        records, summarise = run(access)
        assert not any(r.not_received for r in records) and not any(c.not_received for c in summarise.calls)
        assert not access.notices
        assert not any(word in turn_line(r).lower() for r in records for word in ("billed", "server", "received"))


def test_a_live_call_answered_from_the_recording_is_not_checked_either(server):
    recorder = connect_to(real_server(server, "gemma"), "record", recording="run")
    run(recorder, TURNS[:1])
    server.fail_always(503)
    probes_before = len(server.probes)
    live = connect_to(server, recording="run", max_retries=0)
    records, _ = run(live, TURNS[:1])
    assert records[0].not_received == () and len(server.probes) == probes_before
    assert [n.split(";")[0] for n in live.notices] == ["live call failed (503)"]
    assert not any("billed" in n for n in live.notices)


# ----- the request adaptation itself -----------------------------------------------------------------------

def test_adapt_merges_or_moves_system_messages_and_says_which_message_carries_which():
    system = {"role": "system", "content": "S"}
    summary = {"role": "system", "content": "M"}
    user, reply = {"role": "user", "content": "U"}, {"role": "assistant", "content": "A"}
    written = [system, summary, user, reply, user]
    assert adapt(written, "as-written") == (written, [(0,), (1,), (2,), (3,), (4,)])
    assert adapt(written, "merge") == ([{"role": "system", "content": "S\n\nM"}, user, reply, user],
                                       [(0, 1), (2,), (3,), (4,)])
    assert adapt(written, "user") == ([{"role": "user", "content": "S\n\nM\n\nU"}, reply, user],
                                      [(0, 1, 2), (3,), (4,)])
    assert adapt([system], "user") == ([{"role": "user", "content": "S"}], [(0,)])
    assert adapt([system, user], "merge") == ([system, user], [(0,), (1,)])  # one system message: unchanged
    assert shape(written) == (True, True) and shape([user, system, user]) == (False,)
