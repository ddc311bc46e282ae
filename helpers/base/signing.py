"""Signed files: an HMAC-SHA256 of a file's exact bytes, kept beside it in ``NAME.sig``, made with a
local secret, so that a saved state or a recording edited by hand is refused when it is loaded.

The key comes from ``MEMORY_SIGNING_KEY`` in the environment (``connect()`` reads ``.env`` into
it) or from ``using_key(...)``; it is never printed or written anywhere. With no key, files are
neither signed nor checked, unless a ``.sig`` file says a file was signed.
"""
from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
from collections.abc import Iterator
from pathlib import Path

from helpers.base.files import write_files_atomic

KEY_ENV = "MEMORY_SIGNING_KEY"
_override: list[bytes | None] = []


class SignatureError(ValueError):
    """A signed file does not match its signature (or its signature cannot be checked)."""


@contextlib.contextmanager
def using_key(key: bytes | str | None) -> Iterator[None]:
    """Sign and check with ``key`` inside the block (a notebook demo, a test) instead of the environment's;
    ``None`` means no key (files neither signed nor checked), whatever ``MEMORY_SIGNING_KEY`` says."""
    if key is not None and not key:
        raise ValueError("a signing key must not be empty: an empty HMAC key protects nothing (use None for no key)")
    _override.append(None if key is None else key.encode() if isinstance(key, str) else bytes(key))
    try:
        yield
    finally:
        _override.pop()


def signing_key() -> bytes | None:
    """The key in use: the innermost ``using_key``, else ``MEMORY_SIGNING_KEY``, else None."""
    if _override:
        return _override[-1]
    value = os.environ.get(KEY_ENV, "")
    return value.encode() if value else None


def signature_path(path: Path) -> Path:
    """Where ``path``'s signature is kept: ``NAME.sig`` beside it."""
    return path.with_name(path.name + ".sig")


def signature(data: bytes, key: bytes) -> str:
    """The hex HMAC-SHA256 of ``data`` under ``key``."""
    return hmac.new(key, data, hashlib.sha256).hexdigest()


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
        files.append((signature_path(path), (signature(data, key) + "\n").encode("ascii")))
    write_files_atomic(files)
    if key is None:
        signature_path(path).unlink(missing_ok=True)
    return path


def sign_file(path: str | Path) -> Path:
    """Sign a file you trust as it is (e.g. one saved before the key was set); returns the ``.sig`` path."""
    key, path = signing_key(), Path(path)
    if key is None:
        raise SignatureError(f"no signing key is set: put {KEY_ENV}=... in .env (connect() reads it) or export it, "
                             "then sign the file")
    sig_path = signature_path(path)
    write_files_atomic([(sig_path, (signature(path.read_bytes(), key) + "\n").encode("ascii"))])
    return sig_path


def check_file(path: Path) -> None:
    """Refuse ``path`` (``SignatureError``) if it should be signed and its bytes do not match the signature.

    With a key configured every file must carry a valid signature; with no key, a file that has one
    cannot be checked and is refused too. A file with neither key nor signature is accepted.
    """
    key, sig_path = signing_key(), signature_path(path)
    name = path.name
    if key is None:
        if sig_path.exists():
            raise SignatureError(f"{name} is signed, but no signing key is set: put {KEY_ENV}=... in .env (the key "
                                 "it was signed with) to check it, or delete the .sig file if you trust the file")
        return
    if not sig_path.exists():
        raise SignatureError(f"{name} has no signature ({sig_path.name}) and {KEY_ENV} is set, so only signed files "
                             "are loaded. If you trust it as it is (e.g. saved before the key was set), sign it with "
                             "helpers.base.signing.sign_file(path); or unset the key to load unsigned files")
    expected = sig_path.read_bytes().strip()  # bytes: an edited .sig (any byte) is a mismatch, not a decode error
    if not hmac.compare_digest(expected, signature(path.read_bytes(), key).encode("ascii")):
        raise SignatureError(f"{name} does not match its signature: it was changed after it was saved (or signed "
                             "with another key). It was not loaded. Restore the file, or, if you trust its contents, "
                             "sign it again with helpers.base.signing.sign_file(path)")


def read_verified(path: str | Path) -> bytes:
    """The bytes of ``path``, once its signature has been checked (``check_file``)."""
    path = Path(path)
    check_file(path)
    return path.read_bytes()
