"""The stand-in's written replies (data/offline_replies/): grounded line(s) first, then the written reply;
every file read, matched after whitespace normalisation, conflicts refused, other messages still short."""
from __future__ import annotations

import json

import pytest

from helpers.lessons.data import prompt
from helpers.model.offline import markers, replies, server
from helpers.model.offline import replies as written

SYSTEM = prompt("fincoach_system")
SALARY = "Hi! I'm Chiru. My monthly take-home salary is ₹1,20,000."
QUESTION = "What is my exact monthly take-home salary that I told you at the start?"
GENERAL = "What is a Systematic Investment Plan and how does it work?"


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A replies folder of two files, in place of data/offline_replies/."""
    (tmp_path / "a.json").write_text(json.dumps({"source": "test a", "replies": [
        {"user": SALARY, "reply": "Written reply one."}, {"user": QUESTION, "reply": "Written reply two."}]}))
    (tmp_path / "b.json").write_text(json.dumps({"source": "test b", "replies": [
        {"user": GENERAL, "reply": "Written reply three."}]}))
    monkeypatch.setattr(written, "REPLIES_DIR", tmp_path)
    return tmp_path


def chat_reply(*turns: str) -> str:
    messages = [{"role": "system", "content": SYSTEM}]
    for index, turn in enumerate(turns):
        messages.append({"role": "user", "content": turn})
        if index < len(turns) - 1:
            messages.append({"role": "assistant", "content": f"{markers.MARKER} Noted."})
    return server.respond({"model": "any", "messages": messages})["choices"][0]["message"]["content"]


def test_every_file_of_the_folder_is_read_and_matched_after_whitespace_normalisation(folder):
    assert written.written_reply("  Hi!  I'm Chiru.\nMy monthly take-home salary is ₹1,20,000. ") == "Written reply one."
    assert written.written_reply(GENERAL) == "Written reply three."
    assert written.written_reply("Hi! I'm Chiru.") is None  # a part of a listed message is not that message
    assert all(written.written_reply(message) for message in (SALARY, QUESTION, GENERAL))


def test_the_written_reply_follows_the_grounded_line_and_the_fact_still_comes_from_the_request(folder):
    told = chat_reply(SALARY)
    assert told == f"{markers.MARKER} Noted: your name and salary.\n\nWritten reply one."
    asked = chat_reply(SALARY, QUESTION)  # the salary is in a recent turn: quoted from there
    assert asked.startswith(f'{markers.MARKER} From the recent turns: "My monthly take-home salary is ₹1,20,000."')
    assert asked.endswith("\n\nWritten reply two.")
    lost = chat_reply("I like tea.", QUESTION)  # the memory lost it: the stand-in says so, then the reply
    assert lost == f"{markers.MARKER} I do not have your salary in what I was sent.\n\nWritten reply two."


def test_a_general_question_gets_the_written_reply_in_place_of_cannot_answer(folder):
    assert chat_reply(GENERAL) == f"{markers.MARKER} Written reply three."
    assert chat_reply("What is a Public Provident Fund?") == f"{markers.MARKER} {replies.CANNOT_ANSWER}"


def test_two_files_with_different_replies_to_one_message_are_refused_by_name(folder):
    (folder / "c.json").write_text(json.dumps({"source": "test c", "replies": [{"user": GENERAL, "reply": "Other."}]}))
    with pytest.raises(written.RepliesFileError, match=r"c\.json and data/offline_replies/b\.json"):
        written.written_reply(GENERAL, folder)
    (folder / "c.json").write_text(json.dumps({"source": "test c", "replies": [{"user": GENERAL}]}))
    written._written.cache_clear()
    with pytest.raises(written.RepliesFileError, match="reply 1: needs"):
        written.written_reply(GENERAL, folder)


def test_the_same_request_always_gives_the_same_reply(folder):
    assert chat_reply(SALARY, QUESTION) == chat_reply(SALARY, QUESTION)
