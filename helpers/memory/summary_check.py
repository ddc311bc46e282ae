"""A check of every new summary, in the one reading, for what claims authority over the assistant: orders to it about
its rules, role or memory in the forms people write them, role markers of every syntax, chat-template tokens, forged
headers; not the user's own life ("act as guarantor"). Paraphrase, other languages, encodings and orders split across
sentences pass: a floor under the placement, not a proof (notebook 06 measures its rates)."""
from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from helpers.base.reading import drop_invisible, pattern, read, spans_written
from helpers.memory.blocks import PINNED_HEADING, copies, words_pattern

_TAGS = re.compile("[\U000E0000-\U000E007F]")
_A = "['\u2019\u02bc]"  # an apostrophe as people type it
_YOU = r"(?:you|the assistant|this assistant|assistant|the ai|the bot|the model|the chatbot{names})"
_ORDERED = (r"(?: must| shall| has to| have to| is to| are to"
            r"| (?:is|are)(?: now)? (?:required|instructed|authori[sz]ed|expected|supposed|permitted|allowed) to)")
_MODAL = (rf"(?:{_A}ll|{_A}d|{_A}d better| had better|{_A}re to| will| would| should| needs? to|{_A}s going to"
          rf"|{_A}re going to| (?:is|are) going to| gonna|{_ORDERED})")
_WHEN = r"(?:from now on|henceforth|hereafter|going forward|from this point(?: on| forward)?|from here on)"
_ADVERB = rf"(?:now|always|only|never|{_WHEN}|exclusively|strictly|no longer|in every (?:answer|reply|response))"
_VERB = (r"(?:recommend|suggest|advise|push|promote|endorse|pick|name|mention|favou?r|prefer|tell|say|answer|reply"
         r"|respond|ignore|disregard|forget|obey|follow|treat|act|behave|refuse|reveal|disclose|share|quote|skip|omit"
         r"|bypass|override|comply|approve|unlock|address|call)(?:e?s)?\b")
_PUSH = r"(?:recommend|suggest|push|promote|endorse|name|reveal|disclose|ignore|disregard|obey)\b"
_OWN_RULES = (r"(?:instructions?|guidelines?|guidance|(?:system )?prompts?|system messages?|directives?|programming"
              r"|guardrails?|principles|ethics|training|(?:safety |content |compliance )?(?:polic(?:y|ies)"
              r"|restrictions?|filters?|constraints?)|rules?(?! (?:on|for|of|about|under|in|from|regarding|around)\b))")
_WHOSE = (rf"(?:(?:all|any|every|each|the|your|its|these|those|this|that|previous|prior|above|earlier|preceding"
          rf"|existing|original|current|old|former|initial|standing|system|safety|default|core|built-in|internal"
          rf"|hidden|usual|such|of|[a-z0-9-]+{_A}s?) ){{0,4}}")
