"""A check of every new summary for text that should never be in one: instructions aimed at the
assistant, role markers, chat-template tokens and forged section headers.

A summary is the model's notes about a conversation; the assistant's rules come from the system
prompt. A pattern check is cheap and offline. It reads the summary with invisible characters dropped
(the tag characters read as the ASCII they spell), combining marks dropped (a mark is drawn on the letter
before it), compatibility forms as the letters Unicode says they are (NFKC: full-width "ｍｕｓｔ" reads
"must"), bracket look-alikes read as brackets, every line break as a new line, in any case, and with any
run of whitespace (spaces, tabs, newlines, or an invisible character in its place) wherever a phrase has a space.
It catches role markers wherever a sentence can start (``Thanks.SYSTEM:``; ``User:`` and ``Assistant:``
only in capitals, since summaries label who said what in sentence case), the template tokens of the
common chat formats (gpt-oss/harmony, Llama 3, ChatML, Gemma, Mistral, Phi, Llama 2), and headers forged
in any case, the memory kinds' own headings among them (``headings=``).

Letters of other scripts that look like Latin ones (Unicode's confusables: a Cyrillic "о" in "ignоre", a
Greek "Τ" in "SYSTEM") are read as the Latin letters in a word that also holds a Latin letter, or whose
letters all have a Latin look-alike; a Russian or Greek word with a letter of its own stays as written, so
real text in those scripts is not misread.

What it cannot catch: paraphrase (an instruction in words of its own), other languages and
transliteration (Hinglish), encoded text (base64, leetspeak, letters spaced apart). Its
detection figures in notebook 06 come from payloads written together with it, so they flatter it; its
false alarms are measured on the lessons' own summaries and conversations.
"""
from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from helpers.base.unicode_data import ANGLE_READINGS, LATIN_READINGS
from helpers.memory.pinned import PINNED_CLOSE, PINNED_HEADING, PINNED_OPEN
from helpers.memory.placement import DATA_CLOSE, DATA_OPEN, strip_invisible, strip_marks
from helpers.memory.registry import headings as kind_headings

CHECK_MODES = ("off", "report", "refuse")


def _phrases(*phrases: str) -> str:
    """An alternation of ``phrases`` in which every space matches any run of whitespace, or none: an invisible
    character in place of a space ("ignore\u200bprevious") is dropped, and a reader still sees two words."""
    return "|".join(phrase.replace(" ", r"\s*") for phrase in phrases)


# where a sentence can start: the text's or a line's start, or after sentence punctuation (full stops of other
# scripts, and quotes and brackets, opening and closing, among it), then any whitespace, opening brackets and
# markdown (bullets of markdown and of Unicode, dashes, headings, quotes, bold and italics); the word after it
# must not go on a word (\b would fail after "_", which is a word character)
_MARKDOWN = r"\s*_#>+\-\u2013\u2014\u2022\u2023\u2043\u25e6\u25aa\u25cf\u2219\u00b7"
_SENTENCE_START = (r"(?:^|(?<=[.!?;:|<>)\]}\"'\u2018\u2019\u201a\u201c\u201d\u201e\u00bf\u00a1\u300c\u300d\u300e\u300f"
                   r"\u3002\u0964\u0965\u203d]))[" + _MARKDOWN + r"(\[{]*(?<![^\W_])")
# roles no summary names at a sentence start, in any case; "User:" and "Assistant:" in sentence case are how
# summaries (the offline stand-in's too) say who said what, so those two count in capitals, as the requests write them
_ROLES = r"system|developer|tool|human"
_ROLES_IN_CAPITALS = r"SYSTEM|USER|ASSISTANT|DEVELOPER|TOOL|HUMAN"

_INSTRUCTION_PHRASES = (
    r"ignore (?:(?:all|any|the|your|my|of|these|those) )*(?:previous|prior|above|earlier|preceding|system)",
    r"disregard", r"from now on", r"new (?:system )?(?:rule|instruction|policy|directive)s?", r"override",
    r"must always", r"forget (?:all|your|previous|the)", r"developer mode", r"jailbreak",
    r"(?:remember|store|keep) (?:this|that) (?:forever|permanently)", r"permanent (?:memory|instruction)",
    r"do not (?:tell|warn|mention|disclose) (?:the user|anyone)", r"act as", r"pretend")
_ORDERED = r" (?:must|should|shall|will|has to|is required to) (?:always|now|never)"  # "<the assistant> must never"


@functools.lru_cache(maxsize=32)
def _instruction(names: tuple[str, ...]) -> re.Pattern[str]:
    """The instruction phrases, with orders given to the assistant under any of its ``names``."""
    addressed = "|".join(["you", "the assistant", "assistant", *(re.escape(name) for name in names)])
    return re.compile(r"\b(?:" + _phrases(*_INSTRUCTION_PHRASES, f"(?:{addressed}){_ORDERED}") + r")\b",
                      re.IGNORECASE)


