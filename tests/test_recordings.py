"""Recordings: bodies only, no key; exact-match replay in the recorded order with the closest difference explained;
files bounded at the door and checked; and in live mode a call that failed for good answered from the recording."""

import json

import httpx2
import pytest

from helpers.base import signing
from helpers.base.errors import SettingError
from helpers.model import recordings
from helpers.model.connect import connect
from helpers.model.errors import ModelUnavailable, RecordingMissing
from helpers.model.recordings import BadRecording, Recording, recording_path, request_key
from tests.support.mock_api import assert_fields, Scripted, ok, status

KEY = "gsk_" + "RECORDINGTESTKEY0123456789abcdefghij"
OTHER_KEY = "another-secret-of-no-known-shape"  # set for another endpoint: scrubbed because it is set
ASK = [{"role": "user", "content": "What is my salary?"}]

pytestmark = pytest.mark.usefixtures("model_env")


def recorder(*answers):
    return connect("record", api_key=KEY, transport=Scripted(*answers).transport(), recording="run", load_env=False,
                   quiet=True)


def replay():
    return connect("replay", recording="run", load_env=False, quiet=True)


def saved() -> dict:
    return json.loads(recording_path("run").read_text(encoding="utf-8"))


def test_a_recording_holds_bodies_only_with_every_key_scrubbed(monkeypatch):
    monkeypatch.setenv("LLM_API_KEY", OTHER_KEY)
    access = recorder(status(429), ok("Noted."))
    access.complete([{"role": "user", "content": f"my key is {KEY} and the other is {OTHER_KEY}"}], max_tokens=20)
    access.complete(ASK, max_tokens=20)
    text = recording_path("run").read_text(encoding="utf-8")
    assert KEY not in text and OTHER_KEY not in text and "bearer" not in text.lower()
    exchanges = saved()["exchanges"]
    assert [set(e["request"]) for e in exchanges] == [{"path", "body"}] * 2  # the 429 was not recorded
    assert [e["response"]["status_code"] for e in exchanges] == [200, 200] and saved()["models"] == [
        "openai/gpt-oss-120b"]
    assert "[REDACTED]" in exchanges[0]["request"]["body"]["messages"][0]["content"]


def test_replay_answers_exact_requests_in_the_recorded_order_and_recording_again_replaces_them():
    first = recorder(ok("first answer"), ok("second answer"))
    for _ in range(2):
        first.complete(ASK, max_tokens=20)
    again = replay()
    assert [again.complete(ASK, max_tokens=20).choices[0].message.content for _ in range(3)] == [
        "first answer", "second answer", "second answer"]  # the last one repeats
    other = [{"role": "user", "content": "How old am I?"}]
    recorder(ok("age answer")).complete(other, max_tokens=20)
    recorder(ok("new salary answer")).complete(ASK, max_tokens=20)
    later = replay()
    assert later.complete(ASK, max_tokens=20).choices[0].message.content == "new salary answer"
    assert later.complete(other, max_tokens=20).choices[0].message.content == "age answer"
    assert len(saved()["exchanges"]) == 2 and "no network" in later.label


def test_a_request_the_recording_does_not_hold_names_the_file_and_the_closest_difference():
    recorder(ok("answer 1")).complete(ASK, max_tokens=64)
    access = replay()
    with pytest.raises(RecordingMissing) as setting:
        access.complete(ASK, max_tokens=65)
    assert_fields(setting.value, reason="no recording", retry_can_help=False)
    assert "run.json" in str(setting.value) and "max_tokens=65 (recorded 64)" in str(setting.value)
    changed = [*ASK, {"role": "assistant", "content": "x"}, {"role": "user", "content": "And my age?"}]
    with pytest.raises(RecordingMissing) as messages:
        access.client.chat.completions.create(model=access.model, messages=changed, max_tokens=64)
    assert "matches the first 1 messages; message 2 (assistant) differs" in str(messages.value)


def test_the_match_key_ignores_key_order_and_the_servers_prefix_and_names_are_plain_file_names():
    key = request_key("/openai/v1/chat/completions", {"model": "m", "messages": ASK, "max_tokens": 5})
    assert key == request_key("/v1/chat/completions", {"max_tokens": 5, "messages": ASK, "model": "m"})
    assert key != request_key("/v1/chat/completions", {"max_tokens": 6, "messages": ASK, "model": "m"})
    with pytest.raises(SettingError) as refused:
        recording_path("../secrets")
    assert (refused.value.setting, refused.value.value) == ("recording", "../secrets")