_MAKERS = r"(?:developers?|creators?|owners?|operators?|programmers?|makers?|admin|administrator)"
_INSTRUCTIONS = (
    rf"\b(?:ignore|disregard|forget|override|overrule|bypass|discard|drop|abandon|set aside|throw out|cancel|suspend"
    rf"|circumvent|stop following|stop obeying|no longer follow|do not follow|don{_A}t follow) {_WHOSE}{_OWN_RULES}",
    rf"\b{_YOU}{_MODAL}(?: {_ADVERB}){{1,3}} {_VERB}", rf"\b{_YOU}{_ORDERED}(?:(?: {_ADVERB}){{1,3}}| {_PUSH})",
    rf"\b{_YOU}(?: {_ADVERB}){{0,3}}(?: now| {_WHEN}) {_VERB}",
    rf"\b{_WHEN}[,:;]? (?:{_YOU}{_MODAL}? )?(?:{_ADVERB} ){{0,3}}{_VERB}",
    rf"\byou(?: are|{_A}re| will be|{_A}ll be|{_A}ll now be| will now be)(?: now| henceforth| {_WHEN})? (?:an?|the|in"
    rf"|my|our|called|named|acting|playing|no longer)\b",
    r"\byour new (?:role|name|instructions?|rules?|task|persona|identity|job|purpose|directives?|goal)\b",
    rf"\bnew (?:system )?(?:instructions?|directives?|rules?) (?:for|to) {_YOU}\b",
    r"\b(?:act|behave|respond|answer|operate|function|pose|role-?play|role play) as (?:if you (?:are|were) )?"
    r"(?:an? |the )?(?:(?:unrestricted|unfiltered|uncensored|jailbroken|different|new|other|evil|rogue|unlimited"
    r"|free) )*(?:ai|assistant|model|chatbot|bot|llm|dan|gpt)\b",
    r"\bact as (?:an? |the )?(?:unrestricted|unfiltered|uncensored|jailbroken|rogue|unlimited)\b",
    rf"\bpretend (?:to be|you are|you{_A}re|that you are)\b", r"\bdeveloper mode\b", r"\bjailbreak", r"\bdan mode\b",
    r"\bdo anything now\b", r"\b(?:remember|store|save|keep|memori[sz]e|record) (?:this|that|it|these|the following)"
    r"(?: \w+)? (?:forever|permanently|for ever|for all future"
    r"|in (?:your )?(?:permanent |long-term |persistent )?memory)",
    r"\b(?:add|write) (?:this|that|it) to your (?:\w+ )?memory\b", r"\bpermanent (?:memory|instructions?|rules?)\b",
    rf"\b(?:do not|don{_A}t) (?:tell|warn|mention|disclose|inform|alert) (?:this to )?(?:the user|anyone|them)\b",
    r"\b(?:message|note|notice|instructions?|orders?|directive|command|memo) from (?:the |your )?(?:system"
    r"(?: administrator)?|developers?|operator|creators?|openai|anthropic)\b",
    rf"\b(?:i am|i{_A}m|this is|speaking as|we are) (?:your {_MAKERS}\b|the {_MAKERS}s? (?:of|for|behind) {_YOU}\b)",
    r"\b(?:system|admin|administrator|developer|operator|root|sudo) (?:override|instructions?|directive|command"
    r"|policy)\b",
)
_ROLES = r"(?:system|developer|assistant|tool|model|function)"  # above the user: "role": "user" claims nothing
_BLANK_LINE = r"(?:\A|(?<=\n\n)|(?<=\\n\\n)|(?<=\\r\\n\\r\\n))[ \t>*_#\-]{0,8}"  # a turn of Anthropic's format
_ROLE_MARKERS_LOW = (
    rf"{_BLANK_LINE}(?:human|assistant)[*_]{{0,4}}[ \t]*:",  # Anthropic's format (a transcript's labels pass)
    rf"[\"'](?:role|author|speaker|from)[\"'][ \t]*:[ \t]*[\"']{_ROLES}[\"']",  # JSON
    rf"^[ \t]*(?:-[ \t]*)?(?:role|author|speaker)[ \t]*:[ \t]*[\"']?{_ROLES}[\"']?[ \t]*$",  # YAML
    rf"<[ \t]*/?[ \t]*(?:{_ROLES}|instructions?|system[ _-]?prompt)(?:[ \t][^<>\n]{{0,80}})?>",  # XML
    rf"\brole[ \t]*=[ \t]*[\"']?{_ROLES}\b",  # an XML or HTML attribute
    r"^[ \t]{0,3}#{1,6}[ \t]*(?:(?:system|developer|assistant|tool|human)(?:[ \t]+(?:prompt|message|note"
    r"|instructions?))?[*_]{0,4}[ \t]*(?::|$)|(?:new[ \t]+|updated[ \t]+)?(?:instructions?|response|input)[ \t]*:?"
    r"[ \t]*$)",  # markdown and Alpaca headings
)
_CAPITAL_ROLES = ("SYSTEM", "DEVELOPER", "ASSISTANT", "USER", "TOOL", "HUMAN", "AI", "BOT", "MODEL", "CHATBOT",
                  "FUNCTION", "OBSERVATION", "OPERATOR", "ADMIN", "ADMINISTRATOR", "ROOT", "INSTRUCTIONS?",
                  "SYSTEM PROMPT", "SYSTEM MESSAGE")
# "You're now FinBroker", "From now on you are FinBroker": read in its own case (the prompt says "You are FinCoach")
_NAMED_NOW = (rf"(?:\b(?:[Ff]rom now on|[Hh]enceforth|[Gg]oing forward)[,:;]? [Yy]ou(?: are|{_A}re)(?: now)?"
              rf"|\b[Yy]ou(?: are|{_A}re) now) [A-Z]\w*")
_ROLE_LABEL = (r"(?:(?<![A-Za-z0-9])|(?<=\\[nrt]))(?:" + "|".join(_CAPITAL_ROLES) + r")[*_\])]{0,4}[ \t]*:"
               r"|\[(?:SYSTEM|DEVELOPER|ASSISTANT|ADMIN|INSTRUCTIONS?)\]")
