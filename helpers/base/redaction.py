"""Personal identifiers (email, phone, PAN, Aadhaar, card, account, IBAN; digits of any script) hidden before text
reaches a summariser; amounts, counts and ages kept. Cards are Luhn checked, IBANs mod-97 checked, accounts found by
the words before them. Every pattern runs in time linear in the text (``benchmarks/pattern_time.py``)."""
from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable

from helpers.base.code_points import OneForOne
from helpers.base.errors import SettingError
from helpers.base.literals import first_look, gate

_DASH = "-\u2010\u2011\u2012\u2013\u2014"  # hyphen-minus, hyphen, non-breaking hyphen, figure, en and em dash
_SPACE = " \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000"  # Unicode's spaces (Zs): pasted numbers hold no-break ones
_SEP = f"[{_DASH}{_SPACE}]"  # what the digits of an identifier are grouped with
_CURRENCIES = ("rs", "inr", "₹", "$", "usd", "€", "eur", "£", "gbp")
_CURRENCY = "(?:" + "|".join(re.escape(c) + (r"\.?" if c == "rs" else "") for c in _CURRENCIES) + ")"  # and "rs."
_UNITS = ("%", r"per\s*cent", "percent", "k", "l", "lakhs?", "lacs?", "cr", "crores?", "mn", "million", "bn",
          "billion", "thousand", "rupees?", "years?", "yrs?", "months?", "weeks?", "days?", "tokens?", "words?",
          "turns?", "messages?", "x")  # each starts with a literal: the look at the first characters is made of them
_UNIT = f"{first_look(_UNITS)}(?:{'|'.join(_UNITS)})(?![A-Za-z])"
# a figure; possessive (nothing after one is a digit or comma, so giving some back never makes a match)
_NUMBER = r"\d[\d,]*+(?:\.\d++)?+"
# a range; the group ``joint`` holds what joins its figures
_RANGE = rf"{_NUMBER}(?:(?P<joint>\s*+(?:[{_DASH}]|to)\s*+{_CURRENCY}?\s*+){_NUMBER})?+"
# Every pattern reads a copy of the text with ASCII digits in lower case (re.IGNORECASE costs twice as much). Amounts,
# counts and ages are masked before identifiers; the branches share their look-behinds:
_NEVER = "(?!)"  # in place of a branch whose mark the text lacks: it fails at once, and the groups keep their numbers
_PLAIN_START = r"(?<![.,])(?=\d)"  # an amount with no currency (a unit must follow it)
_GROUPED = r"\d{1,3}(?:,\d{2,3})+(?:\.\d+)?(?![\w,])"  # 1,20,000 and 1,200,000: grouped for reading, not IDs
# 70000-80000: a range of round thousands, not a phone; not two groups of a longer number (4000-0000-0000-0002)
_NO_THOUSANDS = f"{_NEVER}(?P<joint_of_thousands>)"  # its group kept, for its number
_THOUSANDS = rf"(?<![{_DASH}])\d+000(?P<joint_of_thousands>\s*[{_DASH}]\s*)\d+000(?![\w,]|\s*[{_DASH}]\s*\d)"


_AMOUNT_LOOK = first_look((*"0123456789", *_CURRENCIES))  # an amount starts with a digit or a currency


def _amount_source(unit: bool = True, currency: bool = True, grouped: bool = True, thousands: bool = True) -> str:
    """The amount pattern; a branch whose mark (a unit, a currency, a comma, "000") is absent from
    the text can match nothing there, and is written as ``_NEVER``."""
    # Rs 70000-80000, ₹15-20 k (a unit if one follows); 2 crore, 7-7.5 %, 12 months, 15-20 k (a unit must follow)
    figure = (rf"(?<!\w)(?:{_PLAIN_START if unit else _NEVER}|(?P<currency>{_CURRENCY if currency else _NEVER})"
              rf"\s*+(?=\d)){_RANGE}(?(currency)(?:\s*+{_UNIT})?|\s*+{_UNIT})")
    if not (unit or currency):
        figure = f"{_NEVER}(?P<currency>)(?P<joint>)"  # its groups kept, for their numbers
    return (rf"{_AMOUNT_LOOK}(?:{figure}"
            rf"|(?<![\w.,])(?:{_GROUPED if grouped else _NEVER}|{_THOUSANDS if thousands else _NO_THOUSANDS}))")


