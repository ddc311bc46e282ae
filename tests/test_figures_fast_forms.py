"""The fast forms of the audit's and the redaction's patterns (issue 25: a megabyte in under a second) find exactly
what the plain forms find: each gate, rewritten pattern and NumPy copy is held here to the form it replaced, on
seeded random texts made of the benchmark's shapes and the characters the patterns care about."""
from __future__ import annotations

import random
import re

import pytest

from helpers.base import redaction
from helpers.measure import audit

PIECES = ["1.", "1", "1 ", "1,", "1-", "1.5 ", "a@", "x@y.", "rs 1 ", "Rs. ", "INR ", "+1 ", "0 1", "₹1-", "1 to ",
          "70000-", "1,00,", "98765 4321 ", "4111 1111 ", "2345-6789-", "९८७६५ ", "١٢٣٤ ", "１２３ ", "1\u00a0", "no ",
          "never a ", "three ", "months", "Year", "account no 1234 ", "a/c ", "abcde1234", "GB82 WEST ", "k", "L",
          "%", " lakh", "crore ", "\u2013", "to", "İ", "ı", "\u212a", "ſ", ".", ",", "_", "x", "\n", "000", "$", "€"]


def _texts(seed: int, count: int = 300) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choices(PIECES, k=rng.randint(1, 40))) for _ in range(count)]


# FIGURE as it was written before it was made of the fast form's pieces (each optional part "X?", the currency tried
# before a digit, no look ahead at the tails), and the figure texts as main gathered them: FIGURE without its groups,
# glued to a word character, comma or dot or not
_NUM, _UNIT = r"\d[\d,]*(?:\.\d+)?", r"(?:%|percent\b|k\b|l\b|lakhs?\b|lac\b|cr\b|crores?\b|thousand\b)"
_PLAIN_FIGURE = re.compile(
    rf"(?=[\d₹ri])(?P<currency>₹|rs\.?\s?|inr\s?)?(?P<low>{_NUM})(?:\s?(?:[{audit._DASH}]|to)\s?(?P<high>{_NUM}))?"
    rf"(?:\s?(?=[%pklct])(?P<unit>{_UNIT}))?", re.IGNORECASE)
_PLAIN = re.sub(r"\(\?P<\w+>", "(?:", _PLAIN_FIGURE.pattern)
_PLAIN_FIGURE_TEXTS = re.compile(rf"(?<=[^\W_]|[,.])(?:{_PLAIN})|({_PLAIN})", re.IGNORECASE)


@pytest.mark.parametrize("seed", range(4))
def test_the_fast_figure_pattern_gathers_what_the_plain_one_does(seed):
    for text in _texts(seed):
        assert audit._FIGURE_TEXTS.findall(text) == _PLAIN_FIGURE_TEXTS.findall(text), text


@pytest.mark.parametrize("seed", range(4))
def test_the_figure_pattern_matches_as_the_plain_one_with_the_same_groups(seed):
    for text in _texts(seed) + ["Rs. 15-20 lakhs", "₹1,20,000 to 1,40,000 L", "7 percent", "3 crores", "INR 5 k"]:
        found = [(m.span(), m.groupdict()) for m in audit.FIGURE.finditer(text)]
        assert found == [(m.span(), m.groupdict()) for m in _PLAIN_FIGURE.finditer(text)], text


@pytest.mark.parametrize("seed", range(4))
def test_the_gated_figures_are_the_ungated_ones(seed):
    """A text without a digit or a time word skips a pass: what figures() gives is what both passes give."""
    for text in _texts(seed) + ["three months", "THREE YEARS", "five \u212aakh", "no digits here", "١٢"]:
        written = [f.strip() for f in _PLAIN_FIGURE_TEXTS.findall(text) if f] + audit._WORD_NUMBER.findall(text)
        assert [figure.text for figure in audit.figures(text)] == written, text


def test_negations_are_the_last_stem_of_each_distinct_text():
    summary = "No debts, no loans and no debts; never a car, without any savings, no loan."
    claims = audit.audit_summary(summary, [])
    expected = {m.group(0): audit._stem(m.group("what")) for m in audit.NEGATION.finditer(summary)}
    assert [claim.text for claim in claims if claim.kind == "negation"] == [
        text for text, what in expected.items() if what not in audit._STOP]


def _read(text: str) -> str:
    return text.translate(redaction._READ).lower()


@pytest.mark.parametrize("seed", range(4))
def test_the_amount_pattern_without_absent_branches_matches_as_the_whole_one(seed):
    for text in map(_read, _texts(seed)):
        pattern = redaction._amount_pattern(redaction._marks(text))
        assert [m.regs for m in pattern.finditer(text)] == [m.regs for m in redaction._AMOUNT.finditer(text)], text


