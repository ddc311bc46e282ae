"""The one reading every defence compares with (the check, the quoting of copied blocks, redaction, forget()): each
character as a reader sees it (tags as the ASCII they spell, invisible characters and marks as nothing, any script's
digits as ASCII, look-alikes of brackets, colons and letters as what they look like). A look-alike reads as its
*prototype*, which stands for several letters (I and l both read ``l``): ``pattern()`` folds a pattern alike."""
from __future__ import annotations

import bisect
import itertools
import re
import unicodedata

from helpers.base.unicode_data import ANGLE_READINGS, DEFAULT_IGNORABLE, FORMAT, LATIN_READINGS, MARKS

# Unicode's look-alikes of ":" (confusables.txt, UTS #39): "SYSTEM\u2236" is a role label to a reader
COLON_LOOKALIKES = ("\u0903\u0a83\uff1a\u0589\u0703\u0704\u16ec\ufe30\u1803\u1809\u205a\u05c3\u02f8\ua789\u2236"
                    "\u02d0\ua4fd")
LINE_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_SMALL_CAPITALS = {chr(p): m.group(1) for p in itertools.chain(range(0x1D00, 0x1D2C), range(0x0250, 0x02AF),
                                                                 range(0xA720, 0xA7FF), range(0x1DF00, 0x1DFFF))
                   if (m := re.fullmatch(r"LATIN LETTER SMALL CAPITAL ([A-Z])", unicodedata.name(chr(p), "")))}
_LOOKS = {**LATIN_READINGS, **_SMALL_CAPITALS, **ANGLE_READINGS, **dict.fromkeys(COLON_LOOKALIKES, ":")}
INVISIBLE = frozenset(chr(p) for first, last in (*DEFAULT_IGNORABLE, *FORMAT) for p in range(first, last + 1))
_MARKS = frozenset(chr(p) for first, last in MARKS for p in range(first, last + 1))


def _reading_of(point: int) -> str:
    """How one character reads (see the module's docstring)."""
    ch = chr(point)
    if 0xE0020 <= point <= 0xE007E:
        return chr(point - 0xE0000)
    if ch in LINE_BREAKS:
        return "\n"
    if ch in INVISIBLE or ch in _MARKS:
        return ""
    if ch.isdecimal():
        return str(unicodedata.decimal(ch))
    if ch in ANGLE_READINGS or ch in COLON_LOOKALIKES:
        return _LOOKS[ch]
    plain = unicodedata.normalize("NFKD", ch)
    plain = unicodedata.normalize("NFKC", "".join(c for c in plain if c not in _MARKS))
    if plain.isascii() and plain.isalnum():  # "Ｉ", "Ⅰ", "é": Unicode's own plain form
        return plain
    if ch in _LOOKS:  # "Ι", "ꜱ", "˛": before NFKD made a look-alike a space and a mark
        return _LOOKS[ch]
    return "".join(_LOOKS.get(c, c) for c in plain)  # "ё" is "е" and a mark: then a look-alike


class _Readings(dict):  # type: ignore[type-arg]
    """``str.translate``'s table: a character's reading, worked out when first met (at most 50,000 held)."""

    def __missing__(self, point: int) -> str:
        reading = _reading_of(point)
        if len(self) < 50_000:
            self[point] = reading
        return reading


_TABLE = _Readings()


def read(text: str) -> str:
    """``text`` as a reader sees it (the module's docstring says how each character reads)."""
    return text.translate(_TABLE)


