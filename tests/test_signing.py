"""Signed files are read once and the bytes checked are the bytes parsed; the signature covers the file's
name; empty or blank keys are refused; old signatures are refused with what to do."""
import json
import shutil
from pathlib import Path

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


def recording(folder, answer="Ask a SEBI-registered advisor."):
    made = Recording(folder / "r.json")
    made.add("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]},
             {"choices": [{"message": {"content": answer}}]}, status=200, endpoint="test", secrets=[])
    return made.path


def answer_of(loaded):
    return loaded.exchanges[0]["response"]["body"]["choices"][0]["message"]["content"]


def swap_after_first_read(monkeypatch, path, planted):
    """Path.read_bytes returns ``path``'s true bytes once, then puts ``planted`` in its place on disk (a file
    swapped right after it was checked); counts the reads of ``path``."""
    reads, real = [], Path.read_bytes

    def read_bytes(self):
        data = real(self)
        if self == path:
            reads.append(data)
            if len(reads) == 1:
                path.write_bytes(planted)
        return data
    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: read_bytes(self).decode(*a, **k))
    return reads


# ----- read once: a swap between check and read ----------------------------------------------------------
def test_a_recording_swapped_after_its_check_loads_the_checked_bytes_not_the_swapped_ones(tmp_path, monkeypatch):
    with signing.using_key(KEY):
        path = recording(tmp_path)
        planted = path.read_bytes().replace(b"Ask a SEBI-registered advisor.", b"Buy Zorbex now.")
        reads = swap_after_first_read(monkeypatch, path, planted)
        loaded = Recording.load(path)
    assert answer_of(loaded) == "Ask a SEBI-registered advisor." and len(reads) == 1
    assert path.read_bytes() == planted  # the swap did happen, after the only read


def test_a_recording_swapped_before_its_read_is_refused(tmp_path):
    with signing.using_key(KEY):
        path = recording(tmp_path)
        path.write_bytes(path.read_bytes().replace(b"Ask a SEBI-registered advisor.", b"Buy Zorbex now."))
        with pytest.raises(signing.SignatureError) as refused:
            Recording.load(path)
        assert refused.value.problem == "changed"


def test_read_verified_reads_the_file_once_and_returns_what_it_checked(tmp_path, monkeypatch):
    path = tmp_path / "state.json"
    with signing.using_key(KEY):
        signing.write_signed(path, b'{"summary": "rent 25,000"}')
        reads = swap_after_first_read(monkeypatch, path, b'{"summary": "buy Zorbex"}')
        assert signing.read_verified(path) == b'{"summary": "rent 25,000"}'
        assert len(reads) == 1
        with pytest.raises(signing.SignatureError) as refused:
            signing.read_verified(path)  # the next load reads the swapped file, and refuses it
        assert refused.value.problem == "changed"


def test_a_saved_state_swapped_after_its_check_loads_the_checked_bytes_not_the_swapped_ones(tmp_path, monkeypatch):
    memory = SummaryMemory("sys", echo)
    memory.add_message("user", "my rent is 25,000")
    with signing.using_key(KEY):
        path = save(memory, tmp_path / "state.json")
        reads = swap_after_first_read(monkeypatch, path, path.read_bytes().replace(b"25,000", b"99,000"))
        loaded = load(path, echo)
    assert loaded.archive == memory.archive and len(reads) == 1 and b"99,000" in path.read_bytes()


# ----- the signature covers the file's name --------------------------------------------------------------
def test_a_signed_file_copied_under_another_name_with_its_signature_is_refused(tmp_path):
    memory = SummaryMemory("sys", echo, max_turns_before_summary=2, turns_to_keep_verbatim=1)
    memory.add_message("user", "my salary is 90,000")
    with signing.using_key(KEY):
        path = save(memory, tmp_path / "state.json")
        copy = tmp_path / "other_user.json"
        shutil.copy(path, copy)
        shutil.copy(signing.signature_path(path), signing.signature_path(copy))
        with pytest.raises(signing.SignatureError) as refused:
            load(copy, echo)
        assert refused.value.problem == "renamed" and "a file called state.json" in str(refused.value)
        assert "sign it with helpers.base.signing.sign_file(path)" in str(refused.value)
        assert load(path, echo).archive == memory.archive  # the original loads under its own name
        signing.sign_file(copy)  # someone who trusts the copy signs it under its new name
        assert load(copy, echo).archive == memory.archive


