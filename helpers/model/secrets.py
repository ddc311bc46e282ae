r"""Keeping secrets out of every text the project shows or stores: ``scrub_text`` finds each secret (the values of
``settings.secret_variables()``, the credentials in ``LLM_BASE_URL``) as written, in any case when 8 characters or
longer, JSON-escaped or percent-encoded, and replaces it whole."""
from __future__ import annotations

import base64
import functools
import os
import re
import unicodedata
from collections.abc import Iterable
from urllib.parse import unquote

from helpers.model.settings import secret_variables

REDACTED = "[REDACTED]"
# Key shapes of the providers we know (Groq gsk_, OpenAI sk-...), scrubbed even if not configured.
KEY_SHAPES = re.compile(r"\b(?:gsk_[A-Za-z0-9]{20,}|sk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{20,})")


def configured_secrets(*extra: str | None) -> list[str]:
    """The secrets this process knows: the given ones, every secret variable's value, LLM_BASE_URL's credentials."""
    found = [*extra, *(os.environ.get(name, "").strip() for name in secret_variables())]
    found += url_credentials(os.environ.get("LLM_BASE_URL", ""))
    return [secret for secret in dict.fromkeys(found) if secret]


ANY_CASE_LENGTH = 8  # shorter secrets (a password "Pune") are found only as written, or every "pune" would go


def _hex(value: int, width: int) -> str:
    """``value`` in hex digits, each letter in either case."""
    return "".join(f"[{d}{d.upper()}]" if d.isalpha() else d for d in f"{value:0{width}x}")


def _char_forms(ch: str, any_case: bool) -> str:
    r"""A pattern for one character of a secret: itself (in either case), JSON-escaped or percent-encoded."""
    cases = {ch, ch.lower(), ch.upper()} if any_case and len(ch.lower()) == len(ch.upper()) == 1 else {ch}
    forms = {r"\\" + re.escape(ch)} if ch in "/\\\"" else {r"\+"} if ch == " " else set()
    for code in cases:
        forms |= {re.escape(code), "".join("%" + _hex(byte, 2) for byte in code.encode("utf-8"))}
        if ord(code) <= 0xFFFF:
            forms.add(r"\\u" + _hex(ord(code), 4))
    return "(?:" + "|".join(sorted(forms, key=len, reverse=True)) + ")"


@functools.lru_cache(maxsize=64)
def _secret_pattern(secrets: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern for every form of every secret, the longest secrets first."""
    return re.compile("|".join("".join(_char_forms(ch, len(secret) >= ANY_CASE_LENGTH) for ch in secret)
                               for secret in secrets))


def scrub_text(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret, in every form it can be rendered, and anything shaped like a key redacted."""
    known = tuple(sorted({s for s in secrets if s}, key=len, reverse=True))
    if known:
        text = _secret_pattern(known).sub(REDACTED, text)
    return KEY_SHAPES.sub(REDACTED, text)


def _userinfo(url: str) -> tuple[str, str, str] | None:
    """(scheme and ``//``, the credentials, the host and the rest) of a URL with credentials, else None; read by hand,
    since ``urlsplit`` refuses some (the last ``@`` ends them, or a character NFKC reads as one, such as ``＠``)."""
    found = re.match(r"([A-Za-z][A-Za-z0-9+.-]*:)?//([^/?#]*)(.*)\Z", url.strip(), re.DOTALL)
    authority = found.group(2) if found else ""
    at = max((i for i, ch in enumerate(authority) if unicodedata.normalize("NFKC", ch) == "@"), default=-1)
    if at < 0:
        return None
    return f"{found.group(1) or ''}//", authority[:at], authority[at + 1:] + found.group(3)


def url_credentials(url: str) -> list[str]:
    """The user name and password written into a URL: as written, percent-decoded, and as the Basic token a server
    may echo."""
    split = _userinfo(url)
    user, _, password = split[1].partition(":") if split else ("", "", "")
    written = [value for value in (user, password) if value]
    if not written:
        return []
    token = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode()
    return [*dict.fromkeys(written + [unquote(value) for value in written]), token]


def public_url(url: str) -> str:
    """``url`` without the credentials written into it: what may be printed or stored."""
    split = _userinfo(url)
    return split[0] + split[2] if split else url
