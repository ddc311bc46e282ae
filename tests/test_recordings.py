"""Recordings: no key or header stored, exact-match replay, and the live fallback (issues 3 and 5)."""
from __future__ import annotations

import json

import httpx2
import openai
import pytest

from helpers.model import connect as llm
from helpers.model.connect import ModelUnavailable, RecordingMissing, connect
from helpers.base.errors import SettingError
from helpers.model.recordings import Recording, recording_path, request_key, scrub
from tests.support.errors import assert_fields
from tests.support.mock_api import Scripted, ok, status

KEY = "gsk_" + "RECORDINGTESTKEY0123456789abcdefghij"
OTHER_KEY = "sk-proj-" + "ANOTHERSECRETKEY0123456789abcdef"
ASK = [{"role": "user", "content": "What is my salary?"}]


pytestmark = pytest.mark.usefixtures("model_env")


def recorder(handler: Scripted, name: str = "run", **kwargs) -> llm.ModelAccess:
    return connect("record", api_key=KEY, transport=handler.transport(), recording=name, load_env=False,
                   quiet=True, **kwargs)


def test_a_recording_holds_no_key_and_no_authorization_header(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OTHER_KEY)
    handler = Scripted(ok("Noted."))
    access = recorder(handler)
    leaky = [{"role": "user", "content": f"my key is {KEY} and the other is {OTHER_KEY}"}]
    access.complete(leaky, max_tokens=20)
    access.complete(ASK, max_tokens=20)
    assert handler.requests[0].headers["authorization"] == f"Bearer {KEY}"  # it was sent...
    text = recording_path("run").read_text(encoding="utf-8")
    assert KEY not in text and "ANOTHERSECRETKEY" not in text  # ...and never stored
    assert "authorization" not in text.lower() and "bearer" not in text.lower()
    saved = json.loads(text)
    assert set(saved["exchanges"][0]) == {"request", "response"}
    assert set(saved["exchanges"][0]["request"]) == {"path", "body"}
    assert "[REDACTED]" in saved["exchanges"][0]["request"]["body"]["messages"][0]["content"]
    assert len(saved["exchanges"]) == 2 and saved["models"] == ["openai/gpt-oss-120b"]


def test_failed_exchanges_are_not_recorded():
    handler = Scripted(status(429), ok("second time lucky"))
    access = recorder(handler)
    access.complete(ASK, max_tokens=20)
    saved = json.loads(recording_path("run").read_text(encoding="utf-8"))
    assert [e["response"]["status_code"] for e in saved["exchanges"]] == [200]


def test_a_request_made_twice_replays_in_the_recorded_order():
    handler = Scripted(ok("first answer"), ok("second answer"))
    access = recorder(handler)
    access.complete(ASK, max_tokens=20)
    access.complete(ASK, max_tokens=20)
    replay = connect("replay", recording="run", load_env=False, quiet=True)
    answers = [replay.complete(ASK, max_tokens=20).choices[0].message.content for _ in range(3)]
    assert answers == ["first answer", "second answer", "second answer"]


def test_recording_again_replaces_what_is_asked_again_and_keeps_the_rest():
    recorder(Scripted(ok("old salary answer"))).complete(ASK, max_tokens=20)
    other = [{"role": "user", "content": "How old am I?"}]
    recorder(Scripted(ok("old age answer"))).complete(other, max_tokens=20)
    recorder(Scripted(ok("new salary answer"))).complete(ASK, max_tokens=20)
    replay = connect("replay", recording="run", load_env=False, quiet=True)
    assert replay.complete(ASK, max_tokens=20).choices[0].message.content == "new salary answer"
    assert replay.complete(other, max_tokens=20).choices[0].message.content == "old age answer"
    assert len(json.loads(recording_path("run").read_text(encoding="utf-8"))["exchanges"]) == 2


def test_replay_never_touches_the_network_and_a_missing_request_says_where_it_diverged():
    recorder(Scripted(ok("answer 1"))).complete(ASK, max_tokens=20)
    replay = connect("replay", recording="run", load_env=False, quiet=True)
    assert "no network" in replay.label
    changed = [*ASK, {"role": "assistant", "content": "x"}, {"role": "user", "content": "And my age?"}]
    with pytest.raises(RecordingMissing) as raised:
        replay.client.chat.completions.create(model=replay.model, messages=changed, max_tokens=20)
    assert_fields(raised.value, reason="no recording", retry_can_help=False)
    message = str(raised.value)
    assert "run.json" in message and "first 1 messages" in message  # the file, and where the request diverged


def test_a_damaged_recording_file_says_to_record_again():
    path = recording_path("broken")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(RecordingMissing) as raised:
        connect("replay", recording="broken", load_env=False, quiet=True)
    assert_fields(raised.value, reason="no recording", retry_can_help=False)
    assert "broken.json is not valid JSON" in str(raised.value)


