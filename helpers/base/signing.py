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
_override: list[bytes] = []


class SignatureError(ValueError):
    """A signed file does not match its signature (or its signature cannot be checked)."""


@contextlib.contextmanager
def using_key(key: bytes | str) -> Iterator[None]:
    """Sign and check with ``key`` inside the block (a notebook demo, a test) instead of the environment's."""
    _override.append(key.encode() if isinstance(key, str) else bytes(key))
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
    return path.with_name(path.name + ".sig")


def signature(data: bytes, key: bytes) -> str:
    """The hex HMAC-SHA256 of ``data`` under ``key``."""
    return hmac.new(key, data, hashlib.sha256).hexdigest()


def write_signed(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically, with its signature beside it if a key is configured.

    The file and its signature are written together (``write_files_atomic``): a failure leaves the old
    pair whole, never a new file under an old signature that would refuse to load.
    """
    path = Path(path)
    key = signing_key()
    files = [(path, data)]
    if key is not None:
        files.append((signature_path(path), (signature(data, key) + "\n").encode("ascii")))
    write_files_atomic(files)
    return path


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
                             "are loaded. Save it again with the key set, or unset the key to load unsigned files")
    expected = sig_path.read_text(encoding="ascii").strip()
    if not hmac.compare_digest(expected, signature(path.read_bytes(), key)):
        raise SignatureError(f"{name} does not match its signature: it was changed after it was saved (or signed "
                             "with another key). It was not loaded. Restore the file, or save it again if you "
                             "trust its contents")
