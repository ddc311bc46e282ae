"""Signed files: an HMAC-SHA256 of a file's name and bytes in ``NAME.sig`` beside it, with a key that is never
shown, so a saved state or recording edited by hand, or copied under another name, is refused. A signature proves
who wrote a file, not that it is the latest: an older save restored with its own ``.sig`` loads (see the README)."""
from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import json
import os
import unicodedata
from collections.abc import Iterable, Iterator
from pathlib import Path

from helpers.base.files import write_files_atomic
from helpers.base.json_limits import too_large

KEY_ENV = "MEMORY_SIGNING_KEY"
SIGNATURE_FORMAT = "v2"  # the HMAC covers the file's name and its bytes (a bare hex digest, v1, is refused)
_override: list[bytes | None] = []


class SignatureError(ValueError):
    """A file's signature is refused or cannot be made; ``problem`` says why: "changed", "renamed", "unsigned",
    "no key" or "blank key"."""

    def __init__(self, problem: str, message: str) -> None:
        super().__init__(message)
        self.problem = problem


def _key_bytes(key: bytes | str, where: str, undo: str) -> bytes:
    raw = key.encode() if isinstance(key, str) else bytes(key)
    # a str is blank if it holds only whitespace and format characters (a zero-width space, a BOM)
    if all(ch.isspace() or unicodedata.category(ch) == "Cf" for ch in key) if isinstance(key, str) else not raw.strip():
        raise SignatureError("blank key", (
            f"a signing key must not be empty or blank: the key {where} is "
            f"{'empty' if not raw else 'only whitespace or invisible characters'}, and such a key protects "
            "nothing. Use a long random secret, e.g. the output of: python -c \"import secrets; "
            f"print(secrets.token_hex(32))\"; or no key at all ({undo})"))
    return raw


@contextlib.contextmanager
def using_key(key: bytes | str | None) -> Iterator[None]:
    """Sign and check with ``key`` inside the block instead of the environment's; ``None`` means no key."""
    _override.append(None if key is None else _key_bytes(key, "given to using_key", "using_key(None)"))
    try:
        yield
    finally:
        _override.pop()


def signing_key() -> bytes | None:
    """The key in use: the innermost ``using_key``, else ``MEMORY_SIGNING_KEY`` (refused if blank), else None."""
    if _override:
        return _override[-1]
    value = os.environ.get(KEY_ENV)
    return None if value is None else _key_bytes(value, f"in {KEY_ENV}", f"remove {KEY_ENV} from .env")


def signature_path(path: Path) -> Path:
    """Where ``path``'s signature is kept: ``NAME.sig`` beside it."""
    return path.with_name(path.name + ".sig")


def _macs(key: bytes, chunks: Iterable[bytes], names: Iterable[str]) -> dict[str, str]:
    """The hex HMAC-SHA256 of a file's name and the bytes in ``chunks``, for each of ``names``, read in one pass."""
    macs = {name: hmac.new(key, b"%s\0%s\0" % (SIGNATURE_FORMAT.encode(), os.fsencode(name)), hashlib.sha256)
            for name in names}
    for chunk in chunks:
        for mac in macs.values():
            mac.update(chunk)
    return {name: mac.hexdigest() for name, mac in macs.items()}


def signature(data: bytes, key: bytes, name: str) -> str:
    """The hex HMAC-SHA256 of a file's ``name`` and ``data``."""
    return _macs(key, [data], [name])[name]


def _signature_line(name: str, digest: str) -> bytes:
    return f"{SIGNATURE_FORMAT} {digest} {json.dumps(name)}\n".encode("ascii")


def write_signed(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` and, with a key, its signature, atomically together; with no key, remove
    an old signature, which would no longer match."""
    path, key = Path(path), signing_key()
    signed = [(signature_path(path), _signature_line(path.name, signature(data, key, path.name)))] if key else []
    write_files_atomic([(path, data), *signed])
    if key is None:
        signature_path(path).unlink(missing_ok=True)
    return path


def sign_file(path: str | Path) -> Path:
    """Sign a file you trust as it is (saved before the key was set, or signed in an older format)."""
    key, path = signing_key(), Path(path)
    if key is None:
        raise SignatureError("no key", f"no signing key is set: put {KEY_ENV}=... in .env (connect() reads it) "
                             "or export it, then sign the file")
    sig_path = signature_path(path)
    write_files_atomic([(sig_path, _signature_line(path.name, signature(path.read_bytes(), key, path.name)))])
    return sig_path


def _check(name: str, chunks: Iterable[bytes], stored: bytes, key: bytes) -> None:
    """Refuse the bytes in ``chunks`` of a file called ``name`` unless they match ``stored``, saying why."""
    stored, signed = stored.strip(), None
    parts = stored.split(b" ", 2)
    with contextlib.suppress(ValueError):  # a .sig that is not ours: a mismatch, said below
        signed = json.loads(parts[2].decode("ascii")) if len(parts) == 3 else None
    other = [signed] if isinstance(signed, str) and signed != name else []
    macs = _macs(key, chunks, [name, *other])
    if hmac.compare_digest(stored, _signature_line(name, macs[name]).strip()):
        return  # the whole .sig as it was written: an edit anywhere in it is a mismatch
    if other and hmac.compare_digest(parts[1], macs[signed].encode("ascii")):
        raise SignatureError("renamed", (
            f"{name} carries the signature of a file called {signed}: a signature covers the file's name "
            "as well as its contents, so a signed file copied or renamed is refused. It was not loaded. Load "
            f"it under its own name ({signed}), or, if you trust this copy, sign it with "
            "helpers.base.signing.sign_file(path)"))
    raise SignatureError("changed", (
        f"{name} does not match its signature: it was changed after it was saved (or signed with another key). "
        "It was not loaded. Restore the file, or, if you trust its contents, sign it again with "
        "helpers.base.signing.sign_file(path)"))


def read_verified(path: str | Path, *, max_bytes: int | None = None, setting: str = "the limit") -> bytes:
    """The bytes of ``path``, read once (refused over ``max_bytes`` before it is read): with a key, only if validly
    signed (checked in chunks first, then on the bytes returned); with none, only if unsigned."""
    path = Path(path)
    key, sig_path = signing_key(), signature_path(path)
    stored: bytes | None = None
    if sig_path.is_file():
        with sig_path.open("rb") as file:
            stored = file.read(1 << 16)  # bytes: an edited .sig (any byte) is a mismatch
    if key is None and stored is not None:
        raise SignatureError("no key", f"{path.name} is signed, but no signing key is set: put {KEY_ENV}=... "
                             "in .env (the key it was signed with) to check it, or delete the .sig file if "
                             "you trust the file")
    if key is not None and stored is None:
        raise SignatureError("unsigned", (
            f"{path.name} has no signature ({sig_path.name}) and {KEY_ENV} is set, so only signed files are "
            "loaded. If you trust it as it is (e.g. saved before the key was set), sign it with "
            "helpers.base.signing.sign_file(path); or unset the key to load unsigned files"))
    with path.open("rb") as file:
        size = os.fstat(file.fileno()).st_size
        if max_bytes is not None and size > max_bytes:
            raise too_large(path.name, size, max_bytes, setting)
        if key is not None:
            _check(path.name, iter(functools.partial(file.read, 1 << 20), b""), stored, key)  # type: ignore[arg-type]
            file.seek(0)
        data = file.read() if max_bytes is None else file.read(max_bytes + 1)  # one that grew: load_limited says so
    if key is not None:
        _check(path.name, [data], stored, key)  # type: ignore[arg-type]  # the bytes returned are the bytes checked
    return data
