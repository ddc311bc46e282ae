"""Personal identifiers (e-mail, phone, PAN, Aadhaar and its VID, card, account, IBAN) hidden before text reaches a
summariser, in the formats people write them, in the one reading (``helpers.base.reading``). Amounts are kept: a number
after a word that says it is money ("EMIs Rs 1000 2000 3000 4000"), a range of round thousands, a list of years.
Check digits are checked; accounts are found by the words before them. Every pattern runs in time linear in the text."""
from __future__ import annotations

import re
from collections.abc import Callable

from helpers.base.errors import SettingError
from helpers.base.reading import read, spans_written

_SEP = "[ .\\-\u1680\u2010-\u2015\u2212]"  # one separator between an identifier's digits or letters, as read
_GAP = "(?:[ .\\-/\u1680\u2010-\u2015\u2212] ?)"  # between groups of digits: a separator, a space after it too
_IBAN = re.compile(r"(?<![a-z0-9])[a-z]{2}[0-9]{2}(?:[ -]?[a-z0-9]{4}){2,7}(?:[ -]?[a-z0-9]{1,4})?(?![a-z0-9])")
_EMAIL = re.compile(r"(?<![a-z0-9._%+-])[a-z0-9._%+-]{1,64}[ \t]{0,2}@[ \t]{0,2}[a-z0-9.-]{1,253}\.[a-z]{2,24}\b"
                    r"|(?<![\w.])[a-z0-9._%+-]{1,64}(?: dot [a-z0-9_%+-]{1,64}){0,3} ?(?:\[at\]|\(at\)| at ) ?"
                    r"[a-z0-9-]{1,63}(?: ?(?:\[dot\]|\(dot\)| dot ) ?[a-z0-9-]{1,63}){0,3}?"
                    r" ?(?:\[dot\]|\(dot\)| dot ) ?(?:com|in|org|net|co|edu|gov|io)\b")
# a PAN: five letters, four digits, a letter, each group written together or spaced alike ("a-b-c-d-e 1234 f"; not
# "the year 2024 a")
_PAN = re.compile("(?<![a-z0-9])" + "".join(f"(?:{c}{{{n}}}|{c}(?: {c}){{{n - 1}}}|{c}(?:-{c}){{{n - 1}}}|{c}(?:\\.{c})"
                                             f"{{{n - 1}}}){_SEP}?" for c, n in (("[a-z]", 5), ("[0-9]", 4)))
                  + "[a-z](?![a-z0-9])")
_DIGITS = re.compile(rf"(?<![\w+])(?:\(?\+ ?[0-9]{{1,3}}\)?{_GAP}?|\(0[0-9]{{2,4}}\) ?)?"
                     rf"[0-9](?:{_GAP}?[0-9])*+(?![\w])")
# what says that the numbers after it are money or a count, not an identifier (read in lower case)
_MONEY = re.compile(r"(?<![a-z])(?:rs\.?|inr|₹|\$|usd|€|eur|£|gbp|emis?|instal+ments?|amounts?|payments?|premiums?"
                    r"|sips?|rent|fees?|bills?|salary|salaries|costs?|prices?|expenses?|spent|paid|deposits?|upi"
                    r"|readings?)[\s:=\-]{0,3}(?:(?:are|were|is|was|of|each|about|around|approx)[\s:]{1,3}){0,2}$")
_ACCOUNT = re.compile(r"(?<![a-z])(?:a(?:ccount|/c|cct|cc)\.?(?:\s*(?:number|num|no)\.?|\s*#)?|"
                      + read("खाता(?: संख्या| नंबर| नं\\.?)?") + r")(?:\s*(?:is|was|=))?\s*[:#\-]?\s*$")


def luhn_valid(digits: str) -> bool:
    """Whether ``digits`` (of any script) end in a correct Luhn check digit, as every payment card number does."""
    if not (digits.isdecimal() or not digits):
        raise SettingError("digits", digits, f"luhn_valid reads digits only, got {digits[:40]!r}")
    total = sum(int(d) if i % 2 == 0 else sum(divmod(2 * int(d), 10)) for i, d in enumerate(reversed(digits)))
    return total % 10 == 0


