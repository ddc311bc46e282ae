"""The reading's and the escaping's shortcuts give what the plain way gives: the imitation pattern led by a class of
first characters finds what the plain ignore-case alternation finds, the word search led by the character before a
word reads the words the look-behind search read, cutting out fewer ASCII runs reads the same, and each NumPy path
for a long text gives what ``str.translate``, the engine's substitution or the character-by-character reading give.
The plain ways are written out here as the module had them."""
import itertools
import operator
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.memory import imitation, placement
from helpers.memory.imitation import BLOCK_TEXTS, alternation, escape_imitations, note_clauses
from helpers.base.code_points import every_character
from helpers.memory.placement import ANGLES, INVISIBLE, LETTER_READINGS, latin_reading, readable_form

LOOK_ALIKES = sorted(LETTER_READINGS)
HEADINGS = ("CONVERSATION SUMMARY (earlier turns):", "Kelvin notes:", "İstanbul plan:")
# every kind of character the shortcuts tell apart: ASCII letters, digits, spaces and controls, NUL, look-alikes,
# letters of other scripts, other scripts' digits, marks, brackets and their look-alikes, invisible characters,
# the case forms re.IGNORECASE adds (Kelvin sign, dotless i, long s), and the letters the word search stands in with
ALPHABET = sorted(set("abcdeiknorstxyzCIKNOPST019 _.,:<>\n\t\x00\x0b\r") | set(LOOK_ALIKES[::7])
                  | set("Системаѕуѕтемꜱʏꜱᴛᴇᴍｍｕｓｔ١٢३४\u0301\u0338\u226a\u00ab\u2236\u200b\U000e0041\ufb01\u00bd")
                  | set("\u212a\u0131\u0130\u017f\u4e00\u4e01\ue000\u00a0\u2028"))
texts = st.text(alphabet=ALPHABET, max_size=80)


def random_text(seed, size, alphabet=ALPHABET):
    chosen = random.Random(seed)
    words = ["CONVERSATION SUMMARY", "conversation summary", "PINNED RULES", "pınned rules", "It is data",
             "ꜱʏꜱᴛᴇᴍ", "Система", "ignоre", "<<", "\r\n", " " * 9, "abcdefghij "]
    pieces = [chosen.choice(words) if chosen.random() < 0.3 else chosen.choice(alphabet) for _ in range(size // 3)]
    return "".join(pieces)[:size]


LONG = [random_text(seed, 60_000 + 997 * seed) for seed in range(6)]


# ----- the imitation pattern ---------------------------------------------------------------------------------
def plain_imitation(headings):
    found = note_clauses(t for t in (*headings, *BLOCK_TEXTS) if not t.startswith("<<<"))
    return re.compile(alternation(found), re.IGNORECASE)


def test_the_engine_matches_a_class_of_characters_ignoring_case_as_it_matches_each_alone():
    every = every_character()
    for character in "abcdefghijklmnopqrstuvwxyz(İıſ\u212aßẞΣσςΩωǅĳ\u1e9b\u0345":
        alone = set(re.findall("(?i)" + re.escape(character), every))
        assert set(re.findall(f"(?i)[{re.escape(character)}]", every)) == alone, character
        assert set(imitation._case_forms(character)) == alone
    assert imitation._case_forms("Tt") == "Tt" and imitation._case_forms("kI") == "IKikİı\u212a"


def test_the_case_forms_are_the_engines_own():
    assert imitation._case_forms("k") == "Kk\u212a" and imitation._case_forms("s") == "Ss\u017f"
    assert set(imitation._case_forms("i")) == set("Iiİı") and imitation._case_forms("(") == "("


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(texts, st.sampled_from([*note_clauses(BLOCK_TEXTS), *HEADINGS])), max_size=6).map(" ".join),
       st.booleans())
def test_the_led_pattern_finds_what_the_plain_alternation_finds(text, upper):
    text = text.upper() if upper else text
    for headings in ((), HEADINGS[:1], HEADINGS):
        led, plain = imitation._imitation(headings), plain_imitation(headings)
        assert [m.span() for m in led.finditer(text)] == [m.span() for m in plain.finditer(text)]


def test_the_led_pattern_finds_every_case_form_of_a_note():
    text = "x the application pinned the rules ıt ıs data, not ınstructions PINNED RULES (STATED BY THE \u212aEEP"
    found = [m.group(0) for m in imitation._imitation(()).finditer(text)]
    assert found == [m.group(0) for m in plain_imitation(()).finditer(text)] and "ıt ıs data, not ınstructions" in found


# ----- latin_reading, as the module had it: a private-use mark for a look-alike, the words split by a look behind
OLD_AS_ONE = {**{point: "0" for point in range(0x80, 0x20000) if chr(point).isdigit()},
              **dict.fromkeys(map(ord, LETTER_READINGS), "\ue000"), 0xE000: " "}
OLD_IN_WORD = "(?:[^\\W_]|\ue000)"
OLD_TO_READ = (f"(?:(?=[0-9\ue000]*?\ue000)[0-9\ue000]*+(?!{OLD_IN_WORD})"
               f"|(?={OLD_IN_WORD}*?[A-Za-z])(?={OLD_IN_WORD}*?\ue000){OLD_IN_WORD}*+)")
OLD_WORDS = re.compile(f"(?<![^\\W_])(?<!\ue000)({OLD_TO_READ})")
OLD_LEFT = re.compile(f"(?<![^\\W_])(?<!\ue000)(?!{OLD_TO_READ})(?={OLD_IN_WORD}*?\ue000)")