def assistant_names(system_prompt: str) -> tuple[str, ...]:
    """The names a system prompt gives the assistant ("You are FinCoach, ..." gives ``("FinCoach",)``)."""
    return tuple(dict.fromkeys(re.findall(r"\bYou are ([A-Z][\w-]+)", system_prompt or "")))


_ROLE_MARKER = re.compile(
    # any case where a sentence can start ("Thanks.SYSTEM:", "### System:"); in capitals anywhere
    _SENTENCE_START + r"(?i:(?:" + _ROLES + r"))[*_]*\s*:|(?<![A-Za-z])(?:" + _ROLES_IN_CAPITALS + r")[*_]*\s*:",
    re.MULTILINE)

_TEMPLATE_TOKEN = re.compile(
    r"<\|\s*[\w.\-]{1,40}\s*\|>"  # gpt-oss/harmony <|start|> <|message|> <|channel|> <|end|>, Llama 3
                                   # <|start_header_id|> <|eot_id|>, ChatML <|im_start|>, Phi <|system|>
    r"|</?\s*(?:start_of_turn|end_of_turn|bos|eos)\s*>"  # Gemma
    r"|\[\s*/?\s*(?:inst|system_prompt|available_tools|tool_calls|tool_results|tool_content)\s*\]"  # Mistral
    r"|<<\s*/?\s*sys\s*>>|</?s>",  # Llama 2 (<s> and </s> start and end each exchange, in Mistral's too)
    re.IGNORECASE)

# the section headers of the lessons' summariser requests and a system's own, and the memory's own blocks (their
# markers and the pinned rules' heading, read from where they are defined; the kinds' headings come from the registry)
HEADER_PHRASES = ("EXISTING SUMMARY", "CONVERSATION TURNS TO SUMMARISE", "NEW TURNS TO ADD", "MESSAGES TO SUMMARISE",
                  "NEW MESSAGES TO INCORPORATE", "SYSTEM NOTE", "SYSTEM PROMPT", "SUMMARY TO SHORTEN",
                  re.split(r"[(:]", PINNED_HEADING, maxsplit=1)[0].strip(),
                  *(marker.strip("<>") for marker in (DATA_OPEN, DATA_CLOSE, PINNED_OPEN, PINNED_CLOSE)))


def _header_patterns(titles: Iterable[str], full_headings: Iterable[str]) -> re.Pattern[str]:
    titles = sorted({" ".join(title.split()) for title in titles if title.strip()}, key=len, reverse=True)
    words = _phrases(*(re.escape(title).replace(r"\ ", " ") for title in titles))
    fulls = sorted({" ".join(h.split()) for h in full_headings if h.strip()}, key=len, reverse=True)
    alternatives = [
        # in capitals anywhere, as the requests write them
        r"(?-i:\b(?:" + _phrases(*(re.escape(t.upper()).replace(r"\ ", " ") for t in titles)) + r")\b)",
        # in any case, shaped as a header: where a sentence starts, then an optional "(...)" and a colon
        _SENTENCE_START + r"(?:" + words + r")(?![^\W_])[*_]*\s*(?:\([^)\n]{0,80}\)[*_]*\s*)?:",
        r"<<<|>>>",
    ]
    if fulls:  # a memory kind's whole heading, in any case and spacing, anywhere
        alternatives.insert(0, r"(?:" + _phrases(*(re.escape(h).replace(r"\ ", " ") for h in fulls)) + r")")
    return re.compile("|".join(alternatives), re.IGNORECASE | re.MULTILINE)


@functools.lru_cache(maxsize=32)
def _forged_header(headings: tuple[str, ...]) -> re.Pattern[str]:
    titles = (*HEADER_PHRASES, *(re.split(r"[(:]", heading, maxsplit=1)[0] for heading in headings))
    return _header_patterns(titles, headings)


@dataclass(frozen=True)
class SummaryCheck:
    """What the check found in one summary: ``(kind, matched text)`` pairs, each once, with how many
    times it was found in ``counts`` (the same order); empty when clean."""

    findings: tuple[tuple[str, str], ...]
    counts: tuple[int, ...] = ()

    @property
    def flagged(self) -> bool:
        return bool(self.findings)

    def lines(self) -> tuple[str, ...]:
        """Each finding as ``kind: text``, with ``(N times)`` after one found more than once."""
        counts = self.counts or (1,) * len(self.findings)
        return tuple(f"{kind}: {text}" + (f" ({count} times)" if count > 1 else "")
                     for (kind, text), count in zip(self.findings, counts))

    def describe(self) -> str:
        """One line: 'clean' or the kinds and the text matched."""
        if not self.findings:
            return "clean"
        counts = self.counts or (1,) * len(self.findings)
        return "; ".join(f"{kind}: {text!r}" + (f" ({count} times)" if count > 1 else "")
                         for (kind, text), count in zip(self.findings, counts))


