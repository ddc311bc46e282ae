"""Signed files: an HMAC-SHA256 of a file's name and exact bytes, kept beside it in ``NAME.sig``, made
with a local secret, so that a saved state or a recording edited by hand, or copied under another
name, is refused when it is loaded.

The key comes from ``MEMORY_SIGNING_KEY`` in the environment (``connect()`` reads ``.env`` into
it) or from ``using_key(...)``; it is never printed or written anywhere, and an empty or blank key is
refused. With no key, files are neither signed nor checked, unless a ``.sig`` file says a file was signed.
A loader calls ``read_verified(path)``: the file is read once, and the bytes checked are the bytes it
parses, so a file swapped between a check and a second read cannot load unchecked.

A signature proves who wrote a file, not that it is the latest: an older save, restored together with
its own ``.sig``, is validly signed and loads, and with it anything ``forget()`` has erased since (its
content only: a saved state never sets a memory's defences, which are the caller's, and ``load`` says in
one line when the file was saved under other ones). A signature covers what the file holds, so a saved
state's identity (``save(..., identity=...)``) is signed with it: a state copied from another user's
folder under the same name is refused by ``load(..., identity=...)``, not by the signature.
``forget()`` reaches the memory in hand and the files saved again after it; older copies (backups,
other folders) keep what they held, so delete or overwrite them too.
"""
from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import unicodedata
from collections.abc import Iterator
from pathlib import Path

from helpers.base.files import write_files_atomic

KEY_ENV = "MEMORY_SIGNING_KEY"
SIGNATURE_FORMAT = "v2"  # the HMAC covers the file's name and its bytes; a bare hex digest is the old format
_override: list[bytes | None] = []


class SignatureError(ValueError):
    """A signed file does not match its signature (or its signature cannot be checked)."""


def _key_bytes(key: bytes | str, where: str) -> bytes:
    raw = key.encode() if isinstance(key, str) else bytes(key)
    # str: any Unicode whitespace and format characters (a zero-width space or a BOM alone looks blank too)
    if not (any(not ch.isspace() and unicodedata.category(ch) != "Cf" for ch in key) if isinstance(key, str)
            else raw.strip()):
        raise SignatureError(f"a signing key must not be empty or blank: the key {where} is "
                             f"{'empty' if not raw else 'only whitespace or invisible characters'}, and such a key protects nothing. Use a long random secret, e.g. the output of: python -c "
                             "\"import secrets; print(secrets.token_hex(32))\"; or no key at all "
                             f"({'using_key(None)' if where == 'given to using_key' else f'remove {KEY_ENV} from .env'})")
    return raw


@contextlib.contextmanager
def using_key(key: bytes | str | None) -> Iterator[None]:
    """Sign and check with ``key`` inside the block (a notebook demo, a test) instead of the environment's;
    ``None`` means no key (files neither signed nor checked), whatever ``MEMORY_SIGNING_KEY`` says.
    An empty or blank key is refused (``SignatureError``)."""
    _override.append(None if key is None else _key_bytes(key, "given to using_key"))
    try:
        yield
    finally:
        _override.pop()


def signing_key() -> bytes | None:
    """The key in use: the innermost ``using_key``, else ``MEMORY_SIGNING_KEY``, else None.
    A ``MEMORY_SIGNING_KEY`` that is set but empty or blank is refused (``SignatureError``)."""
    if _override:
        return _override[-1]
    value = os.environ.get(KEY_ENV)
    return None if value is None else _key_bytes(value, f"in {KEY_ENV}")


def signature_path(path: Path) -> Path:
    """Where ``path``'s signature is kept: ``NAME.sig`` beside it."""
    return path.with_name(path.name + ".sig")


def signature(data: bytes, key: bytes, name: str | None = None) -> str:
    """The hex HMAC-SHA256 of ``name`` (a file's name) and ``data`` under ``key``; with no name, of
    ``data`` alone (the format before signatures covered the name, kept to recognise old ``.sig`` files)."""
    message = data if name is None else b"%s\0%s\0%s" % (SIGNATURE_FORMAT.encode(), os.fsencode(name), data)
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def _signature_file(name: str, data: bytes, key: bytes) -> bytes:
    return f"{SIGNATURE_FORMAT} {signature(data, key, name)} {json.dumps(name)}\n".encode("ascii")


