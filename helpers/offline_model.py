"""The offline stand-in: a deterministic, in-process replacement for the chat model.

It is **not a language model**. It lets the notebooks run end to end with no key and no network,
behind the real openai SDK (``OfflineTransport`` is an ``httpx2`` transport), and it does two
things only, both from the text of the request and nothing else:

* a **summariser request** (a system prompt about summarising, and a user message with the
  lessons' sections such as ``CONVERSATION TURNS TO SUMMARISE:``) gets an *extractive* summary:
  the sentences that carry facts (amounts, ages, dates and durations, stated rules such as
  "never ...", decisions, risk profile, goals, names) are copied word for word, merged with the
  existing summary, and dropped lowest-value-first until the text keeps to the word limit the
  prompt states ("at most 80 words"). Extractive summaries never reword a fact: they lose whole
  sentences instead, which is the other failure mode to the lessons' drift;
* a **chat request** gets a reply grounded in the request: asked for a fact ("what is my
  salary?") it quotes the sentence of the summary or of the verbatim turns that holds it, or says
  it does not have it; anything else gets a plain statement of what the stand-in cannot do.

Every reply starts with a marker (``[offline stand-in]``, summaries ``[offline stand-in summary]``),
the response's ``model`` field is ``offline-stand-in``, and the same request always gives the same
reply. ``usage`` holds real o200k_base counts: ``prompt_tokens`` is the sum of the message
contents' tokens (no chat-template overhead, so it is a little below what a real server bills),
``completion_tokens`` the reply's tokens.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

import httpx2

from helpers.tokens import count_tokens, encoding

MODEL_NAME = "offline-stand-in"
MARKER = "[offline stand-in]"
SUMMARY_MARKER = "[offline stand-in summary]"
FINGERPRINT = "offline-stand-in-v1"

LABELS = {"user": "User", "assistant": "Assistant", "system": "System"}

# ----- reading prompts ---------------------------------------------------------------------------

_WORD_LIMIT = re.compile(
    r"(?:at most|no more than|not more than|maximum of|max(?:imum)?\.?|under|within|up to)\s+(\d+)\s+words"
    r"|(\d+)\s+words\s+or\s+(?:fewer|less)"
    r"|(\d+)[- ]word\s+(?:limit|maximum)",
    re.IGNORECASE,
)


def stated_word_limit(text: str) -> int | None:
    """The word limit a prompt states ("at most 80 words", "100 words or fewer"), or None."""
    limits = [int(next(g for g in match.groups() if g)) for match in _WORD_LIMIT.finditer(text or "")]
    return min(limits) if limits else None


def word_count(text: str) -> int:
    """Words as the lessons count them: runs of non-space characters."""
    return len(text.split())


# A section heading of the summariser's user message: "MESSAGES TO SUMMARISE:",
# "EXISTING SUMMARY (from previous turns):", "SUMMARY TO SHORTEN:" (two or more capitalised words).
_HEADING = re.compile(r"^([A-Z][A-Z'-]*(?: [A-Z][A-Z'-]*)+)(?: \([^)\n]*\))?:[ \t]*$", re.MULTILINE)
_ROLE_LINE = re.compile(r"^(USER|ASSISTANT|SYSTEM|User|Assistant|System):[ \t]?(.*)$")
_INSTRUCTION = re.compile(r"\n\s*\n(?=(?:Produce|Write|Shorten|Return|Summari[sz]e|Keep|Merge|Update|Condense)\b)")


def _content_text(content: Any) -> str:
    """Text of a message's content (a string, or the SDK's list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def is_summariser_request(messages: list[dict[str, Any]]) -> bool:
    """A summariser request: a system prompt about summarising and a user message with sections."""
    if len(messages) < 2 or messages[0].get("role") != "system" or messages[-1].get("role") != "user":
        return False
    system = _content_text(messages[0].get("content"))
    return bool(re.search(r"summari[sz]", system, re.IGNORECASE)) and bool(
        _HEADING.search(_content_text(messages[-1].get("content"))))


@dataclass(frozen=True)
class SummariserInput:
    """What a summariser request holds: the existing summary, the messages to fold, the limit."""

    existing_summary: str | None
    messages: list[tuple[str, str]]  # (role, content)
    word_limit: int | None
    names_hard_rules: bool


