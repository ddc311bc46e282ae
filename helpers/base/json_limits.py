"""JSON someone else may have written (a state, a recording), checked for size, depth and number length before
``json`` fails on it with bare errors; ``JSONRefused`` names the top-level field, for the loader's own error."""
from __future__ import annotations

import json
import re
from typing import Any

from helpers.base.errors import Explained

MAX_DEPTH = 32  # a saved state or a recording nests a few levels; JSON's own parser fails near a thousand
MAX_DIGITS = 30  # no count or token figure of the project comes near
# strings (the brackets and digits in them are text), brackets and numbers
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]|-?\d[\d.eE+-]*')
_LONG_DIGITS = re.compile(rf"\d{{{MAX_DIGITS + 1},}}")


class JSONRefused(Explained, ValueError):
    """A JSON text is refused before or while parsing; ``field`` names its top-level field ("file" if none)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def _key(token: str | None) -> str:
    try:
        return str(json.loads(token)) if token else "file"
    except ValueError:
        return "file"


def _scan(text: str, what: str) -> None:
    """Refuse ``text`` if it nests deeper than ``MAX_DEPTH`` or holds a number longer than ``MAX_DIGITS`` digits,
    naming the top-level field (the last string read at depth 1): one pass, no recursion."""
    depth, field, key = 0, "file", None
    for match in _TOKEN.finditer(text):
        token = match.group(0)
        if token[0] == '"':
            if depth == 1:
                key = token
        elif token in "[{":
            if depth == 1:
                field = _key(key)
            depth += 1
            if depth > MAX_DEPTH:
                raise JSONRefused(field, f"{what}: {field} is nested more than {MAX_DEPTH} levels deep (at character "
                                  f"{match.start()}); no field of this file nests that far, so it was not parsed")
        elif token in "]}":
            depth -= 1
            if depth == 1:
                field = "file"
        elif _LONG_DIGITS.search(token) or len(token.lstrip("-")) > 2 * MAX_DIGITS:
            at = _key(key) if field == "file" else field
            raise JSONRefused(at, f"{what}: {at} holds a number of {len(token):,} characters; no field of this "
                              f"file holds one of more than {MAX_DIGITS} digits")


def _no_constant(name: str) -> Any:
    raise JSONRefused("number", f"{name} is not a number any field of this file holds")


def load_limited(raw: bytes, *, what: str, max_bytes: int) -> Any:
    """The JSON data in ``raw`` (UTF-8), or ``JSONRefused`` if it is larger than ``max_bytes``, nested deeper
    than ``MAX_DEPTH``, holds a number longer than ``MAX_DIGITS`` digits, or is not UTF-8 JSON."""
    if len(raw) > max_bytes:
        raise JSONRefused("file", f"{what} is {len(raw):,} bytes, more than the {max_bytes:,} a file of this kind "
                          "may hold; it was not read")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise JSONRefused("file", f"{what} is not valid JSON: not UTF-8 text ({error})") from None
    _scan(text, what)
    try:
        return json.loads(text, parse_constant=_no_constant)
    except JSONRefused as error:
        raise JSONRefused(error.field, f"{what}: {error}") from None
    except ValueError as error:  # json.JSONDecodeError and anything the parser raises on odd input
        raise JSONRefused("file", f"{what} is not valid JSON ({error})") from None