_TEMPLATE_TOKENS = (
    r"<\|[ \t]*[\w.\u2581 -]{1,40}?[ \t]*\|>",  # ChatML, Llama 3, Phi, Qwen, DeepSeek, Command-R, harmony, Granite
    r"<[ \t]*/?[ \t]*(?:start_of_turn|end_of_turn|bos|eos)[ \t]*>",  # Gemma
    r"\[[ \t]*/?[ \t]*(?:inst|sys|system_prompt|available_tools|tool_calls|tool_results|tool_content)[ \t]*\]",
    r"<<[ \t]*/?[ \t]*sys[ \t]*>>",  # Llama 2
)
AUTHORITY_HEADERS = ("SYSTEM NOTE", "SYSTEM PROMPT", "SYSTEM MESSAGE", "DEVELOPER NOTE", "ADMIN NOTE", "NEW RULES",
                     "NEW INSTRUCTIONS", "UPDATED INSTRUCTIONS", "EXISTING SUMMARY", "CONVERSATION TURNS TO SUMMARISE",
                     "NEW TURNS TO ADD", "MESSAGES TO SUMMARISE", "NEW MESSAGES TO INCORPORATE", "SUMMARY TO SHORTEN")


def assistant_names(system_prompt: str) -> tuple[str, ...]:
    """The names a system prompt gives the assistant ("You are FinCoach, ..."; not "You are Meera's coach")."""
    return tuple(dict.fromkeys(re.findall(r"\bYou are ([A-Z][\w-]+)\b(?!['\u2019])", system_prompt or "")))


@functools.lru_cache(maxsize=16)  # keyed by the assistant's names and the kinds' headings, never by user text
def _patterns(names: tuple[str, ...], headings: tuple[str, ...]) -> tuple[tuple[str, re.Pattern[str], bool], ...]:
    """Each kind of finding's pattern, and whether it reads the lower-case reading (or the reading itself)."""
    named = "".join("|" + re.escape(read(name).lower()) for name in names)
    titles = {" ".join(re.split(r"[(:]", h, maxsplit=1)[0].split()).upper() for h in (*headings, PINNED_HEADING)}
    # a kind's title in capitals (a model may title a summary "Conversation summary:"); the pinned block's, the
    # authority and the summariser headers in any case, shaped as a header
    capitals = words_pattern({*AUTHORITY_HEADERS, *titles}, lower=False)
    shaped = words_pattern({*AUTHORITY_HEADERS, PINNED_HEADING.split("(")[0]})
    return (
        ("instruction", pattern("|".join(_INSTRUCTIONS).replace("{names}", named)), True),
        ("role marker", pattern("|".join(_ROLE_MARKERS_LOW), flags=re.MULTILINE), True),
        ("instruction", pattern(_NAMED_NOW), False),
        ("role marker", pattern(_ROLE_LABEL), False),
        ("template token", pattern("|".join(_TEMPLATE_TOKENS)), True),
        ("forged header", copies(headings), True),
        ("forged header", pattern(rf"(?<![A-Za-z])(?:{capitals})(?![a-z])"), False),
        ("forged header", pattern(rf"(?:^|(?<=[\n.!?;]))[ \t>*_#\-]{{0,8}}(?:{shaped})[*_]{{0,4}}[ \t]*"
                                  r"(?:\([^)\n]{0,80}\)[*_]{0,4}[ \t]*)?:", flags=re.MULTILINE), True),
    )


@dataclass(frozen=True)
class SummaryCheck:
    """What the check found in one summary: each ``(kind, text as written)`` once, and how often in ``counts``."""

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


def check_summary(summary: str, *, headings: Iterable[str] = (), names: Iterable[str] = ()) -> SummaryCheck:
    """Every order to the assistant, role marker, template token and forged header in ``summary``: copies of the kinds'
    ``headings`` are forged headers, orders to the assistant's ``names`` (``assistant_names``) instructions."""
    patterns = _patterns(tuple(names), tuple(sorted({h.strip() for h in headings if h.strip()})))
    counted = Counter[tuple[str, str]]()
    # tag characters spell ASCII to a model and nothing to a person: a text that holds them is read both ways
    for text in dict.fromkeys((summary, drop_invisible(summary) if _TAGS.search(summary) else summary)):
        seen = read(text)
        lowered, found = seen.lower(), []
        for kind, compiled, low in patterns:
            found += [(m.start(), kind, m.end()) for m in compiled.finditer(lowered if low else seen) if m.group()]
        found.sort()
        for (_, kind, _), (first, last) in zip(found, spans_written(text, [(start, end) for start, _, end in found])):
            written = " ".join(text[first:last].split()).lstrip(">*_#-\u2022 ")
            key = (kind, written.rstrip(": ") if kind == "forged header" else written)
            counted[key] += 1 if text is summary or key not in counted else 0
    return SummaryCheck(tuple(counted), tuple(counted.values()))

