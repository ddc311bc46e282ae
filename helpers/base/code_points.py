"""A long text read as an array of its code points (NumPy): a table lookup of every code point at once, where
``str.translate`` and the regex engine read text past ASCII a character at a time (a megabyte: 0.02 s, not 0.13 s).
"""
from __future__ import annotations

import array
import functools
from collections.abc import Iterable
from typing import Any

LONG = 50_000  # characters: a shorter text is read the plain way (NumPy's arrays cost more than they save there)
EVERY = 0x110000  # the number of code points


def code_points(text: str) -> Any:
    """``text``'s code points as a NumPy ``uint32`` array (lone surrogates kept); NumPy is loaded only here."""
    import numpy

    return numpy.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=numpy.uint32)


def text_of(codes: Any) -> str:
    """The text of an array of code points: ``code_points``'s inverse."""
    return codes.astype("uint32", copy=False).tobytes().decode("utf-32-le", "surrogatepass")


@functools.cache
def every_character() -> str:
    """Every code point, lone surrogates included, in order: for asking the engine which it matches."""
    return array.array("I", range(EVERY)).tobytes().decode("utf-32-le", "surrogatepass")


def membership(characters: Iterable[str]) -> Any:
    """Whether each code point is one of ``characters``: a NumPy ``bool`` array indexed by code point."""
    import numpy

    found = numpy.zeros(EVERY, dtype=bool)
    found[code_points("".join(characters))] = True
    return found


class OneForOne:
    """``str.translate`` by a table of one character for one; on a long text one lookup of every code point."""

    def __init__(self, table: dict[int, str]) -> None:
        self.table, self.codes = table, None

    def __call__(self, text: str) -> str:
        if len(text) < LONG:
            return text.translate(self.table)
        return text_of(self.lookup()[code_points(text)])

    def lookup(self) -> Any:
        """Every code point's reading, as an array (made on first use, then kept)."""
        if self.codes is None:
            import numpy

            self.codes = numpy.arange(EVERY, dtype=numpy.uint32)
            self.codes[list(self.table)] = [ord(value) for value in self.table.values()]
        return self.codes


class Translation:
    """``str.translate`` by a table of a character to one, several or none; on a long text each code point's
    reading is gathered by index from one array holding every code point and then every reading."""

    def __init__(self, table: dict[int, str | int | None]) -> None:
        self.table, self.arrays = table, None

    def __call__(self, text: str) -> str:
        if len(text) < LONG:
            return text.translate(self.table)
        return text_of(self.gather(code_points(text))[0])

    def gather(self, codes: Any) -> tuple[Any, Any]:
        """The code points of ``codes``' reading, and how many each code point became."""
        import numpy

        if self.arrays is None:
            readings = {point: "" if value is None else chr(value) if isinstance(value, int) else value
                        for point, value in self.table.items()}
            starts = numpy.arange(EVERY, dtype=numpy.int32)  # a character not in the table reads as itself
            lengths = numpy.ones(EVERY, dtype=numpy.uint8)  # (small types: the arrays are kept, 10 MB a table)
            starts[list(readings)] = EVERY + numpy.cumsum([0, *map(len, readings.values())])[:-1]
            lengths[list(readings)] = list(map(len, readings.values()))
            every = numpy.arange(EVERY, dtype=numpy.uint32)
            self.arrays = numpy.concatenate([every, code_points("".join(readings.values()))]), starts, lengths
        flat, starts, lengths = self.arrays
        each_length = lengths[codes].astype(numpy.int64)
        written_at = numpy.cumsum(each_length) - each_length  # where each character's reading starts
        at = numpy.repeat(starts[codes] - written_at, each_length) + numpy.arange(int(each_length.sum()))
        return flat[at], each_length
