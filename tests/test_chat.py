"""chat() and TurnRecord: the lessons' six-turn runs end to end, offline and replayed (issue 3)."""
from __future__ import annotations

import json

import httpx2
import pytest

from helpers.base.tokens import count_tokens
from helpers.lessons.data import lesson3, lesson4, prompt
from helpers.memory.summary import SummaryMemory
from helpers.memory.summary_buffer import SummaryBufferMemory
from helpers.memory.turn_record import TurnRecord
from helpers.memory.types import FoldEvent, MemorySnapshot
from helpers.model.chat import chat
from helpers.model.connect import ModelUnavailable, RecordingMissing, connect
from helpers.model.offline.markers import MARKER, SUMMARY_MARKER
from helpers.model.offline.summariser import is_summariser_request
from helpers.model.offline.server import respond
from helpers.model.summarisers import make_summariser
from helpers.display.lines import fold_line, turn_line, turn_lines
from helpers.memory.state import to_dict
from tests.support.mock_api import Scripted, ok, status

SYSTEM = prompt("fincoach_system")
L3_TURNS = lesson3()["summary_run"]["user_turns"]
L4_TURNS = lesson4()["buffer_run"]["user_turns"]
SALARY = lesson3()["summary_run"]["salary_marker"]


pytestmark = pytest.mark.usefixtures("model_env")


def offline():
    return connect("offline", load_env=False, quiet=True)


def summary_memory(access, **settings):
    settings = settings or dict(max_turns_before_summary=4, turns_to_keep_verbatim=2)
    return SummaryMemory(SYSTEM, make_summariser(access, "summary_memory"), **settings)


def buffer_memory(access, budget=600):
    return SummaryBufferMemory(SYSTEM, make_summariser(access, "summary_buffer"), max_buffer_tokens=budget,
                               messages_to_compress_on_overflow=4)


def stand_in_server(request: httpx2.Request) -> httpx2.Response:
    """A mock endpoint that answers like the stand-in (so a recording can be made without a network)."""
    return httpx2.Response(200, json=respond(json.loads(request.content)))


# ----- the lessons' lines --------------------------------------------------------------------------

def lesson_record(snapshot=None, **overrides) -> TurnRecord:
    shot = dict(kind="summary memory", turn=1, request_tokens=155, summary=None, summary_tokens=0,
                summary_block_tokens=0, pinned_tokens=0, system_prompt_tokens=136, verbatim_tokens=19,
                verbatim_messages=1, folds=0)
    fields = dict(user_message="u", reply="r", request=[{"role": "system", "content": "s"}] * 2,
                  prompt_tokens=229, completion_tokens=10, model="m", finish_reason="stop",
                  snapshot=MemorySnapshot(**(shot | (snapshot or {}))), watch="1,20,000", watch_label="salary",
                  watch_in_verbatim=True)
    return TurnRecord(**(fields | overrides))


def test_the_lines_reproduce_the_lessons_formats():
    assert turn_line(lesson_record()) == ("[Turn 1] messages sent: 2 | prompt_tokens: 229 | summary sent: False | "
                                      "salary in a verbatim turn: True")
    fold = FoldEvent(first_turn=1, last_turn=2, messages_folded=4, message_tokens=489, old_summary_tokens=0,
                     summary_tokens=131)
    assert fold_line(fold, "summary memory") == "  [SUMMARISE] 4 messages (489 tokens) -> summary (131 tokens)"
    buffer = lesson_record(prompt_tokens=200, snapshot={"kind": "summary buffer memory", "budget": 600})
    assert turn_line(buffer) == ("[Turn 1] prompt_tokens: 200 | summary: 0 tokens | buffer: 19/600 tokens in 1 "
                             "message | overflows: 0")
    compress = FoldEvent(first_turn=1, last_turn=2, messages_folded=4, message_tokens=550, old_summary_tokens=0,
                         summary_tokens=141)
    assert fold_line(compress, "summary buffer memory") == "  [COMPRESS] 4 messages (550 tokens) -> new summary (141 tokens)"
    merged = FoldEvent(first_turn=3, last_turn=3, messages_folded=2, message_tokens=229, old_summary_tokens=141,
                       summary_tokens=148)
    assert fold_line(merged, "summary buffer memory") == ("  [COMPRESS] 2 messages + old summary (370 tokens) -> new summary "
                                                "(148 tokens)")
    one = FoldEvent(first_turn=1, last_turn=1, messages_folded=1, message_tokens=30, old_summary_tokens=0,
                    summary_tokens=20)
    assert "[COMPRESS] 1 message (30 tokens)" in fold_line(one, "summary buffer memory")


# ----- six turns, offline ---------------------------------------------------------------------------