def spans_written(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Where each span of ``read(text)`` is written in ``text``: the characters that read as it."""
    ends = list(itertools.accumulate(len(_TABLE[ord(ch)]) for ch in text)) if spans else []
    return [(bisect.bisect_right(ends, start), bisect.bisect_right(ends, end - 1) + 1) for start, end in spans]


def shows_nothing(text: str) -> bool:
    """True when ``text`` is whitespace and invisible characters only (tags too): never stored as a summary."""
    return not drop_invisible(text).strip()


def drop_invisible(text: str) -> str:
    """``text`` without its invisible characters (tags included), everything else as written."""
    return text if text.isascii() else "".join(ch for ch in text if ch not in INVISIBLE)


# the letters a reading folds together (a prototype and what it stands for): I, l and 1 are drawn alike, so are O and 0
_SAME = {"i": "il1", "I": "Il1", "l": "il1", "o": "o0", "O": "O0", "\\|": "|l1"}
_FOLDED = re.compile(r"\\\||\\.|\[(?:\\.|[^\]\\])*\]|[iIloO ]")


def pattern(source: str, flags: int = 0) -> re.Pattern[str]:
    """``source`` compiled to match ``read(text)`` (or its lower case): a letter sharing its prototype (I, l, 1; O, 0;
    ``\\|``) matches any of them, a space any whitespace. Its letters are literals (no inline flag, no named group)."""
    def folded(match: re.Match[str]) -> str:
        found = match.group()
        if found == " ":
            return r"\s+"
        if found.startswith("["):  # a class: the characters its letters fold with added
            extra = "".join(dict.fromkeys(ch for letter in "iIloO" if letter in found for ch in _SAME[letter]))
            return found[:-1] + extra + "]"
        return f"[{_SAME[found]}]" if found in _SAME else found
    return re.compile(_FOLDED.sub(folded, source), flags)


_CURRENCY = re.compile(r"(?<![a-z])(?:rs|inr|rupees?)\b\.?|₹")
# inside a longer word or number: a letter or digit beside the match, or a separator and then one (a country code or
# trunk 0 before a phone number, and ".00" paise after an amount, belong to it)
_PREFIX = re.compile(r"(?:(?:\+|(?<![0-9])00)[0-9]{1,3}[ -]?|(?<![0-9])0)\Z")
_INSIDE_BEFORE = re.compile(r"(?:[^\W_]|[0-9][ ,./-])\Z")
_INSIDE_AFTER = re.compile(r"(?!\.00?(?![0-9]))(?:[^\W_]|[ ,./-][0-9])")


def _letters_and_digits(text: str) -> tuple[str, list[int], str]:
    """``text`` read, in lower case, l and i as one letter, currency words and signs as spaces: its letters and
    digits alone, where each is in that reading, and the reading."""
    seen = _CURRENCY.sub(lambda match: " " * len(match.group()), read(text).lower().replace("l", "i"))
    places = [at for at, ch in enumerate(seen) if ch.isalnum()]
    return "".join(seen[at] for at in places), places, seen


def mentions(content: str, text: str) -> bool:
    """True if ``content`` holds ``text`` whatever its spacing (a dropped space too), case, separators, currency sign
    or look-alikes ("98765 43210" finds "9876543210"), never inside a longer number or word ("20,000" is not in
    "1,20,000"); a text of no letter or digit is looked for as it reads."""
    wanted, _, asked = _letters_and_digits(text)
    held, places, seen = _letters_and_digits(content)
    if not wanted:
        return " ".join(asked.split()) in " ".join(seen.split())
    at = held.find(wanted)
    while at >= 0:
        start, end = places[at], places[at + len(wanted) - 1] + 1
        before = seen[max(0, start - 8):start]
        before = _PREFIX.sub("", before) if wanted[0].isdigit() else before
        if not (_INSIDE_BEFORE.search(before) or _INSIDE_AFTER.match(seen, end)):
            return True
        at = held.find(wanted, at + 1)
    return False


def escape_markers(text: str) -> str:
    """``text`` without invisible characters and with a space between any two characters that read as angle
    brackets (``<<<`` as ``< < <``, ``≪`` as ``< <``): it can neither open nor close a block's marker."""
    text = drop_invisible(text)
    if not re.search("[<>]{2}", read(text)):
        return text
    pieces, after_bracket = [], False
    for ch in text:
        reading = _TABLE[ord(ch)]
        bracket = reading != "" and not reading.strip("<>")
        pieces += [" " if after_bracket and bracket else "", " ".join(reading) if bracket else ch]
        after_bracket = bracket or after_bracket and not reading  # a mark drawn on a bracket keeps it one
    return "".join(pieces)