def write_signed(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically, with its signature beside it if a key is configured.

    The file and its signature are written together (``write_files_atomic``): a failure leaves the old
    pair whole, never a new file under an old signature that would refuse to load. With no key, a
    signature left by an earlier, signed save is removed: it no longer matches the file.
    """
    path = Path(path)
    key = signing_key()
    files = [(path, data)]
    if key is not None:
        files.append((signature_path(path), _signature_file(path.name, data, key)))
    write_files_atomic(files)
    if key is None:
        signature_path(path).unlink(missing_ok=True)
    return path


def sign_file(path: str | Path) -> Path:
    """Sign a file you trust as it is (e.g. one saved before the key was set, or signed before signatures
    covered the file's name); returns the ``.sig`` path."""
    key, path = signing_key(), Path(path)
    if key is None:
        raise SignatureError(f"no signing key is set: put {KEY_ENV}=... in .env (connect() reads it) or export it, "
                             "then sign the file")
    sig_path = signature_path(path)
    write_files_atomic([(sig_path, _signature_file(path.name, path.read_bytes(), key))])
    return sig_path


def _refusal(name: str, sig_path: Path, data: bytes, stored: bytes, key: bytes) -> str | None:
    """Why ``data``, read from a file called ``name``, does not match the signature ``stored``; None if it does."""
    changed = (f"{name} does not match its signature: it was changed after it was saved (or signed with another "
               "key). It was not loaded. Restore the file, or, if you trust its contents, sign it again with "
               "helpers.base.signing.sign_file(path)")
    if hmac.compare_digest(stored.strip(), _signature_file(name, data, key).strip()):
        return None  # the whole .sig as it was written: an edit anywhere in it is a mismatch
    parts = stored.strip().split(b" ", 2)
    if len(parts) != 3 or parts[0] != SIGNATURE_FORMAT.encode():
        if hmac.compare_digest(stored.strip(), signature(data, key).encode("ascii")):
            return (f"{name} has a signature in the old format ({sig_path.name} was made before signatures covered "
                    "the file's name as well as its contents), so it is no longer accepted. It was not loaded. If you "
                    "trust the file, sign it again with helpers.base.signing.sign_file(path)")
        return changed
    try:
        signed_name = json.loads(parts[2].decode("ascii"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return changed
    if (isinstance(signed_name, str) and signed_name != name
            and hmac.compare_digest(parts[1], signature(data, key, signed_name).encode("ascii"))):
        return (f"{name} carries the signature of a file called {signed_name}: a signature covers the file's name as "
                "well as its contents, so a signed file copied or renamed is refused. It was not loaded. Load it "
                f"under its own name ({signed_name}), or, if you trust this copy, sign it with "
                "helpers.base.signing.sign_file(path)")
    return changed


def read_verified(path: str | Path) -> bytes:
    """The bytes of ``path``, read once and checked against its signature: parse these, never the file again.

    With a key configured the file must carry a valid signature (``SignatureError`` otherwise, saying what
    to do); with no key, a file that has one cannot be checked and is refused too. A file with neither key
    nor signature is returned unchecked.
    """
    path = Path(path)
    key, sig_path = signing_key(), signature_path(path)
    data = path.read_bytes()
    name = path.name
    try:
        stored = sig_path.read_bytes()  # bytes: an edited .sig (any byte) is a mismatch, not a decode error
    except FileNotFoundError:
        stored = None
    if key is None:
        if stored is not None:
            raise SignatureError(f"{name} is signed, but no signing key is set: put {KEY_ENV}=... in .env (the key "
                                 "it was signed with) to check it, or delete the .sig file if you trust the file")
        return data
    if stored is None:
        raise SignatureError(f"{name} has no signature ({sig_path.name}) and {KEY_ENV} is set, so only signed files "
                             "are loaded. If you trust it as it is (e.g. saved before the key was set), sign it with "
                             "helpers.base.signing.sign_file(path); or unset the key to load unsigned files")
    refusal = _refusal(name, sig_path, data, stored, key)
    if refusal:
        raise SignatureError(refusal)
    return data


def check_file(path: Path) -> None:
    """Refuse ``path`` (``SignatureError``) if it should be signed and does not match its signature.
    A loader should call ``read_verified`` instead and parse the bytes it returns: this reads the file once
    to check it, and whatever reads it next may read a file swapped in since."""
    read_verified(path)