@functools.lru_cache(maxsize=16)
def _amount_pattern(marks: tuple[bool, ...]) -> re.Pattern[str]:
    """The amount pattern for a text with these marks (see ``_marks``)."""
    return re.compile(_amount_source(*marks))


_AMOUNT = re.compile(_amount_source())

# a local part starts where a run of its characters starts and is at most 64 characters (RFC 5321), a domain 253
_EMAIL = re.compile(r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,253}\.[A-Za-z]{2,}\b")
# an IBAN: country, two check digits, 11 to 30 letters and digits, in groups of four or unbroken
# Each pattern below starts by taking one character of a class (then looks behind it): the engine then skips to the
# next character of that class in a fast loop instead of trying the pattern at every place (the same matches)
_IBAN = re.compile(r"[a-z](?<![a-z0-9][a-z])[a-z][0-9]{2}(?:[ \u00a0]?[a-z0-9]{4}){2,7}(?:[ \u00a0]?[a-z0-9]{1,4})?"
                   r"(?![a-z0-9])")
_PAN = re.compile(r"[a-z](?<!\w[a-z])[a-z]{4}[0-9]{4}[a-z]\b")  # a word boundary before the first letter
_CARD = re.compile(  # 4-4-4-4 (Visa, Mastercard, RuPay), 4-4-4-4-3
    rf"\d(?<![\d-]\d)(?:\d{{3}}({_SEP})\d{{4}}\1\d{{4}}\1\d{{4}}(?:\1\d{{3}})?"
    rf"|\d{{3}}({_SEP})\d{{6}}\2\d{{4,5}}"  # 4-6-5 (American Express), 4-6-4 (Diners Club)
    r"|\d{12,18})(?![\d-])")  # unbroken: 13 to 19 digits
_ACCOUNT = re.compile(
    r"a(?<!\wa)(?:ccount|/c|cct|cc)\.?(?:\s*(?:number|num|no)\.?|\s*#)?(?:\s*(?:is|was|=))?\s*[:#\-]?\s*"
    rf"(\d(?:{_SEP}?\d){{8,17}})(?![\d])")
# not a piece of a longer group of digits (a card number whose check digit is wrong is no Aadhaar number)
_AADHAAR = re.compile(rf"[2-9](?<![{_DASH}\d+][2-9])(?<!\d[{_SPACE}][2-9])[0-9]{{3}}({_SEP}?)[0-9]{{4}}\1[0-9]{{4}}"
                      rf"(?![{_DASH}\d]|[{_SPACE}]\d)")
_PHONE = re.compile(  # Indian mobile (98765 43210, +91 98765 43210, 987-654-3210), landline, international
    rf"(?=[0-9+(])(?:(?<![\w+])(?:(?:\+91{_SEP}?|91{_SEP}|0)?[6-9]\d{{4}}{_SEP}?\d{{5}}(?![\d])"
    rf"|(?:\+91{_SEP}?|0)?[6-9]\d{{2}}{_SEP}\d{{3}}{_SEP}\d{{4}}(?![\d])"
    # an STD code (never 00, in brackets or not), then the number whole or in two groups: 022-23456789, 080 2345 678
    rf"|(?<!\()(?<!\d{_SEP})\(?0[1-9]\d{{1,3}}\)?{_SEP}(?:\d{{6,8}}|\d{{3,4}}{_SEP}\d{{3,4}})(?!\d|{_SEP}\d))"
    rf"|\+[1-9]\d{{0,2}}{_SEP}?\(?\d{{1,4}}\)?(?:{_SEP}?\d){{5,11}}(?![\d]))")  # international: +44 20 7946 0958


