"""make_summariser sends what the lessons send, and never hands an empty summary to a memory (issue 3)."""
from __future__ import annotations

import pytest

from helpers.base.errors import SettingError
from helpers.base.text import messages_from_lines
from helpers.base.tokens import count_tokens
from helpers.lessons.data import lesson3, prompt
from helpers.memory.summary import SummaryMemory
from helpers.memory.types import SettingError
from helpers.model import connect as llm
from helpers.model.connect import EmptyReply, connect
from helpers.model.summarisers import make_summariser
from tests.support.mock_api import Scripted, ok

TURNS = [{"role": "user", "content": "Hi! I'm Chiru."}, {"role": "assistant", "content": "Hello Chiru."}]


pytestmark = pytest.mark.usefixtures("model_env")


def groq(handler: Scripted) -> llm.ModelAccess:
    return connect("live", api_key="test-key", transport=handler.transport(), load_env=False, quiet=True)


def test_the_summary_memory_request_is_the_lessons_request():
    handler = Scripted(ok("  Chiru introduced himself.  "))
    summarise = make_summariser(groq(handler), "summary_memory")
    assert summarise(TURNS, None) == "Chiru introduced himself."  # stripped, as the lesson does
    body = handler.bodies[0]
    assert body["messages"] == [
        {"role": "system", "content": prompt("summary_memory")},
        {"role": "user", "content": "CONVERSATION TURNS TO SUMMARISE:\nUSER: Hi! I'm Chiru.\nASSISTANT: Hello Chiru."
                                    "\n\nProduce a summary of these turns."}]
    # the lesson's call: model, max_tokens=1000, temperature=0, reasoning_effort="low"
    assert (body["model"], body["max_tokens"], body["temperature"], body["reasoning_effort"]) == (
        "openai/gpt-oss-120b", 1000, 0, "low")
    assert summarise.calls[0].summary == "Chiru introduced himself." and summarise.calls[0].prompt_tokens == 11


def test_the_update_requests_of_both_lessons():
    handler = Scripted(ok("new"))
    access = groq(handler)
    make_summariser(access, "summary_memory")(TURNS, "OLD")
    make_summariser(access, "summary_buffer")(TURNS, "OLD")
    lesson3_user, lesson4_user = (body["messages"][1]["content"] for body in handler.bodies)
    assert lesson3_user == ("EXISTING SUMMARY (from previous turns):\nOLD\n\nNEW TURNS TO ADD TO THE SUMMARY:\n"
                            "USER: Hi! I'm Chiru.\nASSISTANT: Hello Chiru.\n\nProduce an updated summary that "
                            "incorporates both.")
    assert lesson4_user.startswith("EXISTING SUMMARY (from previous turns):\nOLD\n\nNEW MESSAGES TO INCORPORATE:\n")
    assert lesson4_user.endswith("Produce an updated summary that merges both.")
    assert handler.bodies[1]["messages"][0]["content"] == prompt("summary_buffer")


def test_prompts_by_name_or_text_and_a_clear_error_for_a_typo():
    access = connect("offline", load_env=False, quiet=True)
    hard = make_summariser(access, "summary_memory_hard_rules")
    assert "hard rules the user stated" in hard.system_prompt
    custom = make_summariser(access, "You summarise chats in at most 30 words.", templates="lesson4")
    assert custom.name == "custom" and custom.request(TURNS)[1]["content"].startswith("MESSAGES TO SUMMARISE:")
    with pytest.raises(SettingError) as raised:
        make_summariser(access, "summary_mem")
    assert (raised.value.setting, raised.value.value) == ("prompt", "summary_mem")


def test_an_empty_summary_is_retried_once_then_raises_and_is_never_returned():
    handler = Scripted(ok("", finish_reason="length"), ok("A real summary."))
    assert make_summariser(groq(handler))(TURNS, None) == "A real summary."
    assert [b["max_tokens"] for b in handler.bodies] == [1000, 2000]
    always_empty = Scripted(ok(None, finish_reason="length"))
    with pytest.raises(EmptyReply):
        make_summariser(groq(always_empty))(TURNS, None)


def test_condensing_an_over_long_summary_asks_for_fewer_words_and_the_memory_uses_it():
    access = connect("offline", load_env=False, quiet=True)
    summarise = make_summariser(access, "summary_memory")
    request = summarise.request([], "word " * 60)
    assert "SUMMARY TO SHORTEN:" in request[1]["content"] and "at most 40 words" in request[1]["content"]
    with pytest.raises(SettingError) as raised:
        summarise.request([], None)
    assert raised.value.setting == "messages"
    # a memory whose cap the first fold passes: it condenses through the same summariser
    memory = SummaryMemory("You are FinCoach.", summarise, max_turns_before_summary=2, turns_to_keep_verbatim=1,
                           max_summary_tokens=40)
    for line_pair in lesson3()["drift_run"]["batches"][:2]:
        for message in messages_from_lines(line_pair):
            memory.add_message(message["role"], message["content"])
    condensed = [event for event in memory.fold_events if event.condensed]
    assert condensed, memory.fold_events
    assert any(call.request[1]["content"].startswith("SUMMARY TO SHORTEN:") for call in summarise.calls)
    assert count_tokens(memory.summary) == memory.summary_tokens


def test_messages_from_lines_reads_the_drift_batches():
    batch = lesson3()["drift_run"]["batches"][0]
    messages = messages_from_lines(batch)
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[2]["content"].startswith("One hard rule:")
    with pytest.raises(SettingError) as refused:
        messages_from_lines(["SYSTEM: no"])
    assert (refused.value.setting, refused.value.value) == ("lines", "SYSTEM: no")