def test_six_turns_of_summary_memory_offline_behave_as_lesson_3_describes(capsys):
    access = offline()
    memory = summary_memory(access)
    records = [chat(memory, text, access, watch=SALARY, watch_label="salary", show=True) for text in L3_TURNS]
    printed = capsys.readouterr().out.splitlines()
    assert [r.messages_sent for r in records] == [2, 4, 6, 8, 7, 9]  # the lesson's column
    assert [r.summary_sent for r in records] == [False] * 4 + [True] * 2
    assert [r.watch_in_verbatim for r in records] == [True] * 4 + [False] * 2
    assert [len(r.folds_after) for r in records] == [0, 0, 0, 1, 0, 1]
    assert records[3].folds_after[0].messages_folded == 4
    # the printed lines are the records' lines, folds after the turn that triggered them
    assert printed == [line for r in records for line in turn_lines(r)]
    assert printed[4].startswith("  [SUMMARISE] 4 messages (")
    assert printed[0].endswith("| salary in a verbatim turn: True")  # the caller named what it watches
    # prompt_tokens comes from usage; the stand-in counts the request's contents exactly
    assert all(r.prompt_tokens == r.snapshot.request_tokens for r in records)
    # turn 6: the salary is in no verbatim turn, yet the reply quotes it from the summary
    assert records[-1].reply.startswith(MARKER)
    assert 'From the summary: "My monthly take-home salary is ₹1,20,000."' in records[-1].reply
    # the stand-in's own replies never carry the salary forward: turn 1's reply names what it noted, no value
    assert "salary" in records[0].reply and all("1,20,000" not in r.reply for r in records[:-1])
    assert memory.summary.startswith(SUMMARY_MARKER) and memory.summary.count("₹1,20,000") == 1
    assert len(memory.archive) == 12


def test_six_turns_of_summary_buffer_memory_offline_overflow_where_the_lessons_run_did():
    access = offline()
    # the stand-in answers the lesson's turns with replies of the lesson's lengths: at 2,000 tokens (the
    # page's try-it) six turns never overflow ...
    roomy = buffer_memory(access, budget=2000)
    assert [chat(roomy, text, access).snapshot.folds for text in L4_TURNS] == [0] * 6 and roomy.summary is None
    # ... and at the lesson's 600 it overflows when storing replies 3, 4 and 5, as the lesson's run did
    memory = buffer_memory(access)
    records = [chat(memory, text, access) for text in L4_TURNS]
    assert records[0].snapshot.verbatim_tokens == 19 == count_tokens(L4_TURNS[0])  # the lesson's 19
    assert [bool(r.folds_after) for r in records[:5]] == [False, False, True, True, True]
    assert records[-1].snapshot.folds == 3
    for record in records:  # measured after the user message, before the reply
        assert record.snapshot.verbatim_tokens == sum(count_tokens(m["content"]) for m in record.request
                                             if m["role"] != "system")
        assert turn_line(record).startswith(f"[Turn {record.turn}] prompt_tokens: {record.prompt_tokens} | summary: ")
        plural = "" if record.snapshot.verbatim_messages == 1 else "s"
        assert (f"/600 tokens in {record.snapshot.verbatim_messages} message{plural} | overflows: {record.snapshot.folds}"
                in turn_line(record))
    folds = [e for r in records for e in r.fold_events]
    assert len(folds) == memory.overflow_count >= 3
    assert records[-1].summary_sent  # overflows before turn 6
    compress = [line for r in records[:5] for line in turn_lines(r) if "COMPRESS" in line]
    assert [line.split(" (")[0] for line in compress] == ["  [COMPRESS] 4 messages", "  [COMPRESS] 2 messages + old summary",
                                                          "  [COMPRESS] 2 messages + old summary"]
    # turn 6 asks for "my salary and risk profile": both come from the summary, quoted
    assert ('From the summary: "My monthly take-home salary is ₹1,20,000." and "I\'m 32 years old and '
            'risk-averse."') in records[-1].reply
    # the summary holds the user's facts once each, nothing from the stand-in's replies
    assert memory.summary.count("₹1,20,000") == 1 and "Noted" not in memory.summary


# ----- failures lose nothing ------------------------------------------------------------------------

def test_a_failed_model_call_changes_nothing_in_memory():
    ok_then_fail = Scripted(stand_in_server, status(503))
    access = connect("live", api_key="test-key", transport=ok_then_fail.transport(), max_retries=1,
                     load_env=False, quiet=True)
    memory = summary_memory(access)
    chat(memory, L3_TURNS[0], access)
    before = to_dict(memory)
    with pytest.raises(ModelUnavailable) as raised:
        chat(memory, L3_TURNS[1], access)
    assert (raised.value.status, raised.value.attempts) == (503, 2)
    assert to_dict(memory) == before


def test_a_failed_call_after_an_overflow_undoes_the_fold_too():
    chat_fails = {"on": False}

    def chat_may_fail(request: httpx2.Request) -> httpx2.Response:
        if chat_fails["on"] and not is_summariser_request(json.loads(request.content)["messages"]):
            return status(500)
        return stand_in_server(request)

    access = connect("live", api_key="test-key", transport=httpx2.MockTransport(chat_may_fail),
                     max_retries=0, load_env=False, quiet=True)
    memory = buffer_memory(access, budget=45)  # a small budget: storing turn 2's question overflows
    turns = iter(L4_TURNS)
    text = next(turns)
    while not memory.messages_to_fold(count_tokens(text)):  # run until storing the next question overflows
        chat(memory, text, access)
        text = next(turns)
    before = to_dict(memory)
    chat_fails["on"] = True
    with pytest.raises(ModelUnavailable) as raised:
        chat(memory, text, access)  # the overflow fold ran, then the reply failed
    assert raised.value.status == 500
    assert to_dict(memory) == before
    chat_fails["on"] = False
    assert chat(memory, text, access).folds_before  # the same turn works once the endpoint is back


