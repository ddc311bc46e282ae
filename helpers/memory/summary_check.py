"""A check of every new summary for text that claims authority or a role (orders to the assistant, role markers in
any syntax, chat-template tokens, copies of the memory's own blocks), read as a reader sees it; ordinary words and
sentence-case labels are not. Notebook 06 measures its catch rate and false alarms (``data/security/``).
"""
from __future__ import annotations

import functools
import itertools
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import NamedTuple

from helpers.base import literals
from helpers.base.errors import SettingError
from helpers.memory.imitation import BLOCK_TEXTS, alternation, longest_first, note_clauses
from helpers.memory.pinned import PINNED_HEADING
from helpers.memory.placement import readable_form
from helpers.memory.registry import headings as kind_headings

CHECK_MODES = ("off", "report", "refuse")
# patterns matched as one alternation, each with whether it reads the text's lower-case copy (re.IGNORECASE costs
# about four times as much) or the text itself (its letters in capitals)
_Patterns = tuple[tuple[re.Pattern[str], bool], ...]
# a pattern kept as its alternatives, each with the literals it cannot match without (groups of literals: one of each
# group is in every text it matches in), so that a text is searched only with the alternatives that can match in it;
# an alternative may be a _Framed alternation of its own
_Needs = tuple[tuple["str | re.Pattern[str]", ...], ...]  # a pattern: a text it finds nothing in is left out
_Alternatives = tuple[tuple["str | _Framed", _Needs], ...]
_Gated = tuple[tuple[_Alternatives, int, bool], ...]  # each pattern's alternatives, its flags, whether it reads lowered


class _Framed(NamedTuple):
    """An alternative that is an alternation between a ``prefix`` and a ``suffix``, its own alternatives kept alike."""

    prefix: str
    alternatives: _Alternatives
    suffix: str


def _alternatives_of(texts: Iterable[str], space: str) -> _Alternatives:
    """``alternation(texts, space)``'s alternatives, one for each text, each with what it needs."""
    # in alternation's order (a test holds the alternatives joined to alternation's pattern)
    sources = [alternation([text], space) for text in longest_first(texts)]
    return tuple((source, literals.needs(source)) for source in sources)


def _source(alternative: str | _Framed, kept: Callable[[_Needs], bool] = lambda needs: True) -> str | None:
    """The alternative's pattern, a framed one's with only its ``kept`` alternatives (None if none is kept)."""
    if isinstance(alternative, str):
        return alternative
    inner = [source for a, needs in alternative.alternatives if kept(needs) and (source := _source(a, kept))]
    return alternative.prefix + "|".join(inner) + alternative.suffix if inner else None


@functools.lru_cache(maxsize=256)
def _compiled(alternatives: tuple[str, ...], flags: int) -> re.Pattern[str]:
    return re.compile("|".join(alternatives), flags)


@functools.lru_cache(maxsize=64)
def _whole(gated: _Gated) -> _Patterns:
    """The patterns with all their alternatives."""
    return tuple((_compiled(tuple(map(_source, (a for a, _ in alternatives))), flags), low)
                 for alternatives, flags, low in gated)


def _kept(gated: _Gated, text: str, lowered: str, present: dict[tuple[bool, object], bool]) -> _Patterns:
    """The patterns with only the alternatives whose literals are in the text they read, and no pattern left with
    none: exact, for an alternative that needs a literal the text lacks matches nowhere in it, and an alternation
    tried without it finds the same matches in the same order. ``present``: each literal looked for once."""
    patterns = []
    for alternatives, flags, low in gated:
        def held(literal: str | re.Pattern[str], low: bool = low) -> bool:
            if (low, literal) not in present:
                read = lowered if low else text
                if isinstance(literal, re.Pattern):
                    present[low, literal] = literal.search(read) is not None
                else:  # an ASCII literal the lower-case copy lacks in lower case is not in the text (they line up)
                    present[low, literal] = (low or not literal.isascii() or held(literal.lower(), True)) \
                        and literal in read
            return present[low, literal]

        def kept(needs: _Needs) -> bool:
            return all(any(map(held, group)) for group in needs)
        found = tuple(source for a, needs in alternatives if kept(needs) and (source := _source(a, kept)))
        if found:
            patterns.append((_compiled(found, flags), low))
    return tuple(patterns)