# the identifier patterns as they were before each took its first character (the same matches, slower)
_BEFORE = {
    "_IBAN": r"(?=[a-z])(?<![a-z0-9])[a-z]{2}[0-9]{2}(?:[ \u00a0]?[a-z0-9]{4}){2,7}(?:[ \u00a0]?[a-z0-9]{1,4})?"
             r"(?![a-z0-9])",
    "_PAN": r"(?=[a-z])\b[a-z]{5}[0-9]{4}[a-z]\b",
    "_CARD": rf"(?=\d)(?<![\d-])(?:\d{{4}}({redaction._SEP})\d{{4}}\1\d{{4}}\1\d{{4}}(?:\1\d{{3}})?"
             rf"|\d{{4}}({redaction._SEP})\d{{6}}\2\d{{4,5}}|\d{{13,19}})(?![\d-])",
    "_ACCOUNT": r"(?=a)\b(?:account|a/c|acct|acc)\.?(?:\s*(?:number|num|no)\.?|\s*#)?(?:\s*(?:is|was|=))?\s*[:#\-]?\s*"
                rf"(\d(?:{redaction._SEP}?\d){{8,17}})(?![\d])",
    "_AADHAAR": rf"(?=[2-9])(?<![{redaction._DASH}\d+])(?<!\d[{redaction._SPACE}])[2-9][0-9]{{3}}({redaction._SEP}?)"
                rf"[0-9]{{4}}\1[0-9]{{4}}(?![{redaction._DASH}\d]|[{redaction._SPACE}]\d)",
}


@pytest.mark.parametrize("name", _BEFORE)
def test_each_identifier_pattern_matches_as_before(name):
    fast, before = getattr(redaction, name), re.compile(_BEFORE[name])
    extra = ["ABCDE1234F", "GB82 WEST 1234 5698 7654 32", "4111 1111 1111 1111", "2345 6789 0123",
             "account no 1234 5678 9012", "x-4111-1111-1111-1111", "5234 5678 9012"]
    for text in map(_read, _texts(7, 200) + extra):
        assert [m.regs for m in fast.finditer(text)] == [m.regs for m in before.finditer(text)], text
        for start in range(min(len(text), 30)):  # as _identifier_at calls them: at a place, in a window
            found, expected = fast.match(text, start, start + 64), before.match(text, start, start + 64)
            assert (found and found.regs) == (expected and expected.regs), (text, start)


def _redact_ungated(text: str) -> str:
    """redact as it was with every pass run on every text (no gate) and amounts masked one by one."""
    pair = (text, _read(text))
    pair = redaction._sub(re.compile(_BEFORE["_IBAN"]), pair,
                          lambda match: "[IBAN]" if redaction.iban_valid(match[0]) else None)
    written, read = pair
    kept, last, position = [], 0, 0
    while True:
        for amount in redaction._AMOUNT.finditer(read, position):
            start, end = amount.span()
            joint = amount.lastindex
            if joint in redaction._JOINTS and read[amount.start(joint) - 1] != ",":
                second = amount.end(joint)
                identifier_end = redaction._identifier_at(read, second)
                if identifier_end:
                    kept += [read[last:start], "\0" * (second - start), read[second:identifier_end]]
                    last = position = identifier_end
                    break
            kept += [read[last:start], "\0" * (end - start)]
            last = end
        else:
            break
    pair = (written, "".join(kept) + read[last:])
    pair = redaction._sub(redaction._EMAIL, pair, "[EMAIL]")
    pair = redaction._sub(re.compile(_BEFORE["_PAN"]), pair, "[PAN]")
    pair = redaction._sub(re.compile(_BEFORE["_ACCOUNT"]), pair, "[ACCOUNT]", group=1)
    pair = redaction._sub(re.compile(_BEFORE["_CARD"]), pair, redaction._card)
    pair = redaction._sub(re.compile(_BEFORE["_AADHAAR"]), pair, "[AADHAAR]")
    return redaction._sub(redaction._PHONE, pair, "[PHONE]")[0]


@pytest.mark.parametrize("seed", range(4))
def test_redact_with_its_gates_is_redact_without_them(seed):
    extra = ["Rs 500 to 98765 43210", "70000-80000", "₹15-20 k", "+91 98765 43210", "4111 1111 1111 1111",
             "my account no is 123456789012", "pay 2,00,000 to a/c 1234-5678-9012", "call 022-23456789",
             "abcde1234f", "x.y+z@mail.co.in", "१२३४ ५६७८ ९०१२", "GB82 WEST 1234 5698 7654 32",
             "call 080 234 567", "or +1 2 3 4 5 6 7"]  # phones with no four digits in a row
    for text in _texts(seed) + extra:
        assert redaction.redact(text) == _redact_ungated(text), text


@pytest.mark.parametrize("length", [49_999, 50_000, 120_000])
def test_the_long_digit_copy_is_str_translate(length):
    """Past 50,000 characters the digit copy is one NumPy lookup: the same text as ``str.translate``, for every
    plane, lone surrogates and every character the table maps."""
    rng = random.Random(length)
    pool = [chr(point) for point in (*range(0x3000), *range(0xD7F0, 0xE100), *range(0x1D7C0, 0x1D800),
                                     *range(0x1E950, 0x1E960), 0x10FFFF)] + [chr(point) for point in redaction._READ] * 2
    text = "".join(rng.choices(pool, k=length))
    assert redaction._read_digits(text) == text.translate(redaction._READ)