def test_a_failing_summariser_is_a_note_the_turn_goes_on_and_nothing_empty_is_folded():
    failing = {"on": True}

    def empty_summaries(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        if failing["on"] and is_summariser_request(body["messages"]):
            return ok("", finish_reason="length")
        return stand_in_server(request)

    access = connect("live", api_key="test-key", transport=httpx2.MockTransport(empty_summaries),
                     load_env=False, quiet=True)
    memory = summary_memory(access)
    records = [chat(memory, text, access) for text in L3_TURNS[:4]]
    assert records[3].notes and "summariser failed" in records[3].notes[0]
    assert "[NOTE]" in turn_lines(records[3])[-1]
    assert memory.summary is None and memory.summary_count == 0
    assert len(memory.verbatim) == 8  # every message kept word for word
    assert "fold not retried until something changes" in records[3].notes[0]  # empty twice at the limit: for good
    failing["on"] = False
    assert not chat(memory, L3_TURNS[4], access).folds_after and memory.fold_waits  # so the next reply does not try
    memory.summarise = make_summariser(access, "summary_memory", max_tokens=2000)  # a change that may help
    record = chat(memory, L3_TURNS[5], access)
    assert memory.summary_count == 1 and record.folds_after  # the fold is retried and works
    assert "₹1,20,000" in memory.summary


# ----- six turns, replayed ----------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["summary", "summary_buffer"])
def test_six_turns_replay_exactly_what_was_recorded(kind):
    def run(access):
        memory = summary_memory(access) if kind == "summary" else buffer_memory(access, budget=90)
        turns = L3_TURNS if kind == "summary" else L4_TURNS
        return memory, [chat(memory, text, access, watch=SALARY) for text in turns]

    recorder = connect("record", api_key="test-key", transport=httpx2.MockTransport(stand_in_server),
                       recording=f"six_{kind}", load_env=False, quiet=True)
    recorded_memory, recorded = run(recorder)
    replay = connect(recording=f"six_{kind}", load_env=False, quiet=True)  # no key: replay by default
    assert replay.mode == "replay"
    replayed_memory, replayed = run(replay)
    assert [turn_lines(r) for r in replayed] == [turn_lines(r) for r in recorded]
    assert [r.reply for r in replayed] == [r.reply for r in recorded]
    assert to_dict(replayed_memory) == to_dict(recorded_memory)
    assert replayed_memory.summary_count >= 1


def test_replay_of_a_changed_conversation_fails_clearly_and_keeps_memory():
    recorder = connect("record", api_key="test-key", transport=httpx2.MockTransport(stand_in_server),
                       recording="short", load_env=False, quiet=True)
    chat(summary_memory(recorder), L3_TURNS[0], recorder)
    replay = connect("replay", recording="short", load_env=False, quiet=True)
    memory = summary_memory(replay)
    chat(memory, L3_TURNS[0], replay)
    before = to_dict(memory)
    with pytest.raises(RecordingMissing) as raised:
        chat(memory, "A question nobody recorded?", replay)
    assert raised.value.reason == "no recording" and "short.json" in str(raised.value)  # the file it looked in
    assert to_dict(memory) == before


def test_a_turn_bigger_than_the_whole_budget_is_reported_on_its_line():
    access = offline()
    memory = buffer_memory(access, budget=120)
    chat(memory, L4_TURNS[0], access)
    pasted = "Here is my whole bank statement. " + "Salary credited ₹1,20,000 on the first. " * 40
    record = chat(memory, pasted, access)
    assert record.snapshot.over_budget and record.snapshot.verbatim_tokens > 120
    assert turn_line(record).endswith("| OVER BUDGET: kept whole, folded at the next overflow")
    assert memory.archive[2]["content"] == pasted  # kept whole, not cut
    after = chat(memory, "Thanks.", access)
    assert not after.snapshot.over_budget and "OVER BUDGET" not in turn_line(after)
    assert after.folds_before and after.folds_before[-1].last_turn == 2


def test_show_prints_each_turn_as_it_completes(capsys):
    access = offline()
    memory = summary_memory(access)
    for turn, text in enumerate(L3_TURNS[:3], start=1):
        record = chat(memory, text, access, watch=SALARY, show=True)
        assert capsys.readouterr().out.splitlines() == turn_lines(record)  # printed before the next turn starts
        assert turn_line(record).startswith(f"[Turn {turn}]")
    assert turn_line(record).endswith(f"| {SALARY!r} in a verbatim turn: True")  # unnamed: the watched text itself
