"""Every environment variable model access reads, checked in one place: the providers and their keys, the settings,
what an endpoint accepts (``Traits``), and the one scrubber that keeps every secret out of what is shown or stored."""
from __future__ import annotations

import base64
import functools
import math
import os
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, NamedTuple
from urllib.parse import unquote

from helpers.base.errors import SettingError
from helpers.base.signing import KEY_ENV as SIGNING_KEY_ENV


class Provider(NamedTuple):
    """A hosted OpenAI-compatible endpoint we know by name."""

    name: str
    base_url: str
    key_env: str
    default_model: str


PROVIDERS = {"groq": Provider("Groq", "https://api.groq.com/openai/v1", "GROQ_API_KEY", "openai/gpt-oss-120b"),
             "openai": Provider("OpenAI", "https://api.openai.com/v1", "OPENAI_API_KEY", "gpt-4o-mini")}
DEFAULT_PROVIDER, CUSTOM_KEY_ENV = "groq", "LLM_API_KEY"  # the lessons' provider; the key of a server at LLM_BASE_URL
SETTING_VARIABLES = ("LLM_MODE", "LLM_PROVIDER", "LLM_BASE_URL", "LLM_MODEL", "LLM_TIMEOUT", "LLM_MAX_RETRIES",
                     "LLM_REASONING_EFFORT", "LLM_RECORDINGS_DIR", "LLM_SYSTEM_MESSAGES")
SYSTEM_MESSAGE_MODES = ("as-written", "merge", "user")


def secret_variables() -> tuple[str, ...]:
    """The names of every variable that holds a secret: each provider's key, a custom server's key, the signing key."""
    return tuple(dict.fromkeys([*(p.key_env for p in PROVIDERS.values()), CUSTOM_KEY_ENV, SIGNING_KEY_ENV]))


def model_variables() -> tuple[str, ...]:
    """Every variable model access reads: the secrets and the settings (what a clean test environment removes)."""
    return (*secret_variables(), *SETTING_VARIABLES)


def env(name: str) -> str | None:
    """The variable's value without surrounding blanks, or None when it is unset or blank."""
    return os.environ.get(name, "").strip() or None


# argument -> (its variable, default, reading that returns None for a value it refuses, what a good value is)
_SETTINGS: dict[str, tuple[str, Any, Any, str]] = {
    "timeout": ("LLM_TIMEOUT", 60.0, lambda v: float(v) if 0 < float(v) < math.inf else None,
                "a positive number of seconds, such as 60 (the default) or 300 for a slow local server"),
    "max_retries": ("LLM_MAX_RETRIES", 2, lambda v: int(v) if float(v) == int(v) >= 0 else None,
                    "a whole number of retries, 0 or more (2 is the default, 0 suits a slow local server)"),
    "system_messages": ("LLM_SYSTEM_MESSAGES", "as-written", lambda v: v.lower() if v.lower() in SYSTEM_MESSAGE_MODES
                        else None, f"one of {', '.join(SYSTEM_MESSAGE_MODES)}: 'merge' joins every system message into "
                        "the first (for a chat format that keeps only the first), 'user' puts their text at the start "
                        "of the first user message (for a chat format with no system role); see docs/local_servers.md"),
}


def setting(argument: str, given: Any = None) -> Any:
    """``given``, else the argument's ``LLM_*`` variable, else its default; a refused value raises ``SettingError``
    naming where it came from (the argument or the variable)."""
    variable, default, read, wanted = _SETTINGS[argument]
    source, value = (argument, given) if given is not None else (variable, env(variable))
    try:
        result = default if value is None else None if isinstance(value, bool) else read(value)
    except (TypeError, ValueError, OverflowError):
        result = None
    if result is None:
        raise SettingError(source, value, f"{source} must be {wanted}, got {value!r}. Fix {variable} in .env or your "
                           f"environment (or the {argument}= argument) and run again.")
    return result


@dataclass(frozen=True)
class Traits:
    """What an endpoint accepts of the lessons' call; the transport leaves out or renames the rest, under the SDK."""

    reasoning_effort: bool = True
    temperature: bool = True
    limit: str = "max_tokens"  # OpenAI's reasoning models take max_completion_tokens

    @classmethod
    def of(cls, model: str, provider: str) -> Traits:
        """gpt-oss takes ``reasoning_effort`` on a hosted endpoint, a server at ``LLM_BASE_URL`` only with
        ``LLM_REASONING_EFFORT=on`` (which overrides the guess either way); OpenAI's reasoning models take it, and
        ``max_completion_tokens`` and no temperature."""
        short, override = model.rsplit("/", 1)[-1].lower(), (env("LLM_REASONING_EFFORT") or "").lower()
        openai_reasoning = provider == "openai" and bool(re.match(r"(o\d|gpt-5)", short))
        reasoning = ("gpt-oss" in short and provider not in ("custom", "offline")) or openai_reasoning
        if override in ("off", "no", "false", "0", "on", "yes", "true", "1"):
            reasoning = override in ("on", "yes", "true", "1")
        return cls(reasoning, not openai_reasoning, "max_completion_tokens" if openai_reasoning else "max_tokens")

    def adapt(self, body: dict[str, Any]) -> dict[str, Any]:
        """A request body with what this endpoint does not accept left out, its token limit under the right name."""
        left_out = {name for name in ("reasoning_effort", "temperature") if not getattr(self, name)}
        return {self.limit if key in ("max_tokens", "max_completion_tokens") else key: value
                for key, value in body.items() if key not in left_out}

    def said(self) -> str:
        """What ``adapt`` changes, for the mode line ("" when nothing)."""
        changes = [f"max_tokens sent as {self.limit}"] * (self.limit != "max_tokens") + [
            f"{name} left out" for name in ("reasoning_effort", "temperature") if not getattr(self, name)]
        hint = " (LLM_REASONING_EFFORT=on sends reasoning_effort)" if not self.reasoning_effort else ""
        return f" | adapted: {', '.join(changes)}{hint}" if changes else ""