# every decimal digit of any script (none lies past plane 1) as its ASCII digit, and "İ" as "I": the one letter whose
# lower case is two characters, so that the copy the patterns read is as long as the text
_READ = {**{point: str(unicodedata.digit(chr(point))) for point in range(0x80, 0x20000) if chr(point).isdecimal()},
         0x130: "I"}
_read_digits = OneForOne(_READ)  # the digit copy: on a long text one NumPy lookup of every code point
_OTHER_DIGIT = re.compile(r"[^\D0-9]|\u0130")  # a character _READ changes (sre's \d is str.isdecimal)
_LETTER_DIGIT = re.compile("[a-z][0-9]")
_EMAIL_GATE, _ACCOUNT_GATE = gate(_EMAIL.pattern), gate(_ACCOUNT.pattern)  # the literals each cannot match without
_THREE_DIGITS, _FOUR_DIGITS = re.compile(r"\d\d\d"), re.compile(r"\d\d\d\d")  # a class first: the engine skips to digits
_DOUBLED = bytes.maketrans(b"0123456789", b"0246813579")  # a digit doubled, as the sum of its digits


def luhn_valid(digits: str) -> bool:
    """Whether ``digits`` (of any script) end in a correct Luhn check digit, as every payment card number does."""
    ascii_digits = digits if digits.isascii() else digits.translate(_READ)
    if not (ascii_digits.isascii() and ascii_digits.isdigit() or not digits):
        raise SettingError("digits", digits, f"luhn_valid reads digits only, got {digits[:40]!r}")
    data = ascii_digits.encode()
    return (sum(data[::-2]) + sum(data[-2::-2].translate(_DOUBLED)) - 48 * len(data)) % 10 == 0


def iban_valid(text: str) -> bool:
    """Whether ``text`` (spaces allowed) is 15 to 34 letters and digits whose ISO 13616 mod-97 check holds."""
    compact = "".join(text.split()).upper()
    if not 15 <= len(compact) <= 34:
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(ch, 36)) for ch in rearranged)) % 97 == 1


def _sub(pattern: re.Pattern[str], pair: tuple[str, str], replace: str | Callable[[re.Match[str]], str | None],
         group: int = 0) -> tuple[str, str]:
    """``pattern`` matched in the copy ``pair[1]`` and each match's ``group`` replaced in both texts of ``pair`` by
    ``replace`` or what it gives (None keeps it): the text as written stays where nothing is hidden."""
    written, read = pair
    kept_w, kept_r, last = [], [], 0
    for match in pattern.finditer(read):
        new = replace if isinstance(replace, str) else replace(match)
        if new is None:
            continue
        kept_w += [written[last:match.start(group)], new]
        kept_r += [read[last:match.start(group)], new.lower()]
        last = match.end(group)
    if not last:
        return pair
    return "".join(kept_w) + written[last:], "".join(kept_r) + read[last:]


def _card(match: re.Match[str]) -> str | None:
    """``[CARD]`` for a card-shaped match whose Luhn digit holds (its separator is group 1 or 2)."""
    return "[CARD]" if luhn_valid(match[0].replace(match[1] or match[2] or "-", "")) else None


# what every phone, card or Aadhaar number starts with: nine digits, each after at most ")" and a separator
_NINE_DIGITS = re.compile(rf"\d(?:\)?{_SEP}?\d){{8}}")
_JOINTS = (_AMOUNT.groupindex["joint"], _AMOUNT.groupindex["joint_of_thousands"])
_LONGEST_IDENTIFIER = 64  # characters: a card of 19 digits or a phone in groups is at most about 30, and a look past it