def parse_summariser_request(messages: list[dict[str, Any]]) -> SummariserInput:
    """Split a summariser request into its sections (works with both lessons' templates)."""
    system = _content_text(messages[0].get("content"))
    user = _content_text(messages[-1].get("content"))
    limits = [limit for limit in (stated_word_limit(system), stated_word_limit(user)) if limit]
    headings = list(_HEADING.finditer(user))
    existing_parts: list[str] = []
    turns: list[tuple[str, str]] = []
    for index, heading in enumerate(headings):
        end = headings[index + 1].start() if index + 1 < len(headings) else len(user)
        body = user[heading.end():end]
        instruction = _INSTRUCTION.search(body)
        if instruction:
            body = body[:instruction.start()]
        body = body.strip("\n")
        name = heading.group(1)
        if name.startswith("EXISTING") or "SHORTEN" in name or name.startswith("CURRENT SUMMARY"):
            existing_parts.append(body.strip())
        else:
            turns.extend(_parse_turn_lines(body))
    existing = "\n".join(part for part in existing_parts if part) or None
    return SummariserInput(existing, turns, min(limits) if limits else None,
                           bool(re.search(r"hard rules?", system, re.IGNORECASE)))


def _parse_turn_lines(text: str) -> list[tuple[str, str]]:
    turns: list[tuple[str, str]] = []
    for line in text.splitlines():
        match = _ROLE_LINE.match(line)
        if match:
            turns.append((match.group(1).lower(), match.group(2)))
        elif turns:
            role, content = turns[-1]
            turns[-1] = (role, f"{content}\n{line}")
        elif line.strip():
            turns.append(("user", line))
    return [(role, content.strip()) for role, content in turns]


# ----- sentences and the facts they carry ----------------------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[*A-Z₹$0-9])|\n+")


def split_sentences(text: str) -> list[str]:
    """Sentences of a text, split after . ! ? before a capital/number, and at line breaks."""
    parts = [part.strip() for part in _SENTENCE_END.split(text or "")]
    return [part for part in parts if part]


_MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|december|"
           "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec")
_FACT_PATTERNS: dict[str, tuple[re.Pattern[str], int]] = {
    "rule": (re.compile(r"\b(?:never|always|don['’]?t|do not|must(?: not)?|hard rule|allergic|avoid|under no)\b",
                        re.IGNORECASE), 3),
    "amount": (re.compile(r"[₹$€£]\s?\d|\b(?:rs\.?|inr|usd)\s?\d|\d(?:[\d,]*\d)?(?:\.\d+)?\s*(?:%|percent\b|lakhs?\b|"
                          r"crores?\b|cr\b|k\b|l\b)|\b\d{1,3}(?:,\d{2,3})+\b", re.IGNORECASE), 3),
    "age": (re.compile(r"\b\d{1,3}\s*(?:years?|yrs?)[ -]old\b|\b\d{1,3}-year-old\b|\bI['’]?m \d{2}\b|\bI am \d{2}\b|"
                       r"\baged? \d{2}\b|,\s*\d{2},", re.IGNORECASE), 3),
    "date": (re.compile(r"\b\d+(?:\.\d+)?\s*(?:-|\s)?(?:days?|weeks?|months?|quarters?|years?|yrs?)\b|"
                        r"\b(?:next|this|last|every|each) (?:week|month|quarter|year)\b|\b(?:by|at|until) \d{2,4}\b|"
                        rf"\b(?:{_MONTHS})\b|\b(?:19|20)\d{{2}}\b|\bmatur", re.IGNORECASE), 2),
    "profile": (re.compile(r"\brisk[- ]?(?:averse|profile|appetite|tolerance)|\b(?:conservative|aggressive)\b|"
                           r"\bgoals?\b|\bretire|\bplan(?:s|ning)? to\b|\bwants? to\b|\bI will\b|\bI['’]ll\b|"
                           r"\bdecided\b|\bmy name is\b", re.IGNORECASE), 1),
    # a name needs its capital letter, so this one is case-sensitive: "I'm Chiru", "I am Asha"
    "name": (re.compile(r"\bI['’]?m [A-Z][a-z]+\b|\bI am [A-Z][a-z]+\b"), 1),
}