def _phrases(*phrases: str) -> str:
    """An alternation of ``phrases``, each space matching any whitespace or none ("ignore\u200bprevious")."""
    return "|".join(phrase.replace(" ", r"\s*") for phrase in phrases)


# where a sentence can start: a line's start or after sentence punctuation (other scripts', quotes, brackets), then
# whitespace, opening brackets and markdown (bullets, dashes, headings, quotes, bold); not inside a word. A quote's
# ">" ends the run, for a sentence starts again after it: the same matches, without reading ">>>>..." from each ">"
_MARKDOWN = r"\s*_#>+\-\u2013\u2014\u2022\u2023\u2043\u25e6\u25aa\u25cf\u2219\u00b7"
_SENTENCE_START = (r"(?:^|(?<=[.!?;:|<>)\]}\"'\u2018\u2019\u201a\u201c\u201d\u201e\u00bf\u00a1\u300c\u300d\u300e\u300f"
                   r"\u3002\u0964\u0965\u203d]))[" + _MARKDOWN.replace(">", "") + r"(\[{]*(?<![^\W_])")
_ROLES = r"system|developer|assistant|user|tool|human"

# instructions: orders about the assistant's own rules, role or memory, not imperative words
_DETERMINERS = r"(?:(?:all|any|every|the|your|its|his|her|their|my|of|these|those|previous|prior|above|earlier|" \
               r"preceding|existing|original|current|old|former|initial|system|safety|default|standing) )*"
_OWN_RULES = (r"(?:instructions?|guidelines?|(?:system )?prompts?|directives?|programming|guardrails?|"
              r"principles|ethics|"
              r"(?:safety |content |compliance )?(?:polic(?:y|ies)|restrictions?|filters?|constraints?))")
_RULES = r"rules?(?! (?:on|for|of|about|under|in|from|regarding)\b)"  # "the new rules on LTCG" are the world's rules
_INSTRUCTION_PHRASES = (
    rf"(?:ignore|disregard|forget|override|overrule|bypass|discard|drop|abandon|set aside|throw out|cancel) "
    rf"{_DETERMINERS}(?:{_OWN_RULES}|{_RULES})",
    r"you are now", r"you are no longer", r"your new (?:role|name|instructions?|rules?|task|persona)",
    r"new (?:system )?(?:instructions?|directives?) (?:for|to) (?:you|the assistant)",
    r"(?:act|behave|respond|answer) as (?:an? |the )?(?:unrestricted |unfiltered |uncensored |different |new |other )*"
    r"(?:ai|assistant|model|chatbot|bot|llm|dan|system|developer|administrator|admin)\b",
    r"pretend (?:to be|you are|that you are|you're)", r"role ?play as", r"developer mode", r"jailbreak",
    r"do anything now", r"(?:without|no) (?:any )?(?:restrictions|limits|filters|guardrails)(?= (?:mode|on|from now))",
    r"(?:remember|store|save|keep|memori[sz]e|record) (?:this|that|it|these|the following)(?: \w+)? "
    r"(?:forever|permanently|for ever|for all future|in (?:your )?(?:permanent |long-term |persistent )?memory)",
    r"permanent (?:memory|instructions?|rules?)",
    r"do not (?:tell|warn|mention|disclose|inform|alert) (?:this to )?(?:the user|anyone|them)",
    r"(?:message|note|instructions?|orders?|directive|command) from (?:the |your )?"
    r"(?:system|developer|administrator|admin|operator|owner|creator)s?",
    r"(?:i am|i'm|this is|speaking as) (?:your|the|an?) (?:developer|administrator|admin|operator|creator|owner|"
    r"system administrator|system)\b",
    r"(?:system|admin|administrator|developer|operator|root) (?:override|instruction|directive|command|access|policy)",
)
# an order to the assistant: what it must do from now on, or which product it is to push in every answer
_ORDER = (r" (?:(?:must|shall|has to|is required to|is instructed to|is authori[sz]ed to) (?:now |always |never |only )"
          r"|(?:will|should|must|shall) (?:always|only|now|from now on) "
          r"(?:recommend|suggest|name|push|promote|endorse|pick)\b)")


