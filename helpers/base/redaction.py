"""Redaction of common personal identifiers (email, phone, PAN, Aadhaar, card and account numbers)
before text reaches a summariser, so a summary never stores them.

Amounts are not identifiers and are kept: a figure after a currency sign or before a unit ("Rs
70000-80000", "₹1,20,000", "₹15-20 k", "2 crore", "7.5 %", "12 months", "32 years"), and any
comma-grouped number. Card numbers are found in every common grouping (4-4-4-4, 4-4-4-4-3, 4-6-5,
4-6-4, or 13 to 19 digits unbroken; groups apart by a space of any kind, a no-break space too, or a
dash) and only when their Luhn check digit holds; account numbers by what is written before them
("account", "a/c", "acct no"); phone numbers by their shape (an Indian mobile with or without +91 or
0, a landline with its STD code, an international number after +), grouped the same ways; IBANs by
their shape and their mod-97 check. Digits of any script (Devanagari, Bengali, Arabic-Indic, full-width,
...) are read as the digits they are, so a number written in them is found as the same number in ASCII
would be, and the text around it is left as it was written.

Every pattern runs in time linear in the text (no pattern rescans a run of characters from each of its
positions), so a megabyte of adversarial input is redacted in well under a second
(``benchmarks/pattern_time.py`` prints the figures).

Patterns catch the usual written forms only; names, addresses and identifiers written in words
(or with unusual separators) pass through.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

_DASH = "-\u2010\u2011\u2012\u2013\u2014"  # hyphen-minus, hyphen, non-breaking hyphen, figure, en and em dash
# Unicode's space separators (Zs): a number pasted from a web page or a document is often grouped with a
# no-break or thin space, which looks like any other
_SPACE = " \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000"
_SEP = f"[{_DASH}{_SPACE}]"  # what the digits of an identifier are grouped with
_CURRENCY = r"(?:rs\.?|inr|₹|\$|usd|€|eur|£|gbp)"
_UNIT = (r"(?:%|per\s*cent|percent|k|l|lakhs?|lacs?|cr|crores?|mn|million|bn|billion|thousand|rupees?|"
         r"years?|yrs?|months?|weeks?|days?|tokens?|words?|turns?|messages?|x)(?![A-Za-z])")
_NUMBER = r"\d[\d,]*(?:\.\d+)?"
_RANGE = rf"{_NUMBER}(?:\s*(?:[{_DASH}]|to)\s*{_CURRENCY}?\s*{_NUMBER})?"
# figures that are amounts, counts or ages, masked before any identifier is looked for
_AMOUNT = re.compile(
    rf"(?<![\w]){_CURRENCY}\s*{_RANGE}(?:\s*{_UNIT})?"  # Rs 70000-80000, ₹15-20 k, Rs. 1,20,000
    rf"|(?<![\w.,]){_RANGE}\s*{_UNIT}"  # 2 crore, 7-7.5 %, 12 months, 15-20 k
    r"|(?<![\w.,])\d{1,3}(?:,\d{2,3})+(?:\.\d+)?(?![\w,])"  # 1,20,000 and 1,200,000: grouped for reading, not IDs
    # 70000-80000: a range of round thousands, not a phone; not two groups of a longer number (4000-0000-0000-0002)
    rf"|(?<![{_DASH}\w.,])\d+000\s*[{_DASH}]\s*\d+000(?![\w,]|\s*[{_DASH}]\s*\d)",
    re.IGNORECASE)

# a local part starts where a run of its characters starts (so a long run is read once, not from each of its
# characters) and is at most 64 characters long, as RFC 5321 allows; a domain at most 253
_EMAIL = re.compile(r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,253}\.[A-Za-z]{2,}\b")
# an IBAN: country, two check digits, 11 to 30 letters and digits, in groups of four or unbroken; only one
# whose mod-97 check holds is taken for one (see _ibans)
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}[0-9]{2}(?:[ \u00a0]?[A-Z0-9]{4}){2,7}(?:[ \u00a0]?[A-Z0-9]{1,4})?"
                   r"(?![A-Za-z0-9])", re.IGNORECASE)
_PAN = re.compile(r"\b[A-Z]{5}[0-9]{4}[A-Z]\b", re.IGNORECASE)  # people type it in lower case too
_CARD = re.compile(
    rf"(?<![\d-])(?:\d{{4}}({_SEP})\d{{4}}\1\d{{4}}\1\d{{4}}(?:\1\d{{3}})?"  # 4-4-4-4 (Visa, Mastercard, RuPay), 4-4-4-4-3
    rf"|\d{{4}}({_SEP})\d{{6}}\2\d{{4,5}}"  # 4-6-5 (American Express), 4-6-4 (Diners Club)
    r"|\d{13,19})(?![\d-])")  # unbroken
_ACCOUNT = re.compile(
    r"(?i:\b(?:account|a/c|acct|acc)\.?(?:\s*(?:number|num|no)\.?|\s*#)?(?:\s*(?:is|was|=))?\s*[:#\-]?\s*)"
    rf"(\d(?:{_SEP}?\d){{8,17}})(?![\d])")
# not a piece of a longer group of digits (a card number whose check digit is wrong is no Aadhaar number)
_AADHAAR = re.compile(
    rf"(?<![{_DASH}\d+])(?<!\d[{_SPACE}])[2-9][0-9]{{3}}({_SEP}?)[0-9]{{4}}\1[0-9]{{4}}(?![{_DASH}\d]|[{_SPACE}]\d)")
_PHONE = re.compile(
    rf"(?<![\w+])(?:\+91{_SEP}?|91{_SEP}|0)?[6-9]\d{{4}}{_SEP}?\d{{5}}(?![\d])"  # Indian mobile: 98765 43210, +91 98765 43210
    rf"|(?<![\w+])(?:\+91{_SEP}?|0)?[6-9]\d{{2}}{_SEP}\d{{3}}{_SEP}\d{{4}}(?![\d])"  # 987-654-3210
    # landline with STD code (in brackets or not), its number whole or in two groups: 022-23456789, 080 2345 678
    # (an STD code never starts 00, and a landline is no piece of a longer group of digits)
    rf"|(?<![\w+(])(?<!\d{_SEP})\(?0[1-9]\d{{1,3}}\)?{_SEP}(?:\d{{6,8}}|\d{{3,4}}{_SEP}\d{{3,4}})(?!\d|{_SEP}\d)"
    rf"|\+[1-9]\d{{0,2}}{_SEP}?\(?\d{{1,4}}\)?(?:{_SEP}?\d){{5,11}}(?![\d])")  # international: +44 20 7946 0958


def luhn_valid(digits: str) -> bool:
    """Whether ``digits`` end in a correct Luhn check digit, as every payment card number does."""
    total = 0
    for index, digit in enumerate(reversed(digits)):
        value = int(digit) * (2 if index % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def iban_valid(text: str) -> bool:
    """Whether ``text`` (spaces allowed) is 15 to 34 letters and digits whose ISO 13616 mod-97 check holds."""
    compact = "".join(text.split()).upper()
    if not 15 <= len(compact) <= 34:
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(ch, 36)) for ch in rearranged)) % 97 == 1


def ascii_digits(text: str) -> str:
    """``text`` with every decimal digit of any script as its ASCII digit (same length: one character each)."""
    if text.isascii():
        return text
    return "".join(str(unicodedata.digit(ch)) if ch.isdecimal() and not ch.isascii() else ch for ch in text)


def _sub(pattern: re.Pattern[str], pair: tuple[str, str], replace: Callable[[re.Match[str]], str | None]
         ) -> tuple[str, str]:
    """``pattern`` matched in the ASCII-digit copy ``pair[1]`` and each match replaced in both texts of ``pair``
    (``replace`` gives the new text, or None to keep the match): the written digits stay where nothing is hidden."""
    written, read = pair
    kept_w, kept_r, last = [], [], 0
    for match in pattern.finditer(read):
        new = replace(match)
        if new is None:
            continue
        kept_w += [written[last:match.start()], new]
        kept_r += [read[last:match.start()], new]
        last = match.end()
    if not last:
        return pair
    return "".join(kept_w) + written[last:], "".join(kept_r) + read[last:]


def _redact_outside_amounts(pair: tuple[str, str]) -> str:
    """The written text of ``pair`` (written, ASCII-digit copy) with its identifiers replaced."""
    def token(name: str) -> Callable[[re.Match[str]], str]:
        return lambda match: name
    pair = _sub(_EMAIL, pair, token("[EMAIL]"))
    pair = _sub(_PAN, pair, token("[PAN]"))
    pair = _sub(_ACCOUNT, pair, lambda match: match.group(0)[:match.start(1) - match.start(0)] + "[ACCOUNT]")
    pair = _sub(_CARD, pair, lambda match: "[CARD]" if luhn_valid(re.sub(r"\D", "", match.group(0))) else None)
    pair = _sub(_AADHAAR, pair, token("[AADHAAR]"))
    return _sub(_PHONE, pair, token("[PHONE]"))[0]


# where a range's second figure starts: "-", "–" or "to" after a digit, then maybe a currency
_RANGE_END = re.compile(rf"(?<=\d)\s*(?:[{_DASH}]|to)\s*{_CURRENCY}?\s*(?=\d)", re.IGNORECASE)


def _identifier_at(text: str, start: int) -> int | None:
    """Where a phone, card (Luhn checked) or Aadhaar number that starts at ``start`` ends; None if none does."""
    ends = [match.end() for pattern in (_PHONE, _AADHAAR) if (match := pattern.match(text, start))]
    card = _CARD.match(text, start)
    if card and luhn_valid(re.sub(r"\D", "", card.group(0))):
        ends.append(card.end())
    return max(ends, default=None)


def _amount_spans(text: str) -> list[tuple[int, int]]:
    """The spans of the amounts in ``text``. A range ends before a second figure that is an identifier:
    "Rs 500 to 98765 43210" is a payment to a phone number, so the amount is "Rs 500" and the phone is
    looked at with the rest of the text."""
    spans, position = [], 0
    while amount := _AMOUNT.search(text, position):
        start, end = amount.span()
        joint = _RANGE_END.search(text, start, end)
        identifier_end = joint and _identifier_at(text, joint.end())
        if identifier_end:
            spans.append((start, joint.end()))
            position = identifier_end  # the identifier is outside every amount
        else:
            spans.append((start, end))
            position = end
    return spans


_GAP = "\x00"  # stands for an amount while the identifiers are looked for: no pattern matches it or across it


def redact(text: str) -> str:
    """``text`` with each identifier replaced by ``[EMAIL]``, ``[PHONE]``, ``[PAN]`` and so on; amounts kept.
    Digits are matched as ASCII ones whatever their script, and kept as written where nothing is replaced."""
    written, read = _sub(_IBAN, (text, ascii_digits(text)), lambda m: "[IBAN]" if iban_valid(m.group(0)) else None)
    spans = _amount_spans(read)
    if _GAP in text:  # the marker is taken: each stretch between amounts is redacted on its own
        pieces, last = [], 0
        for start, end in spans:
            pieces += [_redact_outside_amounts((written[last:start], read[last:start])), written[start:end]]
            last = end
        return "".join(pieces) + _redact_outside_amounts((written[last:], read[last:]))
    # every amount replaced by the marker, which no pattern matches and which, like the ends of a text, is no
    # letter, digit or separator: the stretches between amounts are redacted in one pass, then the amounts put
    # back where the markers are
    cut = [0, *(i for span in spans for i in span), len(read)]
    between = [(written[a:b], read[a:b]) for a, b in zip(cut[::2], cut[1::2])]
    hidden = _redact_outside_amounts((_GAP.join(w for w, _ in between), _GAP.join(r for _, r in between)))
    amounts = [written[start:end] for start, end in spans]
    parts = hidden.split(_GAP)
    return "".join(part + (amounts[index] if index < len(amounts) else "") for index, part in enumerate(parts))


def redact_messages(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """Copies of the messages with their contents redacted (the originals are not changed)."""
    return [{**message, "content": redact(message["content"])} for message in messages]