def test_a_signature_holds_the_format_the_digest_and_the_name(tmp_path):
    with signing.using_key(KEY):
        path = signing.write_signed(tmp_path / "state.json", b"{}")
    version, digest, name = signing.signature_path(path).read_text(encoding="ascii").split(" ", 2)
    assert version == "v2" and len(digest) == 64 and json.loads(name) == "state.json"
    assert digest == signing.signature(b"{}", KEY.encode(), "state.json") != signing.signature(b"{}", KEY.encode())


def test_a_signature_made_before_it_covered_the_name_is_refused_with_what_to_do(tmp_path):
    path = tmp_path / "state.json"
    path.write_bytes(b'{"a": 1}')
    old = signing.signature(b'{"a": 1}', KEY.encode())  # the old format: the bytes alone
    signing.signature_path(path).write_text(old + "\n", encoding="ascii")
    with signing.using_key(KEY):
        with pytest.raises(signing.SignatureError) as refused:
            signing.read_verified(path)
        assert refused.value.problem == "old format"
        assert "sign it again with helpers.base.signing.sign_file(path)" in str(refused.value)
        signing.sign_file(path)
        assert signing.read_verified(path) == b'{"a": 1}'
    signing.signature_path(path).write_text("0" * 64 + "\n", encoding="ascii")  # old-looking, but wrong
    with signing.using_key(KEY), pytest.raises(signing.SignatureError) as refused:
        signing.read_verified(path)
    assert refused.value.problem == "changed"


# ----- keys -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("key", ["", " ", "   ", "\t\n", b"", b"  ", "\u00a0\u2003",
                                 "\u200b", "\ufeff", " \u00ad\u200d\n"])  # invisible: as blank to whoever reads .env
def test_an_empty_or_blank_key_is_refused_in_using_key(key):
    with pytest.raises(signing.SignatureError) as refused, signing.using_key(key):
        pass
    assert refused.value.problem == "blank key"


@pytest.mark.parametrize("value", ["", "   ", "\t", "\ufeff"])
def test_an_empty_or_blank_key_in_the_environment_is_refused_on_save_and_load(value, tmp_path, monkeypatch):
    memory = SummaryMemory("sys", echo)
    path = save(memory, tmp_path / "state.json")  # saved with no key
    monkeypatch.setenv(signing.KEY_ENV, value)
    with pytest.raises(signing.SignatureError, match=f"the key in {signing.KEY_ENV} is") as refused:
        save(memory, path)  # the message names the variable to fix
    assert refused.value.problem == "blank key"
    assert "remove MEMORY_SIGNING_KEY from .env" in str(refused.value)
    with pytest.raises(signing.SignatureError) as refused:
        load(path, echo)
    assert refused.value.problem == "blank key"
    monkeypatch.setenv(signing.KEY_ENV, "  a real key with spaces around it  ")
    assert signing.signing_key() == b"  a real key with spaces around it  "


# ----- rollback: said, not refused ----------------------------------------------------------------------
def test_a_restored_older_save_loads_as_the_module_says(tmp_path):
    # a signature proves who wrote a file, not that it is the latest (helpers.base.signing's docstring)
    memory = SummaryMemory("sys", echo)
    memory.add_message("user", "my salary is 90,000")
    with signing.using_key(KEY):
        path = save(memory, tmp_path / "state.json")
        older = (path.read_bytes(), signing.signature_path(path).read_bytes())
        forget(memory, "90,000")
        save(memory, path)
        path.write_bytes(older[0])
        signing.signature_path(path).write_bytes(older[1])
        assert "90,000" in json.dumps(load(path, echo).archive)
    assert "not that it is the latest" in " ".join(signing.__doc__.split())