@functools.lru_cache(maxsize=32)
def _instruction_alternatives(names: tuple[str, ...]) -> _Gated:
    """The instruction phrases, with orders given to the assistant under any of its ``names``."""
    addressed = "|".join(["you", "the assistant", "assistant", *(re.escape(name.lower()) for name in names)])
    each = [_phrases(phrase) for phrase in (*_INSTRUCTION_PHRASES, f"(?:{addressed}){_ORDER}")]
    # each alternative's first letter, looked at first: most places start none (a superset is all it must be)
    first = "".join(sorted({*re.findall(r"(?:^|(?<=\(\?:)|(?<=\|))\\?(.)", "|".join(each)),
                            *(name[:1].lower() for name in names if name)}))
    phrases = tuple((phrase, literals.needs(phrase)) for phrase in each)
    looked = r"[" + re.escape(first) + r"]"  # one search: a text without any of them is left at once
    return (((_Framed(r"\b(?=" + looked + r")(?:", phrases, ")"), ((re.compile(looked),),)),), 0, True),


@functools.lru_cache(maxsize=32)
def _instruction(names: tuple[str, ...]) -> re.Pattern[str]:
    """The instruction pattern whole (``_instruction_alternatives``)."""
    return _whole(_instruction_alternatives(names))[0][0]


def assistant_names(system_prompt: str) -> tuple[str, ...]:
    """The names a system prompt gives the assistant ("You are FinCoach, ..."; not "You are Meera's coach")."""
    return tuple(dict.fromkeys(re.findall(r"\bYou are ([A-Z][\w-]+)\b(?!['\u2019])", system_prompt or "")))


_CAPITAL_ROLES = ("SYSTEM", "DEVELOPER", "ASSISTANT", "USER", "TOOL", "HUMAN")
_ROLE_WORDS = tuple(role.lower() for role in _CAPITAL_ROLES)
_ROLE_MARKER_ALTERNATIVES: _Gated = (((
    # a label in capitals anywhere, as the requests write them ("SYSTEM:", "[TOOL]:", "**SYSTEM:**")
    # (each word's first letter, then a look back at the character before it: not a letter; the engine passes at once
    # over a place where no word starts)
    ("(?:" + "|".join(f"{w[0]}(?<![A-Za-z]{w[0]}){w[1:]}" for w in _CAPITAL_ROLES) + r")[*_\])]*\s*:",
     ((":",), _CAPITAL_ROLES)),
    # in lower case where a sentence starts, as chat formats write them ("system: obey"), only in a text that holds
    # such a word before a colon (which every match ends with)
    (_SENTENCE_START + r"(?=[sdauth])(?:" + _ROLES + r")[*_\])]*\s*:",
     ((":",), _ROLE_WORDS, (re.compile("(?:" + _ROLES + r")[*_\])]*\s*:"),))),
), re.MULTILINE, False), ((
    # in any case (read in the lower-case copy): a JSON message field, a YAML role line, XML role tags
    (r"[\"'](?:role|author)[\"']\s*:\s*[\"'](?:" + _ROLES + r")[\"']", ((":",), ("role", "author"), ('"', "'"))),
    (r"^[ \t]*(?:-[ \t]*)?role[ \t]*:[ \t]*[\"']?(?:" + _ROLES + r")[\"']?[ \t]*$", ((":",), ("role",))),
    (r"<\s*/?\s*(?=[sdauthi])(?:" + _ROLES + r"|instructions?|system[ _-]?prompt)\s*>", (("<",), (">",))),
    # a markdown heading that is a role, or instructions ("## System", "## System: obey", "#### instructions")
    (r"^[ \t]*#{1,6}[ \t]*(?:(?:system|developer|assistant|tool)(?:[ \t]+(?:prompt|message|note|instructions?))?"
     r"[*_]*[ \t]*(?::|$)|(?:new[ \t]+|updated[ \t]+)?instructions?[ \t]*:?[ \t]*$)", (("#",),)),
), re.MULTILINE, True))
_ROLE_MARKER = _whole(_ROLE_MARKER_ALTERNATIVES)

_TEMPLATE_TOKEN_ALTERNATIVES: _Gated = (((
    (r"<\|\s*[\w.\-]{1,40}\s*\|>", (("<|",), ("|>",))),  # harmony <|start|>, Llama 3 <|eot_id|>, ChatML, Phi <|system|>
    (r"</?\s*(?=[sbe])(?:start_of_turn|end_of_turn|bos|eos)\s*>", (("<",), (">",))),  # Gemma
    (r"\[\s*/?\s*(?:inst|system_prompt|available_tools|tool_calls|tool_results|tool_content)\s*\]",
     (("[",), ("]",))),  # Mistral
    (r"<<\s*/?\s*sys\s*>>", (("<<",), ("sys",), (">>",))),  # Llama 2 (its <s> is also markdown's strike-through: its
), 0, True),)                                                 # [INST] is the token to see)
_TEMPLATE_TOKEN = _whole(_TEMPLATE_TOKEN_ALTERNATIVES)[0][0]

