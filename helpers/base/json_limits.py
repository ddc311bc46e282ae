"""JSON someone else may have written (a state, a recording), bounded in size and parsed by ``json`` alone: what
``json`` fails on bare (deep nesting, a huge number, NaN) is refused as ``JSONRefused``; the caller checks fields."""
from __future__ import annotations

import json
from typing import Any

from helpers.base.errors import Explained


class JSONRefused(Explained, ValueError):
    """A JSON text is refused before or while parsing; ``field`` names the part at fault ("file" if no field)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def too_large(what: str, size: int, max_bytes: int, setting: str) -> JSONRefused:
    """The refusal of a file of ``size`` bytes, over ``max_bytes`` (the limit named ``setting``)."""
    return JSONRefused("file", f"{what} is {size:,} bytes, more than the {max_bytes:,} a file of this kind may hold "
                       f"({setting}); it was not read. Raise {setting} if a file this large is meant")


def _no_constant(name: str) -> Any:
    raise JSONRefused("number", f"{name} is not a number any field of this file holds")


def load_limited(raw: bytes, *, what: str, max_bytes: int, setting: str = "the limit") -> Any:
    """The JSON data in ``raw`` (UTF-8), or ``JSONRefused`` if it is larger than ``max_bytes`` or is not UTF-8 JSON
    that ``json`` can parse."""
    if len(raw) > max_bytes:
        raise too_large(what, len(raw), max_bytes, setting)
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except JSONRefused as error:
        raise JSONRefused(error.field, f"{what}: {error}") from None
    except RecursionError:
        raise JSONRefused("file", f"{what} nests deeper than any file of this kind; it was not parsed") from None
    except ValueError as error:  # not UTF-8, json.JSONDecodeError, a number past Python's digit limit
        raise JSONRefused("file", f"{what} is not valid JSON ({error})") from None
