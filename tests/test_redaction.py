"""Redaction keeps amounts and ranges, years, ages and percentages; finds card numbers in every common
grouping (checked with Luhn), account numbers by their context, phones by their shape; and leaves every
figure of the lessons' conversations and summaries as it was."""
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.base.redaction import luhn_valid, redact, redact_messages
from tests.support.lesson_texts import lesson_texts


def with_check_digit(body):
    """``body`` and the digit that makes it pass Luhn (worked out here, not by the module)."""
    for digit in "0123456789":
        digits = [int(d) for d in body + digit][::-1]
        if (sum(digits[0::2]) + sum(sum(divmod(2 * d, 10)) for d in digits[1::2])) % 10 == 0:
            return body + digit
    raise AssertionError


def grouped(digits, groups, separator):
    out, start = [], 0
    for size in groups:
        out.append(digits[start:start + size])
        start += size
    return separator.join(out)


@pytest.mark.parametrize("text", [
    "I want Rs 70000-80000 a month", "Rs 70000\u201380000", "between 70000-80000 a month", "₹1,20,000", "Rs. 1,20,000",
    "save ₹15\u201120 k each month", "₹15-20 k", "INR 2,00,000", "Rs 70,000 to 80,000", "a ₹2 crore corpus by 55",
    "(₹1.8\u20113.6 L)", "a 7-7.5 % return", "12 months", "3\u20116\u2011month FD", "I am 34", "matures in 2030",
    "32 years old, retire at 55", "1,142 tokens", "Rs 98765-43210", "₹4,20,000 over 12 months", "$1,200,000",
    "50% of 1,20,000", "Rs 3,00,000 in a PPF account", "10 000 steps",
])
def test_amounts_ranges_years_ages_and_percentages_are_kept(text):
    assert redact(text) == text


@pytest.mark.parametrize("currency", ["Rs", "Rs.", "INR", "₹", "$", "USD", "€", "EUR", "eur", "£", "GBP"])
def test_an_amount_after_any_currency_is_kept_alike(currency):
    # ten digits after a currency are an amount, after every currency the pattern names (EUR was read as a phone)
    assert redact(f"{currency} 9876543210 a year") == f"{currency} 9876543210 a year"
    assert redact("call 9876543210") == "call [PHONE]"


def test_every_figure_of_the_lessons_conversations_and_summaries_comes_out_unchanged():
    texts = lesson_texts()
    assert sum("₹" in text or "Rs" in text for text in texts) > 20
    changed = {text: redact(text) for text in texts if redact(text) != text}
    assert not changed, changed


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([((4, 4, 4, 4), 16), ((4, 4, 4, 4, 3), 19), ((4, 6, 5), 15), ((4, 6, 4), 14), ((13,), 13),
                        ((15,), 15), ((16,), 16), ((19,), 19)]),
       st.sampled_from([" ", "-"]), st.data())
def test_a_card_number_in_any_common_grouping_is_found_when_its_luhn_digit_holds(grouping, separator, data):
    groups, length = grouping
    body = data.draw(st.text("0123456789", min_size=length - 1, max_size=length - 1).filter(lambda d: d[0] != "0"))
    number = with_check_digit(body)
    assert luhn_valid(number)
    written = grouped(number, groups, separator)
    assert redact(f"my card is {written}, expiry 09/27") == "my card is [CARD], expiry 09/27"
    wrong = number[:-1] + str((int(number[-1]) + 1) % 10)
    assert not luhn_valid(wrong) and "[CARD]" not in redact(f"my card is {grouped(wrong, groups, separator)}")


def test_the_cards_the_issue_names_are_found():
    assert redact("amex 3782 822463 10005") == "amex [CARD]"  # 4-6-5, 15 digits
    assert redact("diners 3056 930902 5904") == "diners [CARD]"  # 4-6-4, 14 digits
    assert redact("visa 4111-1111-1111-1111 and 4111111111111111") == "visa [CARD] and [CARD]"


@pytest.mark.parametrize("context", ["account", "Account number", "account number is", "account no.", "a/c",
                                     "A/C no", "acct no", "acct. no.", "acct #", "savings account:", "account = "])
@pytest.mark.parametrize("digits", ["12345678901", "123456789", "001234567890123456", "1234 5678 901"])
def test_an_account_number_is_found_by_what_is_written_before_it(context, digits):
    assert redact(f"my {context} {digits}.").endswith("[ACCOUNT].")
    assert digits not in redact(f"my {context} {digits}.")