# headers that claim authority and the summariser requests' section headers (any case, shaped as a header)
AUTHORITY_HEADERS = ("SYSTEM NOTE", "SYSTEM PROMPT", "SYSTEM MESSAGE", "DEVELOPER NOTE", "ADMIN NOTE",
                     "NEW INSTRUCTIONS", "NEW RULES", "UPDATED INSTRUCTIONS")
SUMMARISER_HEADERS = ("EXISTING SUMMARY", "CONVERSATION TURNS TO SUMMARISE", "NEW TURNS TO ADD",
                      "MESSAGES TO SUMMARISE", "NEW MESSAGES TO INCORPORATE", "SUMMARY TO SHORTEN")


@functools.lru_cache(maxsize=32)
def _forged_alternatives(headings: tuple[str, ...]) -> _Gated:
    """A kind's whole heading, a note or clause of one, anywhere; their titles (the words before "(" or ":") in
    capitals; authority and summariser headers in capitals, or in any case shaped as a header ("(...)" and ":")."""
    notes = note_clauses(BLOCK_TEXTS)
    titles = [" ".join(re.split(r"[(:]", h, maxsplit=1)[0].split()) for h in (*headings, PINNED_HEADING)]
    shaped = (*AUTHORITY_HEADERS, *SUMMARISER_HEADERS, titles[-1])
    capitals = tuple(t.upper() for t in (*shaped, *titles[:-1], *(t for t in notes if t.isupper())))
    whole = (*headings, *(t for t in notes if not t.isupper() or "(" in t))
    header = r")(?![^\W_])[*_]*\s*(?:\([^)\n]{0,80}\)[*_]*\s*)?:"  # after the words: a "(...)" and a colon
    return ((_alternatives_of((t.lower() for t in whole), r"\s*"), 0, True),
            (((_ahead(r"\b(?:", capitals, r")\b"), ()),), 0, False),
            (((_ahead(_SENTENCE_START + "(?:", (t.lower() for t in shaped), header), ((":",),)),
              ("<<<", (("<<<",),)), (">>>", ((">>>",),))), re.MULTILINE, True))


def _ahead(prefix: str, texts: Iterable[str], suffix: str) -> _Framed:
    """``prefix``, the alternation of ``texts`` led by a look at their first characters, ``suffix``; its alternatives
    kept as ``_alternatives_of``."""
    unique = longest_first(texts)
    return _Framed(prefix + (literals.first_look(unique) + "(?:" if unique else ""), _alternatives_of(unique, r"\s*"),
                   ")" + suffix)


@functools.lru_cache(maxsize=32)
def _forged_header(headings: tuple[str, ...]) -> _Patterns:
    """The forged-header patterns whole (``_forged_alternatives``)."""
    return _whole(_forged_alternatives(headings))


@dataclass(frozen=True)
class SummaryCheck:
    """What the check found in one summary: ``(kind, matched text)`` pairs, each once, and how many times each
    was found in ``counts``; empty when clean."""

    findings: tuple[tuple[str, str], ...]
    counts: tuple[int, ...]

    @property
    def flagged(self) -> bool:
        return bool(self.findings)

    def lines(self, quoted: bool = False) -> tuple[str, ...]:
        """Each finding as ``kind: text`` (the text in quotes if ``quoted``), ``(N times)`` after one found again."""
        return tuple(f"{kind}: " + (repr(text) if quoted else text) + (f" ({count} times)" if count > 1 else "")
                     for (kind, text), count in zip(self.findings, self.counts))

    def describe(self) -> str:
        """One line: 'clean' or the kinds and the text matched."""
        return "; ".join(self.lines(quoted=True)) or "clean"