def test_recording_names_are_plain_file_names():
    with pytest.raises(SettingError) as refused:
        recording_path("../secrets")
    assert (refused.value.setting, refused.value.value) == ("recording", "../secrets")
    assert isinstance(refused.value, ValueError)  # callers that catch ValueError still do
    assert recording_path("02_run").name == "02_run.json"


def test_the_match_key_ignores_key_order_and_the_server_prefix():
    a = request_key("/openai/v1/chat/completions", {"model": "m", "messages": ASK, "max_tokens": 5})
    b = request_key("/v1/chat/completions", {"max_tokens": 5, "messages": ASK, "model": "m"})
    assert a == b
    assert a != request_key("/v1/chat/completions", {"max_tokens": 6, "messages": ASK, "model": "m"})


def test_scrub_removes_secrets_key_shapes_and_auth_fields():
    data = {"authorization": "Bearer x", "note": "key " + "sk-" + "abcdefghijklmnopqrstuvwxyz here", "n": 3,
            "nested": [{"Api_Key": "v", "text": "secret-value-123 again"}]}
    cleaned = scrub(data, ["secret-value-123"])
    assert cleaned == {"note": "key [REDACTED] here", "n": 3, "nested": [{"text": "[REDACTED] again"}]}


# ----- the live fallback (issue 5): the SDK retries first, then the recording answers ----------------

def record_then_fail(handler_after: Scripted, *, max_retries: int = 2) -> llm.ModelAccess:
    recorder(Scripted(ok("recorded answer"))).complete(ASK, max_tokens=20)
    return connect("live", api_key=KEY, transport=handler_after.transport(), recording="run",
                   max_retries=max_retries, load_env=False, quiet=True)


def test_live_answers_from_the_recording_after_the_sdk_retries_fail():
    handler = Scripted(status(429))
    access = record_then_fail(handler)
    assert "a failed call is answered from" in access.label
    answer = access.complete(ASK, max_tokens=20)
    assert answer.choices[0].message.content == "recorded answer"
    assert len(handler.requests) == 3  # all the SDK's attempts went to the live endpoint first
    assert access.notices[-1].startswith("live call failed (429); answered from recording ")
    assert access.notices[-1].endswith("run.json")


def test_live_falls_back_on_a_connection_error_too():
    handler = Scripted(httpx2.ConnectError("Network is unreachable"))
    access = record_then_fail(handler, max_retries=0)
    assert access.complete(ASK, max_tokens=20).choices[0].message.content == "recorded answer"
    assert "connection error" in access.notices[-1]


def test_live_fallback_without_that_request_recorded_keeps_the_error_and_says_so():
    handler = Scripted(status(503))
    access = record_then_fail(handler, max_retries=1)
    with pytest.raises(ModelUnavailable) as raised:
        access.complete([{"role": "user", "content": "Something never recorded"}], max_tokens=20)
    assert_fields(raised.value, reason="server error", status=503, attempts=2)
    assert "has no recording of this exact request" in access.notices[-1]


def test_live_with_a_working_endpoint_does_not_use_the_recording():
    handler = Scripted(ok("fresh live answer"))
    access = record_then_fail(handler)
    assert access.complete(ASK, max_tokens=20).choices[0].message.content == "fresh live answer"
    assert access.notices == []


def test_a_recording_loads_its_exchanges_and_models(tmp_path):
    recorder(Scripted(ok("a"))).complete(ASK, max_tokens=20)
    saved = Recording.load(recording_path("run"))
    assert saved.models == ["openai/gpt-oss-120b"]
    body = {"model": "openai/gpt-oss-120b", "messages": ASK, "max_tokens": 20, "temperature": 0}
    assert saved.lookup("/v1/chat/completions", body)["choices"][0]["message"]["content"] == "a"
    assert isinstance(RecordingMissing("x"), openai.OpenAIError)  # passes through the SDK unchanged


# ----- a malformed recording raises the recordings' error naming the field (issue 25 item 5) --------

@pytest.mark.parametrize("case,field", [("deep exchanges", "exchanges"), ("long integer", "exchanges"),
                                        ("deep whole file", "file"), ("not an object", "format"),
                                        ("exchange a list", "exchanges[0]")])
def test_a_malformed_recording_raises_bad_recording_naming_the_field(case, field, tmp_path):
    from helpers.model.recordings import BadRecording, Recording

    deep = "[" * 100_000 + "]" * 100_000
    text = {"deep exchanges": '{"format": 1, "exchanges": [' + deep + "]}",
            "long integer": '{"format": 1, "exchanges": [{"request": {"path": "/chat/completions", "body": {}}, '
                            '"response": {"status": ' + "9" * 5000 + ', "body": {}}}]}',
            "deep whole file": deep, "not an object": "[]",
            "exchange a list": '{"format": 1, "exchanges": [[]]}'}[case]
    path = tmp_path / "rec.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BadRecording) as refused:
        Recording.load(path)
    assert refused.value.field == field and isinstance(refused.value, RecordingMissing)