def fact_kinds(sentence: str) -> list[str]:
    """Which kinds of fact a sentence carries (rule, amount, age, date, profile, name), in that order."""
    return [kind for kind, (pattern, _) in _FACT_PATTERNS.items() if pattern.search(sentence)]


def fact_score(sentence: str, *, rules_first: bool = False) -> int:
    """How much a sentence is worth keeping: 0 (no fact) up to 4 (a stated rule, if the prompt names rules)."""
    kinds = fact_kinds(sentence)
    if not kinds:
        return 0
    if sentence.rstrip().endswith("?") and "amount" not in kinds:
        return 0  # a question states nothing, unless it carries an amount ("a ₹2 crore corpus by 55?")
    score = max(_FACT_PATTERNS[kind][1] for kind in kinds)
    if rules_first and "rule" in kinds:
        score = 4
    return score


def strip_marker(text: str) -> str:
    """Text without the stand-in's leading marker, so markers never pile up in a summary."""
    text = (text or "").strip()
    for marker in (SUMMARY_MARKER, MARKER):
        if text.startswith(marker):
            return text[len(marker):].strip()
    return text


def is_stand_in_text(text: str) -> bool:
    return (text or "").lstrip().startswith((MARKER, SUMMARY_MARKER))


# ----- the extractive summariser -----------------------------------------------------------------

@dataclass(frozen=True)
class _Sentence:
    label: str | None  # "User", "Assistant", or None (a summary sentence with no speaker)
    text: str
    score: int
    position: int


_LABELLED = re.compile(r"(?:^|(?<=\s))(User|Assistant|System):\s")


def _summary_sentences(summary: str) -> list[tuple[str | None, str]]:
    """Sentences of an existing summary with their speaker labels ("User: ...", "Assistant: ...")."""
    summary = strip_marker(summary)
    pieces: list[tuple[str | None, str]] = []
    cuts = list(_LABELLED.finditer(summary))
    if not cuts or cuts[0].start() > 0:
        head = summary[:cuts[0].start()] if cuts else summary
        pieces.append((None, head))
    for index, cut in enumerate(cuts):
        end = cuts[index + 1].start() if index + 1 < len(cuts) else len(summary)
        pieces.append((cut.group(1), summary[cut.end():end]))
    return [(label, sentence) for label, text in pieces for sentence in split_sentences(text)]


def _render(sentences: list[_Sentence]) -> str:
    parts: list[str] = [SUMMARY_MARKER]
    previous: str | None = "\0"
    for sentence in sentences:
        if sentence.label and sentence.label != previous:
            parts.append(f"{sentence.label}:")
        parts.append(sentence.text)
        previous = sentence.label
    return " ".join(parts)


def extractive_summary(existing_summary: str | None, messages: list[tuple[str, str]], *,
                       word_limit: int | None, rules_first: bool = False) -> str:
    """Keep the fact-carrying sentences of the old summary and the new messages, within the word limit.

    Sentences are copied word for word with their speaker. The stand-in's own chat replies are
    skipped: they only restate what the request held. Over the limit, the lowest-scoring sentence
    goes first, the newest of equals first, so facts already in the summary are kept longest.
    The marker and speaker labels count as words; limits under 8 words cannot always be met.
    """
    candidates: list[_Sentence] = []
    seen: set[str] = set()

    def add(label: str | None, text: str, floor: int = 0) -> None:
        key = re.sub(r"\s+", " ", text.lower()).strip()
        score = max(fact_score(text, rules_first=rules_first), floor)
        if score and key not in seen:
            seen.add(key)
            candidates.append(_Sentence(label, text, score, len(candidates)))

    if existing_summary:
        for label, text in _summary_sentences(existing_summary):
            add(label, text, floor=1)  # already chosen once: keep unless the limit needs the room
    for role, content in messages:
        if role == "assistant" and is_stand_in_text(content):
            continue
        for text in split_sentences(content):
            add(LABELS.get(role, role.title()), text)

    kept = list(candidates)
    if word_limit is not None:
        while len(kept) > 1 and word_count(_render(kept)) > word_limit:
            drop = min(kept, key=lambda s: (s.score, -s.position))
            kept.remove(drop)
        if kept and word_count(_render(kept)) > word_limit:  # one sentence alone is too long: cut it
            only = kept[0]
            room = max(1, word_limit - word_count(_render([_Sentence(only.label, "", 0, 0)])))
            kept = [_Sentence(only.label, " ".join(only.text.split()[:room]) + "…", only.score, 0)]
    if not kept:
        return f"{SUMMARY_MARKER} No facts stated yet."
    return _render(kept)