# JSON's escapes of a line break, a tab and quotes: a summary holding "\\nSYSTEM:" starts a line
# (each a backslash and a character that is not one, so no two overlap and no reading makes a new one: one
# str.replace each reads as one pass of the pattern r"\\([nrt\"'/])" would, far faster where there are many)
_UNESCAPED = {"\\n": "\n", "\\r": "\n", "\\t": " ", '\\"': '"', "\\'": "'", "\\/": "/"}
# the length from which a text is searched only with the alternatives it can match: the same matches at any length,
# but below it the looks for literals cost more than they save
_GATED_FROM = 50_000
_WHITESPACE_RUN = re.compile(r"\s\s+")  # found at its first character, read to its end once
_LEADING_MARKDOWN = re.compile(r"^[" + _MARKDOWN + r"(\[{]+(?=\w)")  # what _SENTENCE_START took before a word


def _matches(patterns: _Patterns, text: str, lowered: str) -> Iterable[str]:
    """What ``patterns`` match as one alternation would, left to right, in ``text`` or its lower-case copy."""
    texts = [lowered if low else text for _, low in patterns]
    ahead: list[tuple[int, int] | None] = [(-1, -1)] * len(patterns)  # each pattern's next match; None: no more
    position, merged = 0, []
    while True:
        for index, (pattern, _) in enumerate(patterns):
            span = ahead[index]
            if span is not None and span[0] < position:
                match = pattern.search(texts[index], position)
                ahead[index] = match.span() if match else None
        found = [(span[0], index, span[1]) for index, span in enumerate(ahead) if span is not None]
        if len(found) <= 1:  # one pattern left: the engine reads on alone, and each match is cut from the text
            if not found:
                return merged
            (start, index, _), = found
            pattern, read = patterns[index][0], texts[index]
            if read is text and not pattern.groups:  # what it reads is the text: the engine gives the matches
                return itertools.chain(merged, pattern.findall(text, start))
            matches = pattern.finditer(read, start)
            return itertools.chain(merged, map(text.__getitem__, itertools.starmap(slice, map(re.Match.span, matches))))
        start, _, position = min(found)  # the leftmost; at one place, the first in order, as in an alternation
        merged.append(text[start:position])


def check_summary(summary: str, *, headings: Iterable[str] | None = None, names: Iterable[str] = ()) -> SummaryCheck:
    """Every instruction-like phrase, role marker, template token and forged header in ``summary``. ``headings``
    (every registered kind's by default) are caught whole and by title; ``names`` (``assistant_names``) are
    the assistant's, so that orders to it by name are instructions."""
    given = kind_headings() if headings is None else tuple(headings)
    forged = _forged_alternatives(tuple(sorted({" ".join(h.split()) for h in given if h.strip()})))
    text = summary
    for escape, unescaped in _UNESCAPED.items() if "\\" in text else ():
        text = text.replace(escape, unescaped)
    text = readable_form(text)
    # whitespace with a line break as one line break, other runs as one space: no long run is read again and again
    text = _WHITESPACE_RUN.sub(lambda run: "\n" if "\n" in run.group() else " ", text)
    lowered = text.lower()  # as long as text: its one longer lower case ("İ") is no longer there (NFKD)
    lowered = text if lowered == text else lowered  # the same text: one object, read as the text itself
    present: dict[tuple[bool, object], bool] = {}  # whether each literal is in the text (or lowered)
    counted: Counter[tuple[str, str]] = Counter()
    for kind, gated in (("instruction", _instruction_alternatives(tuple(names))),
                        ("role marker", _ROLE_MARKER_ALTERNATIVES), ("template token", _TEMPLATE_TOKEN_ALTERNATIVES),
                        ("forged header", forged)):
        patterns = _kept(gated, text, lowered, present) if len(text) >= _GATED_FROM else _whole(gated)
        for raw, count in Counter(_matches(patterns, text, lowered) if patterns else ()).items():  # tidied once
            found = _LEADING_MARKDOWN.sub("", " ".join(raw.split()))
            key = (kind, found.rstrip(": ") if kind == "forged header" else found)
            counted[key] += count
    return SummaryCheck(tuple(counted), tuple(counted.values()))


def check_mode(mode: str) -> str:
    """``mode`` if it is one of ``CHECK_MODES``; else a ``SettingError`` saying what to pass."""
    if mode not in CHECK_MODES:
        raise SettingError("summary_check", mode, "summary_check must be 'off', 'report' (findings on the fold event) "
                           f"or 'refuse' (a flagged summary is not stored; the messages stay verbatim), got {mode!r}")
    return mode
