"""Text that imitates the memory's own blocks (any registered kind's heading, the data block's and the pinned
rules' notes and markers), escaped wherever it appears in a request under any defences: bracket runs are spaced out
and each copy, found as a reader reads it (any case, spacing or look-alike letters), is rewritten as a visible quote.
"""
from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterable, Sequence

from helpers.base.code_points import LONG, OneForOne, Translation, code_points, every_character, text_of
from helpers.memory.pinned import PINNED_CLOSE, PINNED_HEADING, PINNED_NOTE, PINNED_OPEN
from helpers.memory.placement import DATA_CLOSE, DATA_NOTE, DATA_OPEN, escape_markers, readable_form

# the texts the memory writes around a summary or the pinned rules (a kind's heading comes from its KIND)
BLOCK_TEXTS = (PINNED_NOTE, PINNED_HEADING, PINNED_OPEN, PINNED_CLOSE, DATA_NOTE, DATA_OPEN, DATA_CLOSE)
KIND_HEADINGS: tuple[str, ...] = ()  # every registered kind's heading: registry.py keeps it (a new tuple each change)


def note_clauses(texts: Iterable[str]) -> tuple[str, ...]:
    """The headings and notes among ``texts`` (markers' words without their brackets), and each clause of a note
    (split at ``.`` and ``:``) of four words or more: a copy of one clause of a note imitates it too."""
    found = []
    for text in texts:
        text = " ".join(text.strip("<> \n").split())
        if text:
            found.append(text)
            found += [" ".join(c.split()) for c in re.split(r"[.:]", text) if len(c.split()) >= 4 and c.strip() != text]
    return tuple(dict.fromkeys(found))


def alternation(texts: Iterable[str], space: str = r"\s+") -> str:
    """A pattern of any of ``texts``, the longest first, each space between their words matching ``space``."""
    return "|".join(space.join(map(re.escape, text.split())) for text in longest_first(texts))


def longest_first(texts: Iterable[str]) -> list[str]:
    """``texts`` as an alternation tries them: each with its spaces as one, once, blank ones left out, the longest
    first (a text that starts another is tried after it)."""
    return sorted(dict.fromkeys(" ".join(t.split()) for t in texts if t.strip()), key=len, reverse=True)


@functools.cache
def _case_forms(characters: str) -> str:
    """Every character ``re.IGNORECASE`` matches for any of ``characters`` ("k": "Kk\u212a"), the engine's own
    answer, in order: one search of every code point for the class of them all (the engine matches a class of
    characters as it matches each alone: a test holds it to that), each found kept if it matches one alone."""
    alone = [re.compile("(?i)" + re.escape(character)) for character in set(characters)]
    found = set(re.findall(f"(?i)[{re.escape(characters)}]", every_character()))
    return "".join(sorted(ch for ch in found if any(character.fullmatch(ch) for character in alone)))


@functools.lru_cache(maxsize=16)
def _imitation(headings: tuple[str, ...]) -> re.Pattern[str]:
    """``alternation`` of the notes and headings under ``re.IGNORECASE``, led by a class of every character that
    can start one and one of every character that can come second (when every first word has two): the engine
    passes over the rest in C, where an ignore-case alternation is tried at every character. Exact: each
    alternative, in the same order, checks its own first characters again (a look behind)."""
    texts = note_clauses(t for t in (*headings, *BLOCK_TEXTS) if not t.startswith("<<<"))
    unique = longest_first(texts)
    lead = 2 if all(len(text.split()[0]) >= 2 for text in unique) else 1
    classes = (_case_forms("".join(sorted({text[at] for text in unique}))) for at in range(lead))
    # each text's pattern starts with its first word's characters escaped (re.escape escapes one at a time)
    alternatives = (f"(?<={re.escape(text[:lead])}){alternation([text])[len(re.escape(text[:lead])):]}"
                    for text in unique)
    led_by = "".join(f"(?-i:[{re.escape(characters)}])" for characters in classes)
    return re.compile(f"{led_by}(?:{'|'.join(alternatives)})", re.IGNORECASE)


_read_one = functools.lru_cache(maxsize=1 << 16)(readable_form)  # each character's reading, read once


def _reading_with_origin(text: str) -> tuple[str, Callable[[], Sequence[int]]]:
    """``text`` read character by character (``readable_form``), and a function giving the index in ``text`` of each
    character read (made only when a match needs it: on a megabyte it takes longer than the reading)."""
    if text.isascii() and "\r\n" not in text:  # no ASCII character reads as another length: one for one
        return readable_form(text), lambda: range(len(text))
    if len(text) >= LONG:
        return _long_reading_with_origin(text)
    read = list(map(_read_one, text))
    return "".join(read), lambda: list(itertools.chain.from_iterable(map(itertools.repeat, range(len(text)),
                                                                         map(len, read))))


def _long_reading_with_origin(text: str) -> tuple[str, Callable[[], Sequence[int]]]:
    """``_reading_with_origin`` of a long text by NumPy: each distinct character read once (``_read_one``), then
    every character's reading gathered from them by index (a megabyte: 0.02 s, not 0.15 s of calls)."""
    import numpy  # only here: short texts, most of them, never load it

    codes = code_points(text)
    distinct = numpy.flatnonzero(numpy.bincount(codes)).tolist()  # sorted(set(text)), in NumPy
    readings = {point: _read_one(chr(point)) for point in distinct}
    if all(len(reading) == 1 for reading in readings.values()):  # most texts: one lookup of every code point
        return OneForOne(readings)(text), lambda: range(len(text))
    read, each_length = Translation(readings).gather(codes)
    return text_of(read), lambda: numpy.repeat(numpy.arange(len(text)), each_length).tolist()


def escape_imitations(text: str, headings: Iterable[str] = ()) -> str:
    """``text`` with bracket runs spaced out and every copy of a memory heading (``headings``), note or marker
    rewritten as a visible quote (plain letters, ``_`` for spaces): in a request it can pass for no block."""
    return _escaped(text, tuple(h for h in headings if h))


@functools.lru_cache(maxsize=4096)  # a request is rebuilt at every turn from the same verbatim messages
def _escaped(text: str, headings: tuple[str, ...]) -> str:
    text = escape_markers(text)
    pattern = _imitation(headings)
    read, origin_of = _reading_with_origin(text)
    matches = list(pattern.finditer(read))
    origin = origin_of() if matches else ()
    pieces, at = [], 0
    for match in matches:
        start, end = origin[match.start()], origin[match.end() - 1] + 1
        if start < at:
            continue
        pieces += [text[at:start], re.sub(r"\s+", "_", match.group(0))]
        at = end
    return "".join(pieces) + text[at:] if pieces else text