def test_an_account_mentioned_with_an_amount_keeps_the_amount():
    assert redact("I hold a PPF account with Rs 3,00,000 in it") == "I hold a PPF account with Rs 3,00,000 in it"
    assert redact("send Rs 50,000 to a/c 12345678901") == "send Rs 50,000 to a/c [ACCOUNT]"


@pytest.mark.parametrize("phone", ["+91 98765 43210", "+91-98765-43210", "+919876543210", "9876543210", "09876543210",
                                   "98765 43210", "98765-43210", "987-654-3210", "022-23456789", "080 2345678",
                                   "+44 20 7946 0958", "+1 415 555 0134", "+1 (415) 555 0134",
                                   # a landline's number in two groups, its STD code in brackets: as Indians write them
                                   "080 2345 678", "022 2345 6789", "(022) 2345 6789", "(080) 23456789",
                                   "011-2345-6789", "0124 234 5678"])
def test_phones_are_found_by_their_shape(phone):
    assert redact(f"call me on {phone} today") == "call me on [PHONE] today"


def test_the_other_identifiers_are_still_found():
    assert redact("mail a.b@example.com, PAN abcde1234f, aadhaar 2345 6789 0123.") == (
        "mail [EMAIL], PAN [PAN], aadhaar [AADHAAR].")
    messages = [{"role": "user", "content": "my phone is 98765 43210 and I earn Rs 1,20,000"}]
    assert redact_messages(messages) == [{"role": "user", "content": "my phone is [PHONE] and I earn Rs 1,20,000"}]
    assert messages[0]["content"] == "my phone is 98765 43210 and I earn Rs 1,20,000"


# every space separator (Unicode's Zs: the no-break space of a pasted number among them) and every dash the
# amounts know: a number grouped with one of them is still the number a reader sees
SPACES = [ch for ch in map(chr, range(0x110000)) if unicodedata.category(ch) == "Zs"]
DASHES = ["-", "\u2010", "\u2011", "\u2012", "\u2013", "\u2014"]


def test_the_spaces_are_unicodes_space_separators():
    assert len(SPACES) == 17 and "\u00a0" in SPACES and "\u202f" in SPACES and "\u3000" in SPACES


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(SPACES + DASHES), st.text("0123456789", min_size=15, max_size=15).filter(lambda d: d[0] != "0"))
def test_an_identifier_grouped_with_any_space_or_dash_is_found(separator, body):
    number = with_check_digit(body)
    assert redact(f"my card is {grouped(number, (4, 4, 4, 4), separator)}, ok") == "my card is [CARD], ok"
    wrong = number[:-1] + str((int(number[-1]) + 1) % 10)
    assert grouped(wrong, (4, 4, 4, 4), separator) in redact(f"order {grouped(wrong, (4, 4, 4, 4), separator)}")
    for phone in (f"98765{separator}43210", f"+91{separator}98765{separator}43210", f"987{separator}654{separator}3210",
                  f"022{separator}23456789", f"+44{separator}20{separator}7946{separator}0958"):
        assert redact(f"call me on {phone} today") == "call me on [PHONE] today", ascii(phone)
    assert redact(f"aadhaar 2345{separator}6789{separator}0123.") == "aadhaar [AADHAAR].", ascii(separator)
    assert redact(f"a/c no 1234{separator}5678{separator}901.") == "a/c no [ACCOUNT].", ascii(separator)
    assert redact(f"Rs 70000{separator}80000 a month") == f"Rs 70000{separator}80000 a month"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["4000", "5000", "1000", "0000", "3000", "4111"]), min_size=3, max_size=3),
       st.sampled_from(["-", "\u2013", " "]))
def test_a_card_whose_groups_look_like_a_range_of_thousands_is_still_a_card(groups, separator):
    # "4000-0000" alone is a range of round thousands (an amount); inside "4000-0000-0000-0002" it is a card's
    number = with_check_digit("4" + "".join(groups)[1:] + "000")
    written = grouped(number, (4, 4, 4, 4), separator)
    assert redact(f"card {written} ok") == "card [CARD] ok", written
    assert redact("test card 4000-0000-0000-0002.") == "test card [CARD]."
    assert redact("between 4000-5000 a month") == "between 4000-5000 a month"


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["Rs 500", "₹2,000", "INR 1,20,000", "Rs. 25,000", "$ 40", "500", "25,000"]),
       st.sampled_from([" to ", " - ", " \u2013 "]),
       st.sampled_from([("9876543210", "[PHONE]"), ("98765 43210", "[PHONE]"), ("+91 98765 43210", "[PHONE]"),
                        ("4111 1111 1111 1111", "[CARD]"), ("4111111111111111", "[CARD]"),
                        ("2345 6789 0123", "[AADHAAR]")]))
