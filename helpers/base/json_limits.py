"""JSON from a file someone else may have written (a saved state, a recording), parsed within limits.

Python's ``json`` raises ``RecursionError`` on arrays nested some thousands deep and a bare ``ValueError``
on an integer of more than 4,300 digits, and reads any size. ``load_limited`` checks the size first, then
the nesting depth with a flat scan (no recursion), then parses with every number's length bounded, and
raises ``JSONRefused`` naming the top-level field at fault, so that a loader can raise its own error.
"""
from __future__ import annotations

import json
import re
from typing import Any

from helpers.base.errors import Explained

MAX_DEPTH = 32  # a saved state or a recording nests a few levels; JSON's own parser fails near a thousand
MAX_DIGITS = 30  # no count or token figure of the project comes near; int() of 4,301 digits is refused
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')  # strings (whose brackets are text) and brackets
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_LONG_NUMBER = re.compile(rf"-?\d{{{MAX_DIGITS + 1},}}|-?\d[\d.eE+-]{{{2 * MAX_DIGITS},}}")


class JSONRefused(Explained, ValueError):
    """A JSON text is refused before or while parsing; ``field`` names its top-level field ("file" if none)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def _scan(text: str, stop: int | None = None) -> tuple[int, int | None, str]:
    """(deepest nesting, where it first passes ``MAX_DEPTH`` or None, the top-level field being read there or
    at ``stop``), reading brackets and strings only, in one pass with no recursion."""
    depth, deepest, field = 0, 0, "file"
    last_string = None
    for match in _TOKEN.finditer(text, 0, len(text) if stop is None else stop):
        token = match.group(0)
        if token[0] == '"':
            if depth == 1:
                last_string = token
            continue
        if token in "[{":
            if depth == 1 and last_string is not None:
                field = _key(last_string)
            depth += 1
            if depth > deepest:
                deepest = depth
                if depth > MAX_DEPTH:
                    return deepest, match.start(), field
        else:
            depth -= 1
            if depth == 1:
                field = "file"
    if stop is not None and depth >= 1 and last_string is not None and field == "file":
        field = _key(last_string)
    return deepest, None, field


def _key(token: str) -> str:
    try:
        return str(json.loads(token))
    except ValueError:
        return "file"


def _refuse_number(text: str) -> Any:
    raise JSONRefused("number", f"a number of {len(text)} characters: no field holds one that long")


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
    deepest, at, field = _scan(text)
    if at is not None:
        raise JSONRefused(field, f"{what}: {field} is nested more than {MAX_DEPTH} levels deep (at character {at}); "
                          "no field of this file nests that far, so it was not parsed")
    number = _LONG_NUMBER.search(_STRING.sub(lambda m: '"' + " " * (len(m.group(0)) - 2) + '"', text))
    if number is not None:  # searched with every string blanked: digits inside a text are only text
        field = _scan(text, number.start())[2]
        raise JSONRefused(field, f"{what}: {field} holds a number of {len(number.group(0)):,} characters; no field "
                          f"of this file holds one of more than {MAX_DIGITS} digits")
    try:
        return json.loads(text, parse_int=_bounded_int, parse_constant=_no_constant)
    except JSONRefused as error:
        raise JSONRefused(error.field, f"{what}: {error}") from None
    except ValueError as error:  # json.JSONDecodeError and anything the parser raises on odd input
        raise JSONRefused("file", f"{what} is not valid JSON ({error})") from None
    except RecursionError:  # cannot happen after the scan; said plainly if it ever does
        raise JSONRefused("file", f"{what} is nested too deeply to parse") from None


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        _refuse_number(text)
    return int(text)


def _no_constant(name: str) -> Any:
    raise JSONRefused("number", f"{name} is not a number any field of this file holds")