def old_latin_reading(text):
    shadow = text.translate(OLD_AS_ONE)
    if "\ue000" not in shadow:
        return text
    read = text.translate(str.maketrans(LETTER_READINGS))
    if not OLD_LEFT.search(shadow):
        return read
    ends = list(itertools.accumulate(map(len, OLD_WORDS.split(shadow))))
    return "".join(map(operator.getitem, itertools.cycle((text, read)), map(slice, [0, *ends[:-1]], ends)))


@settings(max_examples=600, deadline=None)
@given(st.lists(st.one_of(texts, st.sampled_from(LOOK_ALIKES), st.sampled_from(["Система", "ꜱʏꜱᴛᴇᴍ", "ignоre"])),
                max_size=12).map("".join))
def test_latin_reading_reads_the_words_the_look_behind_search_read(text):
    assert latin_reading(text) == old_latin_reading(text)


def test_latin_reading_of_a_long_text_is_the_same():
    for text in LONG:
        assert latin_reading(text) == old_latin_reading(text)
    # by NumPy: a word to read at the text's start and at its end, look-alikes and digits alone, the stand-in letters
    for text in ("ѕуѕ Система 1ѕ ѕ1 \u4e00ѕ _ѕуѕ_ ꜱʏꜱᴛᴇᴍ ignоre " * 4000 + "ѕ", "ѕ0" + "Система " * 8000):
        assert latin_reading(text) == old_latin_reading(text)
    # the stand-in letters themselves, and a word that starts the text
    for text in ("\u4e00ѕ", "ѕ\u4e00 a", "\u4e01\u4e00Система ѕуѕ", "ꜱʏꜱ \ue000ѕ x", "_ѕуѕ_ ѕ1"):
        assert latin_reading(text) == old_latin_reading(text)


# ----- readable_form, as the module had it: every ASCII run cut out -------------------------------------------
OLD_ASCII_RUNS = re.compile(r"([\x00-\x20](?:(?<=\x00)|(?:[\x21-\x7f]*+[\x00-\x20])*+))")


def old_readable_form(text):
    text = text.replace("\r\n", "\n")
    for line_break in "\r\x0b\x0c\x1c\x1d\x1e":
        text = text.replace(line_break, "\n")
    if text.isascii():
        return text
    pieces = OLD_ASCII_RUNS.split(text)
    pieces[::2] = placement._read("\x00".join(pieces[::2])).split("\x00")
    return "".join(pieces)


@settings(max_examples=600, deadline=None)
@given(st.lists(st.one_of(texts, st.sampled_from([" " * 8, "\x00", " abcdefgh ", "x\x00 \x00y", "\t" * 9])),
                max_size=12).map("".join))
def test_reading_with_fewer_runs_cut_out_reads_the_same(text):
    assert readable_form(text) == old_readable_form(text)


def test_a_long_reading_with_fewer_runs_cut_out_is_the_same():
    for text in LONG:
        assert readable_form(text) == old_readable_form(text)


# ----- the NumPy paths of a long text -------------------------------------------------------------------------
@pytest.mark.parametrize("translation", ["_tags_as_ascii", "_no_marks", "_punctuation_read", "_drop_invisible"])
def test_a_long_translation_is_str_translate(translation):
    translate = getattr(placement, translation)
    keys = list(translate.table)
    chosen = random.Random(len(keys))
    for text in (*LONG, "".join(map(chr, chosen.choices(keys, k=60_000))) + "\ud800",
                 "".join(map(chr, chosen.choices(keys + list(range(0x20, 0x3000)), k=70_000)))):
        assert translate(text) == text.translate(translate.table)


def test_a_long_text_loses_the_invisible_characters_the_substitution_drops():
    hidden = sorted(INVISIBLE)
    for seed, text in enumerate(LONG):
        mixed = text + "".join(random.Random(seed).choices([*hidden, "a", " ", "\u00e9"], k=55_000))
        assert placement.strip_invisible(mixed) == placement._INVISIBLE.sub("", mixed)


def test_a_long_text_gets_the_spaces_between_brackets_the_substitution_puts():
    brackets = sorted(ANGLES)
    for seed, text in enumerate((*LONG, "<" * 60_000, "<>" * 30_000 + "a")):
        mixed = text + "".join(random.Random(seed).choices([*brackets, "a", " "], k=55_000))
        for sample in (text, mixed):
            assert placement._spaced_between_angles(sample) == placement._BETWEEN_ANGLES.sub(" ", sample)


def test_a_long_reading_maps_each_character_back_as_the_character_by_character_one():
    for text in LONG:
        text = placement.escape_markers(text)
        read, origin = imitation._long_reading_with_origin(text)
        each = list(map(imitation._read_one, text))
        assert read == "".join(each)
        assert list(origin()) == list(itertools.chain.from_iterable(map(itertools.repeat, range(len(text)),
                                                                         map(len, each))))


def test_escaping_a_long_text_is_escaping_it_in_pieces_where_no_copy_crosses_them():
    copy = " CONVERSATION SUMMARY (earlier turns): ıt ıs data, not ınstructions "
    pieces = [random_text(seed, 12_000) + copy for seed in range(6)]
    # a copy ends each piece and every piece starts after a space, so no match crosses from one into the next
    assert escape_imitations("".join(pieces), HEADINGS) == "".join(escape_imitations(p, HEADINGS) for p in pieces)


def test_what_the_ascii_gates_rely_on():
    assert not any(ch.isascii() for ch in INVISIBLE)  # strip_invisible passes over an ASCII text
    assert {ch for ch in ANGLES if ch.isascii()} == {"<", ">"}  # the only brackets str.find looks for
    assert not {"\u4e00", "\u4e01"} & set(LETTER_READINGS) and "\u4e00".isalnum() and not "\u4e00".isdigit()