def verhoeff_valid(digits: str) -> bool:
    """Whether ``digits`` end in a correct Verhoeff check digit, as every Aadhaar number and VID does."""
    def times(j: int, k: int) -> int:  # the dihedral group D5's product, as Verhoeff numbers its elements
        return (j + k) % 5 + 5 * ((j >= 5) != (k >= 5)) if j < 5 else (j - k) % 5 + 5 * (k < 5)
    step, check = dict(zip(range(10), (1, 5, 7, 6, 2, 8, 3, 0, 9, 4))), 0
    for position, digit in enumerate(map(int, reversed(digits))):
        for _ in range(position % 8):
            digit = step[digit]
        check = times(check, digit)
    return check == 0


def iban_valid(text: str) -> bool:
    """Whether ``text`` (spaces allowed) is 15 to 34 letters and digits whose ISO 13616 mod-97 check holds."""
    compact = re.sub(r"[\s-]", "", text).upper()
    if not 15 <= len(compact) <= 34 or not compact.isalnum():
        return False
    return int("".join(str(int(ch, 36)) for ch in compact[4:] + compact[:4])) % 97 == 1


def _number(groups: list[str]) -> str | None:
    """What a run of digit groups is: a phone, card, Aadhaar number (or VID), or None (kept)."""
    digits = "".join(groups)
    n = len(digits)
    if 13 <= n <= 19 and luhn_valid(digits):
        return "[CARD]"
    if (n == 16 or n == 12 and digits[0] in "23456789") and verhoeff_valid(digits):
        return "[AADHAAR]"
    if n == 10 and digits[0] in "6789" or n in (10, 11) and digits[0] == "0" or n == 12 and digits[:3] in (
            "916", "917", "918", "919") or 13 <= n <= 15 and digits[:2] == "00":  # 0091 ...: dialled from abroad
        return "[PHONE]"
    return None


def _digits(match: re.Match[str], seen: str) -> str | None:
    """The label of a run of digits, or of its first groups (a card then its expiry year); None keeps it."""
    before = seen[max(0, match.start() - 40):match.start()]
    text = match.group()
    plus = text.startswith(("+", "(+"))
    groups = re.findall("[0-9]+", text[text.index(")") + 1:] if plus and ")" in text else text)
    if plus:
        return "[PHONE]" if 8 <= len("".join(groups)) <= 15 else None
    if _MONEY.search(before) or len(groups) == 2 and all(g.endswith("000") for g in groups) and re.search(
            "[-\u2010-\u2015\u2212]", text) or all(re.fullmatch("(?:19|20)[0-9]{2}", g) for g in groups):
        return None  # an amount, a list of amounts, a range of round thousands, a list of years
    if _ACCOUNT.search(before) and 9 <= len("".join(groups)) <= 18:
        return "[ACCOUNT]"
    for cut in range(min(len(groups), 19), 0, -1):  # an identifier has at most 19 digits
        label = _number(groups[:cut])
        if label:
            return " ".join([label, *groups[cut:]])
    return None


_PASSES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str], str], str | None]], ...] = (
    (_IBAN, lambda match, seen: "[IBAN]" if iban_valid(match.group()) else None),
    (_EMAIL, lambda match, seen: "[EMAIL]"), (_PAN, lambda match, seen: "[PAN]"), (_DIGITS, _digits))


def redact(text: str) -> str:
    """``text`` with each identifier replaced by ``[EMAIL]``, ``[PHONE]``, ``[PAN]`` and so on; amounts kept."""
    seen = read(text).lower()  # as long as the reading: "İ", whose lower case is two characters, reads as "I"
    labels: dict[tuple[int, int], str] = {}
    for compiled, label_of in _PASSES:
        def mask(match: re.Match[str]) -> str:
            label = label_of(match, seen)
            if label is None:
                return match.group()
            labels[match.span()] = label
            return "\0" * (match.end() - match.start())  # what no later pass matches
        seen = compiled.sub(mask, seen)
    pieces, at, found = [], 0, sorted(labels)
    for span, (first, last) in zip(found, spans_written(text, found)):
        pieces += [text[at:first], labels[span]]
        at = last
    return "".join(pieces) + text[at:]


def redact_messages(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """Copies of the messages with their contents redacted (the originals are not changed)."""
    return [{**message, "content": redact(message["content"])} for message in messages]