# ----- grounded chat replies ---------------------------------------------------------------------

_TOPICS: dict[str, tuple[str, ...]] = {
    "salary": ("salary", "income", "earn", "earns", "earning", "take-home", "takehome", "pay", "paid", "net"),
    "expenses": ("expenses", "expense", "spend", "spends", "spending", "costs", "rent"),
    "age": ("age", "old", "born", "birthday"),
    "fixed deposit": ("fd", "fds", "deposit", "fixed"),
    "risk profile": ("risk", "risk-averse", "averse", "conservative", "aggressive", "appetite", "tolerance"),
    "goal": ("goal", "goals", "retire", "retirement", "corpus", "target"),
    "rules": ("rule", "rules", "never", "allergic", "avoid", "equity", "equities"),
    "investments": ("investment", "investments", "invest", "invested", "sip", "ppf", "nps", "elss", "fund", "funds"),
    "name": ("name", "called"),
    "debts": ("debt", "debts", "loan", "loans", "emi", "emis"),
}
_STOPWORDS = set("""a an the and or but of to in on at by for with from as is are was were be been am do does did
what what's whats which who whom whose when where why how much many my mine me i i'm you your yours we our us it its
this that these those there here tell told say said remind again please exact exactly start beginning earlier before
can could would should will shall may might have has had get got give know right now just so about any some all
monthly month per one like based suit suits recommend""".split())
_PERSONAL = re.compile(r"\b(?:my|mine|me|i|i'm|i am|i've)\b", re.IGNORECASE)


def _words(text: str) -> set[str]:
    return {word.strip("'’-.") for word in re.findall(r"[a-z0-9][a-z0-9'’\-]*", text.lower())}


def _topics(words: set[str]) -> list[str]:
    return [topic for topic, synonyms in _TOPICS.items() if words & set(synonyms)]


@dataclass(frozen=True)
class _Source:
    where: str  # "the conversation summary" or "the recent turns"
    text: str
    order: int


def _sources(messages: list[dict[str, Any]]) -> list[_Source]:
    """Fact sentences the request holds: summary blocks (system messages after the first) and earlier turns."""
    sources: list[_Source] = []
    for index, message in enumerate(messages[:-1]):
        role, text = message.get("role"), _content_text(message.get("content"))
        if role == "system":
            if index == 0:
                continue  # the agent's instructions, not facts about the user
            lines = text.split("\n", 1)
            if len(lines) == 2 and lines[0].rstrip().endswith(":") and lines[0].upper() == lines[0]:
                text = lines[1]  # drop the heading "CONVERSATION SUMMARY (earlier turns):"
            sentences = [sentence for _, sentence in _summary_sentences(text)]
            where = "the conversation summary"
        elif role == "assistant" and is_stand_in_text(text):
            continue
        else:
            sentences = split_sentences(text)
            where = "the recent turns"
        for sentence in sentences:
            if fact_score(sentence) > 0:
                sources.append(_Source(where, sentence, len(sources)))
    return sources


