"""chat() and the summarisers: the lessons' requests and six-turn runs, offline and replayed; a failed call changes
nothing, a failed summariser keeps every message, an empty summary is never folded."""
from __future__ import annotations

import json

import httpx2
import pytest

from helpers.base.errors import SettingError
from helpers.base.text import messages_from_lines
from helpers.base.tokens import count_tokens
from helpers.display.lines import turn_lines
from helpers.lessons.data import lesson3, lesson4, prompt
from helpers.memory.state import to_dict
from helpers.memory.summary import SummaryMemory
from helpers.memory.summary_buffer import SummaryBufferMemory
from helpers.model.chat import chat
from helpers.model.connect import connect
from helpers.model.errors import EmptyReply, ModelUnavailable, RecordingMissing
from helpers.model.offline.markers import MARKER, SUMMARY_MARKER
from helpers.model.offline.server import respond
from helpers.model.offline.summariser import is_summariser_request
from helpers.model.summarisers import make_summariser
from tests.support.mock_api import Scripted, ok, status

SYSTEM, SALARY = prompt("fincoach_system"), lesson3()["summary_run"]["salary_marker"]
SALARY_FACT = "My monthly take-home salary is ₹1,20,000."
L3_TURNS, L4_TURNS = lesson3()["summary_run"]["user_turns"], lesson4()["buffer_run"]["user_turns"]
TURNS = [{"role": "user", "content": "Hi! I'm Chiru."}, {"role": "assistant", "content": "Hello Chiru."}]

pytestmark = pytest.mark.usefixtures("model_env")


def stand_in(request: httpx2.Request) -> httpx2.Response:
    """A mock endpoint answering like the stand-in, so that recordings can be made with no network."""
    return httpx2.Response(200, json=respond(json.loads(request.content)))


def live(*answers, **kwargs):
    return connect("live", api_key="test-key", transport=Scripted(*answers).transport(), load_env=False, quiet=True,
                   **kwargs)


def summary_memory(access, **settings):
    return SummaryMemory(SYSTEM, make_summariser(access, "summary_memory"),
                         **(settings or dict(max_turns_before_summary=4, turns_to_keep_verbatim=2)))


def buffer_memory(access, budget=600):
    return SummaryBufferMemory(SYSTEM, make_summariser(access, "summary_buffer"), max_buffer_tokens=budget,
                               messages_to_compress_on_overflow=4)


def test_the_summarisers_send_the_lessons_requests_with_the_lessons_call():
    handler = Scripted(ok("  Chiru introduced himself.  "))
    access = connect("live", api_key="test-key", transport=handler.transport(), load_env=False, quiet=True)
    summarise = make_summariser(access, "summary_memory")
    assert summarise(TURNS, None) == "Chiru introduced himself."  # stripped, as the lesson does
    make_summariser(access, "summary_memory")(TURNS, "OLD")
    make_summariser(access, "summary_buffer")(TURNS, "OLD")
    first, lesson3_update, lesson4_update = handler.bodies
    assert first["messages"] == [{"role": "system", "content": prompt("summary_memory")}, {"role": "user", "content": (
        "CONVERSATION TURNS TO SUMMARISE:\nUSER: Hi! I'm Chiru.\nASSISTANT: Hello Chiru.\n\nProduce a summary of "
        "these turns.")}]
    assert (first["max_tokens"], first["temperature"], first["reasoning_effort"]) == (1000, 0, "low")
    assert lesson3_update["messages"][1]["content"].startswith("EXISTING SUMMARY (from previous turns):\nOLD\n\nNEW "
                                                               "TURNS TO ADD TO THE SUMMARY:\n")
    assert lesson4_update["messages"][1]["content"].endswith("Produce an updated summary that merges both.")
    assert summarise.calls[0].summary == "Chiru introduced himself." and summarise.calls[0].prompt_tokens == 11


def test_prompts_by_name_or_text_a_typo_refused_and_an_over_long_summary_condensed(offline_access):
    assert "hard rules the user stated" in make_summariser(offline_access, "summary_memory_hard_rules").system_prompt
    custom = make_summariser(offline_access, "You summarise chats in at most 30 words.", templates="lesson4")
    assert custom.name == "custom" and custom.request(TURNS)[1]["content"].startswith("MESSAGES TO SUMMARISE:")
    with pytest.raises(SettingError) as typo:
        make_summariser(offline_access, "summary_mem")
    assert (typo.value.setting, typo.value.value) == ("prompt", "summary_mem")
    summarise = make_summariser(offline_access, "summary_memory")
    assert "at most 40 words" in summarise.request([], "word " * 60)[1]["content"]
    memory = SummaryMemory("You are FinCoach.", summarise, max_turns_before_summary=2, turns_to_keep_verbatim=1,
                           max_summary_tokens=40)
    for line_pair in lesson3()["drift_run"]["batches"][:2]:
        for message in messages_from_lines(line_pair):
            memory.add_message(message["role"], message["content"])
    assert any(event.condensed for event in memory.fold_events) and count_tokens(memory.summary) == (
        memory.summary_tokens)