def _identifier_at(read: str, start: int) -> int | None:
    """Where a phone, card (Luhn checked) or Aadhaar number that starts at ``start`` ends; None if none does."""
    end = start + _LONGEST_IDENTIFIER
    if not _NINE_DIGITS.match(read, start, end):
        return None
    ends = [match.end() for pattern in (_PHONE, _AADHAAR) if (match := pattern.match(read, start, end))]
    card = _CARD.match(read, start, end)
    if card and _card(card):
        ends.append(card.end())
    return max(ends, default=None)


# what each branch of the amount pattern cannot match without: a unit, a currency, a comma, "000"
_BRANCH_GATES = tuple(map(gate, (_UNIT, _CURRENCY, _GROUPED, _THOUSANDS)))


def _as_nuls(match: re.Match[str]) -> str:
    return "\0" * (match.end() - match.start())


def _marks(read: str) -> tuple[bool, ...]:
    """Which of the amount pattern's branches can match in ``read``: each needs its mark (see ``_amount_source``)."""
    return tuple(may_match(read) for may_match in _BRANCH_GATES)


def _masked_amounts(read: str) -> str:
    """``read`` with each amount's characters replaced by NUL, which no pattern matches; a range ends before a second
    figure that is an identifier ("Rs 500 to 98765 43210" pays a phone number: the amount is "Rs 500")."""
    marks = _marks(read)
    if not any(marks):
        return read
    amounts = _amount_pattern(marks)
    if not _NINE_DIGITS.search(read):  # no identifier can start anywhere (each starts with nine digits): mask them all
        return amounts.sub(_as_nuls, read)
    kept, last, position = [], 0, 0
    while True:
        for amount in amounts.finditer(read, position):
            start, end = amount.span()
            joint = amount.lastindex  # the group of a range's joint, if it is one
            if joint in _JOINTS and read[amount.start(joint) - 1] != ",":  # a joint after a digit, not a comma
                second = amount.end(joint)
                identifier_end = _identifier_at(read, second)
                if identifier_end:
                    kept += [read[last:start], "\0" * (second - start), read[second:identifier_end]]
                    last = position = identifier_end  # the identifier is outside every amount
                    break
            kept += [read[last:start], "\0" * (end - start)]
            last = end
        else:
            return "".join(kept) + read[last:]


def redact(text: str) -> str:
    """``text`` with each identifier replaced by ``[EMAIL]``, ``[PHONE]``, ``[PAN]`` and so on; amounts kept."""
    pair = (text, (_read_digits(text) if not text.isascii() and _OTHER_DIGIT.search(text) else text).lower())
    letter_digit = _LETTER_DIGIT.search(pair[1])  # every IBAN and PAN holds one; no later pass makes one
    if letter_digit:
        pair = _sub(_IBAN, pair, lambda match: "[IBAN]" if iban_valid(match[0]) else None)
    written, read = pair
    pair = (written, _masked_amounts(read))  # amounts as NULs: the texts keep their length, so their places agree
    if _EMAIL_GATE(read):
        pair = _sub(_EMAIL, pair, "[EMAIL]")
    if letter_digit:
        pair = _sub(_PAN, pair, "[PAN]")
    if _ACCOUNT_GATE(read):
        pair = _sub(_ACCOUNT, pair, "[ACCOUNT]", group=1)
    # exact gates: every card and Aadhaar number holds four digits in a row, every phone number three or a "+"
    if _FOUR_DIGITS.search(pair[1]):
        pair = _sub(_CARD, pair, _card)
        pair = _sub(_AADHAAR, pair, "[AADHAAR]")
    if "+" in pair[1] or _THREE_DIGITS.search(pair[1]):
        pair = _sub(_PHONE, pair, "[PHONE]")
    return pair[0]


def redact_messages(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """Copies of the messages with their contents redacted (the originals are not changed)."""
    return [{**message, "content": redact(message["content"])} for message in messages]