def test_an_identifier_after_an_amount_is_no_end_of_a_range(amount, joint, identifier):
    # "send Rs 500 to 9876543210" is a payment to a phone number (UPI), not a range from 500 to 9876543210
    written, tag = identifier
    assert redact(f"I sent {amount}{joint}{written} on UPI.") == f"I sent {amount}{joint}{tag} on UPI."


@pytest.mark.parametrize("text", ["Rs 70000-80000", "Rs 98765-43210", "Rs 70,000 to 80,000", "₹15-20 k",
                                  "Rs 500 to 5,000 a month", "12 to 24 months", "Rs 5 to 50 lakh"])
def test_a_range_whose_end_is_no_identifier_is_still_kept(text):
    assert redact(text) == text


# ----- digits of any script, IBAN (issue 25 item 6) --------------------------------------------------

def in_script(text: str, zero: str) -> str:
    """``text`` with its ASCII digits written in the script whose zero is ``zero`` (worked out here)."""
    return "".join(chr(ord(zero) + int(ch)) if ch.isdigit() else ch for ch in text)


SCRIPTS = {"Devanagari": "\u0966", "Bengali": "\u09e6", "Arabic-Indic": "\u0660", "full-width": "\uff10",
           "Tamil": "\u0be6", "Gujarati": "\u0ae6"}


@pytest.mark.parametrize("script", SCRIPTS)
@pytest.mark.parametrize("number,token", [("98765 43210", "[PHONE]"), ("+91 98765 43210", "[PHONE]"),
                                          ("2345 6789 0123", "[AADHAAR]"), ("4111 1111 1111 1111", "[CARD]")])
def test_phones_aadhaar_and_cards_are_found_in_any_scripts_digits(script, number, token):
    written = in_script(number, SCRIPTS[script])
    assert all(unicodedata.category(ch) == "Nd" for ch in written if not ch.isspace() and ch != "+")
    assert redact(f"my number is {written}, note it") == f"my number is {token}, note it"


@pytest.mark.parametrize("script", SCRIPTS)
def test_amounts_in_any_scripts_digits_are_kept_as_written(script):
    text = in_script("I earn Rs 1,20,000 a month and pay 12 months of rent", SCRIPTS[script])
    assert redact(text) == text


@pytest.mark.parametrize("iban", ["GB82 WEST 1234 5698 7654 32", "DE89370400440532013000",
                                  "FR14 2004 1010 0505 0001 3M02 606", "de89 3704 0044 0532 0130 00"])
def test_an_iban_is_redacted(iban):
    assert redact(f"send it to {iban} please") == "send it to [IBAN] please"


def test_an_iban_shape_whose_check_fails_is_no_iban():
    assert "[IBAN]" not in redact("code GB82 WEST 1234 5698 7654 33 and ticket AB12 CDEF GHIJ KLMN")


def test_a_dotted_capital_i_after_an_iban_is_read_without_error():
    """"İ" is the one letter whose lower case is two characters; an IBAN glued to it once raised ValueError."""
    assert redact("GB82 WEST 1234 5698 7654 32 İstanbul") == "[IBAN] İstanbul"
    assert redact("EXISTING SUMMARY:GB82 WEST 1234 5698 7654 32İact").startswith("EXISTING SUMMARY:")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789", max_size=40))
def test_the_fast_luhn_check_agrees_with_the_digit_by_digit_one(digits):
    """ASCII digits take a path of string operations; the same number in Devanagari digits takes the loop."""
    devanagari = digits.translate(str.maketrans("0123456789", "०१२३४५६७८९"))
    total = sum(d if i % 2 == 0 else (2 * d - 9 if 2 * d > 9 else 2 * d)
                for i, d in enumerate(int(ch) for ch in reversed(digits)))
    assert luhn_valid(digits) == luhn_valid(devanagari) == (total % 10 == 0)
