"""Keeping secrets out of every text the project shows or stores: server messages, labels, recordings.

The secrets are the values of ``settings.secret_variables()`` (the one list of secret variable names) and
the credentials written into ``LLM_BASE_URL``.
"""
from __future__ import annotations

import base64
import os
import re
from collections.abc import Iterable
from urllib.parse import unquote, urlsplit, urlunsplit

from helpers.model.settings import secret_variables

REDACTED = "[REDACTED]"
# Key shapes of the providers we know (Groq gsk_, OpenAI sk-...), scrubbed even if not configured.
KEY_SHAPES = re.compile(r"\b(?:gsk_[A-Za-z0-9]{20,}|sk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{20,})")


def configured_secrets(*extra: str | None) -> list[str]:
    """The secrets this process knows: the given ones, every secret variable's value, and credentials in LLM_BASE_URL."""
    found = [*extra, *(os.environ.get(name, "").strip() for name in secret_variables())]
    found += url_credentials(os.environ.get("LLM_BASE_URL", ""))
    return [secret for secret in dict.fromkeys(found) if secret]


def scrub_text(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret (whatever its length, longest first) and anything shaped like a key replaced."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return KEY_SHAPES.sub(REDACTED, text)


def url_credentials(url: str) -> list[str]:
    """The user name and password written into a URL (``http://user:pass@host/v1``), if any: as written,
    percent-decoded (what the HTTP client sends) and as the Basic authorization token a server may echo."""
    try:
        parts = urlsplit(url)
        written = [value for value in (parts.username, parts.password) if value]
    except ValueError:
        return []
    decoded = [unquote(value) for value in written]
    token = base64.b64encode(":".join(unquote(v or "") for v in (parts.username, parts.password)).encode()).decode()
    return [*dict.fromkeys(written + decoded), *([token] if written else [])]


def public_url(url: str) -> str:
    """``url`` without the credentials written into it: what may be printed or stored."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
