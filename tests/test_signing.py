"""Signed files: the bytes returned are the bytes checked, the signature covers the file's name, empty or blank keys
are refused, and an older save restored with its own signature loads (a signature proves who wrote a file, not that
it is the latest)."""
import json
import shutil

import pytest

from helpers.base import signing
from helpers.memory.erasure import forget
from helpers.memory.state import load, save
from helpers.memory.summary import SummaryMemory
from helpers.model.recordings import Recording

KEY = "a test key, never printed"


def echo(messages, existing):
    return " | ".join([existing or "S", *(m["content"] for m in messages)])


@pytest.fixture(autouse=True)
def no_key_from_the_environment(monkeypatch):
    monkeypatch.delenv(signing.KEY_ENV, raising=False)


def test_a_file_changed_between_its_check_and_its_read_is_refused_never_returned(tmp_path, monkeypatch):
    path = tmp_path / "state.json"
    real_check, checks = signing._check, []

    def check_then_swap(name, chunks, stored, key):
        real_check(name, chunks, stored, key)
        checks.append(name)
        if len(checks) == 1:
            path.write_bytes(b'{"summary": "buy Zorbex"}')  # the same file, rewritten right after it was checked

    with signing.using_key(KEY):
        signing.write_signed(path, b'{"summary": "rent 25,000"}')
        assert signing.read_verified(path) == b'{"summary": "rent 25,000"}'
        monkeypatch.setattr(signing, "_check", check_then_swap)
        checks.clear()
        signing.write_signed(path, b'{"summary": "rent 25,000"}')
        with pytest.raises(signing.SignatureError) as refused:
            signing.read_verified(path)
    assert refused.value.problem == "changed" and len(checks) == 1


def test_an_edited_signed_recording_is_refused(tmp_path):
    with signing.using_key(KEY):
        recording = Recording(tmp_path / "r.json")
        recording.add("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]},
                      {"choices": [{"message": {"content": "Ask a SEBI-registered advisor."}}]}, status=200,
                      endpoint="test", secrets=[])
        assert Recording.load(recording.path).exchanges
        recording.path.write_bytes(recording.path.read_bytes().replace(b"Ask a SEBI", b"Buy Zorbex"))
        with pytest.raises(signing.SignatureError) as refused:
            Recording.load(recording.path)
    assert refused.value.problem == "changed"


def test_a_signed_file_copied_under_another_name_with_its_signature_is_refused(tmp_path):
    memory = SummaryMemory("sys", echo)
    memory.add_message("user", "my salary is 90,000")
    with signing.using_key(KEY):
        path = save(memory, tmp_path / "state.json", identity="asha")
        copy = tmp_path / "other_user.json"
        shutil.copy(path, copy)
        shutil.copy(signing.signature_path(path), signing.signature_path(copy))
        with pytest.raises(signing.SignatureError) as refused:
            load(copy, echo, identity="asha")
        assert refused.value.problem == "renamed" and "a file called state.json" in str(refused.value)
        assert load(path, echo, identity="asha").archive == memory.archive  # the original loads under its own name
        signing.sign_file(copy)  # someone who trusts the copy signs it under its new name
        assert load(copy, echo, identity="asha").archive == memory.archive


def test_a_signature_holds_the_format_the_digest_and_the_name_and_an_older_format_is_refused(tmp_path):
    with signing.using_key(KEY):
        path = signing.write_signed(tmp_path / "state.json", b"{}")
    version, digest, name = signing.signature_path(path).read_text(encoding="ascii").split(" ", 2)
    assert version == "v2" and json.loads(name) == "state.json"
    assert digest == signing.signature(b"{}", KEY.encode(), "state.json") != signing.signature(b"{}", KEY.encode(), "x")
    signing.signature_path(path).write_text("0" * 64 + "\n", encoding="ascii")  # a bare digest: the old format
    with signing.using_key(KEY), pytest.raises(signing.SignatureError) as refused:
        signing.read_verified(path)
    assert refused.value.problem == "changed"


def test_unsigned_files_are_refused_with_a_key_and_signed_ones_without(tmp_path):
    path = save(SummaryMemory("sys", echo), tmp_path / "state.json")
    with signing.using_key(KEY), pytest.raises(signing.SignatureError) as refused:
        load(path, echo)
    assert refused.value.problem == "unsigned"
    with signing.using_key(KEY):
        signing.sign_file(path)
    with pytest.raises(signing.SignatureError) as refused:
        load(path, echo)
    assert refused.value.problem == "no key"
    with signing.using_key(None), pytest.raises(signing.SignatureError) as refused:
        signing.sign_file(path)
    assert refused.value.problem == "no key"


@pytest.mark.parametrize("key", ["", " ", "\t\n", b"", b"  ", "\u00a0\u2003", "\u200b", "\ufeff", " \u00ad\u200d\n"])
def test_an_empty_or_blank_key_is_refused(key, tmp_path, monkeypatch):  # invisible: blank to whoever reads .env
    with pytest.raises(signing.SignatureError) as refused, signing.using_key(key):
        pass
    assert refused.value.problem == "blank key"
    if isinstance(key, str):
        path = save(SummaryMemory("sys", echo), tmp_path / "state.json")  # saved with no key
        monkeypatch.setenv(signing.KEY_ENV, key)
        for attempt in (lambda: save(SummaryMemory("sys", echo), path, identity="a"), lambda: load(path, echo)):
            with pytest.raises(signing.SignatureError) as refused:
                attempt()
            assert refused.value.problem == "blank key" and f"remove {signing.KEY_ENV} from .env" in str(refused.value)
    monkeypatch.setenv(signing.KEY_ENV, "  a real key with spaces around it  ")
    assert signing.signing_key() == b"  a real key with spaces around it  "


def test_a_restored_older_save_loads_as_the_module_says(tmp_path):
    memory = SummaryMemory("sys", echo)
    memory.add_message("user", "my salary is 90,000")
    with signing.using_key(KEY):
        path = save(memory, tmp_path / "state.json", identity="asha")
        older = (path.read_bytes(), signing.signature_path(path).read_bytes())
        forget(memory, "90,000", progress=None)
        save(memory, path, identity="asha")
        path.write_bytes(older[0])
        signing.signature_path(path).write_bytes(older[1])
        assert "90,000" in json.dumps(load(path, echo, identity="asha").archive)
    assert "not that it is the latest" in " ".join(signing.__doc__.split())