# ----- secrets --------------------------------------------------------------------------------------------------

REDACTED = "[REDACTED]"
KEY_SHAPES = re.compile(r"\b(?:gsk_[A-Za-z0-9]{20,}|sk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{20,})")  # Groq, OpenAI
ANY_CASE_LENGTH = 8  # shorter secrets (a password "Pune") are found only as written, or every "pune" would go


def configured_secrets() -> list[str]:
    """The secrets this process knows: every secret variable's value and LLM_BASE_URL's credentials."""
    found = [os.environ.get(name, "").strip() for name in secret_variables()]
    return [secret for secret in dict.fromkeys(found + url_credentials(os.environ.get("LLM_BASE_URL", ""))) if secret]


def _forms(secret: str) -> str:
    """A pattern for a secret written out: each character itself (in either case from 8 characters on), JSON-escaped
    or percent-encoded."""
    pattern, any_case = [], len(secret) >= ANY_CASE_LENGTH
    for ch in secret:
        cases = {ch, ch.lower(), ch.upper()} if any_case and len(ch.lower()) == len(ch.upper()) == 1 else {ch}
        forms = {r"\\" + re.escape(ch)} if ch in "/\\\"" else {r"\+"} if ch == " " else set()
        forms |= {form for c in cases for form in (re.escape(c), "".join(f"%(?i:{b:02x})" for b in c.encode()),
                                                   rf"\\u(?i:{ord(c):04x})" if ord(c) <= 0xFFFF else re.escape(c))}
        pattern.append("(?:" + "|".join(sorted(forms, key=len, reverse=True)) + ")")
    return "".join(pattern)


@functools.lru_cache(maxsize=64)
def _secret_pattern(secrets: tuple[str, ...]) -> re.Pattern[str]:
    """Every secret written out (``_forms``), and base64- and base64url-encoded, with and without padding; from 8
    characters on also what it alone decides of a longer encoded text, at each of the 3 byte alignments."""
    encoded = set()
    for raw in map(str.encode, secrets):
        shifts = range(3) if len(raw) >= ANY_CASE_LENGTH else ()
        forms = {base64.b64encode(raw).decode()} | {base64.b64encode(b"\0" * shift + raw).decode()[
            -(-8 * shift // 6):8 * (shift + len(raw)) // 6] for shift in shifts}  # the characters the secret decides
        forms |= {form.rstrip("=") for form in forms}
        encoded |= forms | {form.translate(str.maketrans("+/", "-_")) for form in forms}
    return re.compile("|".join([*map(re.escape, sorted(encoded, key=len, reverse=True)), *map(_forms, secrets)]))


def scrub_text(text: str, secrets: Any = ()) -> str:
    """``text`` with every secret (these and ``configured_secrets()``), as written, escaped or base64-encoded, and
    anything shaped like a key replaced by ``[REDACTED]``: the one scrubber for what is shown, stored or recorded."""
    known = tuple(sorted({s for s in [*secrets, *configured_secrets()] if s}, key=len, reverse=True))
    return KEY_SHAPES.sub(REDACTED, _secret_pattern(known).sub(REDACTED, text) if known else text)


def _userinfo(url: str) -> tuple[str, str, str] | None:
    """(scheme and ``//``, the credentials, the host and the rest) of a URL with credentials, else None; read by hand,
    since ``urlsplit`` refuses some (the last ``@`` ends them, or a character NFKC reads as one, such as ``＠``)."""
    found = re.match(r"([A-Za-z][A-Za-z0-9+.-]*:)?//([^/?#]*)(.*)\Z", url.strip(), re.DOTALL)
    authority = found.group(2) if found else ""
    at = max((i for i, ch in enumerate(authority) if unicodedata.normalize("NFKC", ch) == "@"), default=-1)
    return (f"{found.group(1) or ''}//", authority[:at], authority[at + 1:] + found.group(3)) if at >= 0 else None


def url_credentials(url: str) -> list[str]:
    """The user name and password written into a URL, as written and percent-decoded, and the ``user:password`` a
    Basic header carries (base64-encoded: one of the scrubber's forms)."""
    user, _, password = split[1].partition(":") if (split := _userinfo(url)) else ("", "", "")
    written = [value for value in (user, password) if value]
    joined = [f"{unquote(user)}:{unquote(password)}"] if written else []
    return list(dict.fromkeys(written + [unquote(value) for value in written] + joined))


def public_url(url: str) -> str:
    """``url`` without the credentials written into it: what may be printed or stored."""
    return split[0] + split[2] if (split := _userinfo(url)) else url