def test_six_turns_of_summary_memory_offline_behave_as_lesson_3_describes(offline_access, capsys):
    memory = summary_memory(offline_access)
    records = [chat(memory, text, offline_access, watch=SALARY, watch_label="salary", show=True) for text in L3_TURNS]
    assert capsys.readouterr().out.splitlines() == [line for r in records for line in turn_lines(r)]
    assert [r.messages_sent for r in records] == [2, 4, 6, 8, 7, 9]  # the lesson's column
    assert [r.watched[1] for r in records] == [True] * 4 + [False] * 2
    assert [len(r.folds_after) for r in records] == [0, 0, 0, 1, 0, 1]
    assert all(r.prompt_tokens == r.snapshot.request_tokens for r in records)  # usage: the contents counted exactly
    assert records[-1].reply.split("\n\n")[0] == f'{MARKER} From the summary: "{SALARY_FACT}"'
    window = [m for m in records[-1].request if "SUMMARY" not in m["content"]]  # a sliding window's request
    assert respond({"messages": window})["choices"][0]["message"]["content"].startswith(
        f"{MARKER} I do not have your salary in what I was sent.")
    assert all("1,20,000" not in r.reply for r in records[:-1]) and all(180 <= r.completion_tokens <= 320
                                                                        for r in records[:5])  # the lesson's lengths
    assert records[4].prompt_tokens < records[3].prompt_tokens  # the fold saves tokens, as the lesson's 997 then 857
    assert memory.summary.startswith(SUMMARY_MARKER) and memory.summary.count("₹1,20,000") == 1


def test_six_turns_of_summary_buffer_memory_offline_overflow_where_the_lessons_run_did(offline_access):
    roomy = buffer_memory(offline_access, budget=2000)  # the page's try-it: never overflows
    assert [chat(roomy, text, offline_access).snapshot.folds for text in L4_TURNS] == [0] * 6
    memory = buffer_memory(offline_access)
    records = [chat(memory, text, offline_access) for text in L4_TURNS]
    assert records[0].snapshot.verbatim_tokens == 19 and [bool(r.folds_after) for r in records[:5]] == [
        False, False, True, True, True]  # the lesson's 19 tokens, and its overflows when storing replies 3 to 5
    assert ('From the summary: "My monthly take-home salary is ₹1,20,000." and "I\'m 32 years old and '
            'risk-averse."') in records[-1].reply
    assert memory.summary.count("₹1,20,000") == 1 and "Noted" not in memory.summary


def test_a_failed_model_call_changes_nothing_even_after_an_overflow_fold():
    chat_fails = {"on": False}

    def chat_may_fail(request: httpx2.Request) -> httpx2.Response:
        if chat_fails["on"] and not is_summariser_request(json.loads(request.content)["messages"]):
            return status(500)
        return stand_in(request)

    access = live(chat_may_fail, max_retries=1)
    memory = buffer_memory(access, budget=45)  # storing turn 2's question overflows
    chat(memory, L4_TURNS[0], access)
    before, chat_fails["on"] = to_dict(memory), True
    with pytest.raises(ModelUnavailable) as raised:
        chat(memory, L4_TURNS[1], access)  # the overflow fold ran, then the reply failed
    assert (raised.value.status, raised.value.attempts) == (500, 2) and to_dict(memory) == before
    chat_fails["on"] = False
    assert chat(memory, L4_TURNS[1], access).folds_before  # the same turn works once the endpoint is back


def test_an_empty_summary_is_retried_once_then_a_note_and_nothing_is_folded_until_something_changes():
    assert make_summariser(live(ok("", finish_reason="length"), ok("A real summary.")))(TURNS, None) == (
        "A real summary.")
    failing = {"on": True}

    def empty_summaries(request: httpx2.Request) -> httpx2.Response:
        if failing["on"] and is_summariser_request(json.loads(request.content)["messages"]):
            return ok("", finish_reason="length")
        return stand_in(request)

    access = live(empty_summaries)
    with pytest.raises(EmptyReply):
        make_summariser(access)(TURNS, None)
    memory = summary_memory(access)
    records = [chat(memory, text, access) for text in L3_TURNS[:4]]
    assert "fold not retried until something changes" in records[3].notes[0] and "[NOTE]" in turn_lines(records[3])[-1]
    assert memory.summary is None and len(memory.verbatim) == 8  # every message kept word for word
    failing["on"] = False
    assert not chat(memory, L3_TURNS[4], access).folds_after and memory.fold_waits
    memory.summarise = make_summariser(access, "summary_memory", max_tokens=2000)  # a change that may help
    assert chat(memory, L3_TURNS[5], access).folds_after and "₹1,20,000" in memory.summary


@pytest.mark.parametrize("kind", ["summary", "summary_buffer"])
def test_six_turns_replay_exactly_what_was_recorded_and_a_changed_turn_fails_keeping_the_memory(kind):
    def run(access):
        memory = summary_memory(access) if kind == "summary" else buffer_memory(access, budget=90)
        return memory, [chat(memory, text, access, watch=SALARY) for text in (L3_TURNS if kind == "summary" else
                                                                             L4_TURNS)]

    recorded_memory, recorded = run(connect("record", api_key="test-key", transport=httpx2.MockTransport(stand_in),
                                            recording=kind, load_env=False, quiet=True))
    replay = connect(recording=kind, load_env=False, quiet=True)  # no key: replay by default
    replayed_memory, replayed = run(replay)
    assert replay.mode == "replay" and [turn_lines(r) for r in replayed] == [turn_lines(r) for r in recorded]
    assert to_dict(replayed_memory) == to_dict(recorded_memory) and replayed_memory.summary_count >= 1
    before = to_dict(replayed_memory)
    with pytest.raises(RecordingMissing) as raised:
        chat(replayed_memory, "A question nobody recorded?", replay)
    assert raised.value.reason == "no recording" and to_dict(replayed_memory) == before