def grounded_reply(messages: list[dict[str, Any]]) -> str:
    """A chat reply that uses only what the request holds, and says so."""
    if not messages or messages[-1].get("role") != "user":
        return f"{MARKER} There is no user message to answer at the end of this request."
    question = _content_text(messages[-1].get("content")).strip()
    question_words = _words(question)
    asks = question.endswith("?") or bool(re.match(r"(?i)(what|which|how|when|where|who|why|do|does|did|is|are|"
                                                    r"can|could|should|tell|remind)\b", question))
    if not asks:
        return (f"{MARKER} Noted. I am a deterministic stand-in, not a language model: I only answer "
                "questions about facts stated in this conversation (amounts, ages, dates, rules, goals), "
                "quoting where I found them.")
    topics = _topics(question_words)
    personal = bool(_PERSONAL.search(question))
    if not personal or not topics:
        return (f"{MARKER} I am a deterministic stand-in, not a language model, so I cannot answer "
                f"\"{question}\" from general knowledge. I can only quote facts you stated in this "
                "conversation. Run in live or replay mode for a real answer.")
    keywords = question_words - _STOPWORDS
    sources = _sources(messages)
    found: list[_Source] = []
    missing: list[str] = []
    for topic in topics:  # one quote per fact asked for: the closest match, the latest of equals
        synonyms = set(_TOPICS[topic])
        matches = [(len(_words(source.text) & (keywords | synonyms)), source.order, source)
                   for source in sources if _words(source.text) & synonyms]
        if matches:
            best = max(matches, key=lambda match: (match[0], match[1]))[2]
            if best not in found:
                found.append(best)
        else:
            missing.append(topic)
    parts = [MARKER]
    parts += [f"From {source.where}: \"{source.text}\"" for source in sorted(found, key=lambda s: s.order)]
    if missing:
        what = " or ".join(f"your {topic}" for topic in missing)
        parts.append(f"I do not have {what} in what I was sent: it is in neither the conversation summary "
                     "nor the recent turns of this request.")
    if found and not _FACT_QUESTION.match(question):
        parts.append("I cannot weigh options or advise: I am a stand-in, not a language model.")
    return " ".join(parts)


_FACT_QUESTION = re.compile(r"(?i)\s*(?:what(?:'s| is| are| was| were)\s+(?:my|the)|how (?:old|much|many)|"
                            r"when|where|remind|tell me|do you (?:know|remember)|did i)\b")


# ----- the OpenAI-compatible response ---------------------------------------------------------------

def reply_for(messages: list[dict[str, Any]]) -> str:
    """The stand-in's reply text for a request's messages (summary or grounded chat reply)."""
    if is_summariser_request(messages):
        parsed = parse_summariser_request(messages)
        return extractive_summary(parsed.existing_summary, parsed.messages, word_limit=parsed.word_limit,
                                  rules_first=parsed.names_hard_rules)
    return grounded_reply(messages)


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """A ``chat.completions`` response body for a request body, as an OpenAI-compatible server sends it."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ValueError("the request has no 'messages' list")
    reply = reply_for(messages)
    limit = body.get("max_completion_tokens") or body.get("max_tokens")
    finish_reason = "stop"
    reply_tokens = encoding().encode(reply, disallowed_special=())
    if isinstance(limit, int) and 0 < limit < len(reply_tokens):
        reply, finish_reason = encoding().decode(reply_tokens[:limit]), "length"
    prompt_tokens = sum(count_tokens(_content_text(message.get("content"))) for message in messages)
    completion_tokens = count_tokens(reply)
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return {
        "id": f"offline-{digest[:16]}",
        "object": "chat.completion",
        "created": 0,
        "model": MODEL_NAME,
        "system_fingerprint": FINGERPRINT,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": reply},
                     "finish_reason": finish_reason, "logprobs": None}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def _error(status: int, message: str, kind: str) -> httpx2.Response:
    return httpx2.Response(status, json={"error": {"message": message, "type": kind, "code": None}})


def handle_chat_request(method: str, path: str, content: bytes) -> tuple[int, dict[str, Any]]:
    """Status and JSON body for one HTTP request to an OpenAI-compatible server backed by the stand-in."""
    if method != "POST" or not path.rstrip("/").endswith("chat/completions"):
        message = f"the offline stand-in serves only POST .../chat/completions, not {method} {path}"
        return 404, {"error": {"message": message, "type": "not_found", "code": None}}
    try:
        body = json.loads(content or b"{}")
        return 200, respond(body)
    except (ValueError, TypeError, AttributeError) as error:
        return 400, {"error": {"message": f"invalid request: {error}", "type": "invalid_request_error", "code": None}}


class OfflineTransport(httpx2.BaseTransport):
    """An ``httpx2`` transport that answers chat requests with the stand-in, in process (no network)."""

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        status, payload = handle_chat_request(request.method, request.url.path, request.read())
        return httpx2.Response(status, json=payload, request=request)