# the tag characters spell ASCII invisibly ("ASCII smuggling"): read them as the letters a model may read
_TAGS_AS_ASCII = {point: point - 0xE0000 for point in range(0xE0020, 0xE007F)}
# every other character that ends a line (str.splitlines): a line starts after it as after "\n"
_LINE_BREAKS_AS_NEWLINE = dict.fromkeys(map(ord, "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"), "\n")


def readable_form(text: str) -> str:
    """``text`` as the check reads it: tag characters as the ASCII they spell, other invisible characters
    dropped, every line break as a newline, combining marks dropped ("S\u0301YSTEM" as "SYSTEM", "é" as "e"),
    compatibility forms as their plain letters (NFKC: full-width "ｍｕｓｔ" as "must", "ﬁ" as "fi"),
    bracket look-alikes as the brackets they look like, and Latin look-alikes as Latin letters (``latin_reading``)."""
    text = strip_invisible(text.translate(_TAGS_AS_ASCII)).replace("\r\n", "\n").translate(_LINE_BREAKS_AS_NEWLINE)
    text = latin_reading(text)  # before NFKD, which would make a look-alike "˛" a space and a mark
    text = unicodedata.normalize("NFKC", strip_marks(unicodedata.normalize("NFKD", text)))
    # and again after it: a letter with a mark ("ё") is a look-alike ("е") only once the mark is gone
    return latin_reading("".join(ANGLE_READINGS.get(ch, ch) for ch in strip_invisible(text)))


# a word: letters, digits and the characters that look like Latin letters (some are symbols, "ǀ" or "∣")
_WORD = re.compile("(?:[^\\W_]|[" + "".join(map(re.escape, LATIN_READINGS)) + "])+")


def _latin_word(match: re.Match[str]) -> str:
    word = match.group(0)
    lookalikes = [ch in LATIN_READINGS for ch in word]
    if not any(lookalikes):
        return word
    mixed = any(ch.isascii() and ch.isalpha() for ch in word)  # "ignоre": Latin with a Cyrillic o
    disguised = all(found or ch.isdigit() for found, ch in zip(lookalikes, word))  # "ЅУЅТЕМ": every letter a look-alike
    return "".join(LATIN_READINGS.get(ch, ch) for ch in word) if mixed or disguised else word


def latin_reading(text: str) -> str:
    """``text`` with the Latin look-alikes of Unicode's confusables read as Latin letters, in each word that
    holds a Latin letter or is made only of look-alikes (a word spelling a Latin one in another script).
    A word with a letter that looks like no Latin one ("Система") is real text of its script: left as written."""
    return _WORD.sub(_latin_word, text)


_LEADING_MARKDOWN = re.compile(r"^[" + _MARKDOWN + r"(\[{]+(?=\w)")  # what _SENTENCE_START took before a word


def check_summary(summary: str, *, headings: Iterable[str] | None = None, names: Iterable[str] = ()) -> SummaryCheck:
    """Every instruction-like phrase, role marker, template token and forged header in ``summary``.

    ``headings`` are the memory kinds' own headings (every registered kind's by default): each is caught
    whole in any case and spacing, and its title (the words before ``(`` or ``:``) as a header. ``names``
    are the assistant's names (``assistant_names(system_prompt)``): orders to it by name are instructions.
    """
    given = kind_headings() if headings is None else tuple(headings)
    forged = _forged_header(tuple(sorted({" ".join(h.split()) for h in given if h.strip()})))
    text = readable_form(summary)
    counted: dict[tuple[str, str], int] = {}
    for kind, pattern in (("instruction", _instruction(tuple(names))), ("role marker", _ROLE_MARKER),
                          ("template token", _TEMPLATE_TOKEN), ("forged header", forged)):
        for match in pattern.finditer(text):
            found = _LEADING_MARKDOWN.sub("", " ".join(match.group(0).split()))
            if kind == "forged header":
                found = found.rstrip(": ")
            key = (kind, found)
            counted[key] = counted.get(key, 0) + 1
    return SummaryCheck(tuple(counted), tuple(counted.values()))


def check_mode(mode: str) -> str:
    """``mode`` if it is one of ``CHECK_MODES``; else a ``ValueError`` saying what to pass."""
    if mode not in CHECK_MODES:
        raise ValueError(f"summary_check must be 'off', 'report' (findings on the fold event) or 'refuse' "
                         f"(a flagged summary is not stored; the messages stay verbatim), got {mode!r}")
    return mode