@pytest.mark.parametrize("text, field", [
    (b"{not json", "file"), (b'{"format": 1, "exchanges": [\xff]}', "file"), (b"[" * 50 + b"]" * 50, "format"),
    (b'{"format": 1, "exchanges": [' + b"[" * 50 + b"]" * 50 + b"]}", "exchanges[0]"), (b"[]", "format"),
    (b'{"format": 1, "exchanges": {}}', "exchanges"), (b'{"format": 1, "exchanges": [[]]}', "exchanges[0]"),
    (b'{"format": 1, "exchanges": [{"request": {"path": "p", "body": {}}}]}', "exchanges[0]"),
    (b'{"format": 1, "exchanges": [{"request": {"path": "p", "body": {}}, "response": {"body": "ok"}}]}',
     "exchanges[0]"),
])
def test_a_damaged_recording_is_refused_naming_the_part_at_fault(text, field):
    path = recording_path("run")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text)
    with pytest.raises(BadRecording) as refused:
        replay()
    assert refused.value.field == field and refused.value.reason == "no recording" and "record again" in str(
        refused.value)


@pytest.mark.parametrize("key", [None, "a signing key"])
def test_a_recording_larger_than_its_maximum_is_refused_from_its_size_before_it_is_read(monkeypatch, key):
    recorder(ok("fine")).complete(ASK)
    path = recording_path("run")
    with signing.using_key(key):
        if key:
            signing.sign_file(path)
        size = path.stat().st_size
        with monkeypatch.context() as patched:
            patched.setattr(signing, "read_verified", lambda *a, **k: pytest.fail("read before its size was checked"))
            with pytest.raises(BadRecording) as refused:
                Recording.load(path, max_bytes=size - 1)
        assert_fields(refused.value, reason="no recording", setting="MAX_RECORDING_BYTES", field="file")
        assert f"{size:,} bytes, more than the {size - 1:,}" in str(refused.value)
        assert Recording.load(path, max_bytes=size).exchanges  # at the bound: read (and verified) as usual
    assert recordings.MAX_RECORDING_BYTES > 1_000_000  # the default: far above a notebook's recording


def test_an_edited_signed_recording_is_refused():
    with signing.using_key("k"):
        recorder(ok("Ask a SEBI-registered advisor.")).complete(ASK)
        path = recording_path("run")
        path.write_text(path.read_text().replace("Ask a SEBI-registered advisor.", "Buy Zorbex now."))
        with pytest.raises(signing.SignatureError):
            replay()


# ----- live mode: the SDK retries first, then the recording answers ----------------------------------------------

def record_then_fail(*answers, max_retries: int = 2):
    recorder(ok("recorded answer")).complete(ASK, max_tokens=20)
    handler = Scripted(*answers)
    return handler, connect("live", api_key=KEY, transport=handler.transport(), recording="run",
                            max_retries=max_retries, load_env=False, quiet=True)


@pytest.mark.parametrize("answer, retries, requests, why", [
    (status(429), 2, 3, "429"), (httpx2.ConnectError("Network is unreachable"), 0, 1, "connection error: ConnectError"),
    (httpx2.Response(200, text="<html>log in</html>"), 2, 1, "answered 200 without a usable chat completion"),
    (httpx2.Response(429, headers={"retry-after": "3600"}), 2, 1, "429")])  # a wait the SDK will not make
def test_a_live_call_that_fails_for_good_is_answered_from_the_recording(answer, retries, requests, why):
    handler, access = record_then_fail(answer, max_retries=retries)
    assert "a failed call is answered from" in access.label
    assert access.complete(ASK, max_tokens=20).choices[0].message.content == "recorded answer"
    assert len(handler.requests) == requests  # the SDK's attempts went to the live endpoint first
    assert access.notices[-1] == f"live call failed ({why}); answered from recording {recording_path('run')}"


def test_a_live_fallback_without_that_request_keeps_the_error_and_a_working_endpoint_never_uses_it():
    _, access = record_then_fail(status(503), max_retries=1)
    with pytest.raises(ModelUnavailable) as raised:
        access.complete([{"role": "user", "content": "Something never recorded"}], max_tokens=20)
    assert_fields(raised.value, reason="server error", status=503, attempts=2)
    assert "has no recording of this exact request" in access.notices[-1]
    _, working = record_then_fail(ok("fresh live answer"))
    assert working.complete(ASK, max_tokens=20).choices[0].message.content == "fresh live answer"
    assert working.notices == []
