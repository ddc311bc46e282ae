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
* a **chat request** gets a reply grounded in the request, about 100 to 150 tokens long (a
  model's replies run 100 to 250), so token budgets fill much as they do with a model. Asked for
  a fact ("what is my salary?") it quotes the sentence of the summary or of the verbatim turns
  that holds it, or says it does not have it; told a fact, it quotes it back ("Noted, ...");
  anything else gets a plain statement that it cannot answer or advise. Then it says what the
  request is made of (system prompt, summary, messages, in tokens), what the request tells it
  about the user, topic by topic and where ("from the summary", "verbatim, 2 turns back"), and
  which topics it finds nothing on. Values are quoted only when the latest message states or asks
  for them, so the stand-in never carries an old fact forward in its own replies: whether a fact
  is still in the recent turns is the memory's doing.

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

from helpers.drift import word_count
from helpers.tokens import count_tokens, encoding

MODEL_NAME = "offline-stand-in"
MARKER = "[offline stand-in]"
SUMMARY_MARKER = "[offline stand-in summary]"
FINGERPRINT = "offline-stand-in-v2"

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
                       r"\baged? \d{2}\b|(?<!\d),\s*\d{2},(?!\d)", re.IGNORECASE), 3),
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
    skipped: they only restate what the request held (its recap would otherwise fill the summary
    with copies). Over the limit, the lowest-scoring sentence
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
    "name": ("name", "called"),
    "salary": ("salary", "income", "earn", "earns", "earning", "take-home", "takehome", "pay", "paid", "net"),
    "expenses": ("expenses", "expense", "spend", "spends", "spending", "costs", "rent"),
    "age": ("age", "old", "born", "birthday"),
    "risk profile": ("risk", "risk-averse", "averse", "conservative", "aggressive", "appetite", "tolerance"),
    "investments": ("investment", "investments", "invest", "invested", "fd", "fds", "deposit", "fixed", "sip",
                    "ppf", "nps", "elss", "fund", "funds"),
    "debts": ("debt", "debts", "loan", "loans", "emi", "emis"),
    "goal": ("goal", "goals", "retire", "retirement", "corpus", "target"),
    "hard rules": ("rule", "rules", "never", "allergic", "avoid", "equity", "equities"),
}
# kinds of fact (fact_kinds) that name a topic even without one of its words: "I'm Chiru", "I am 32"
_KIND_TOPICS = {"name": "name", "age": "age", "rule": "hard rules"}
_STOPWORDS = set("""a an the and or but of to in on at by for with from as is are was were be been am do does did
what what's whats which who whom whose when where why how much many my mine me i i'm you your yours we our us it its
this that these those there here tell told say said remind again please exact exactly start beginning earlier before
can could would should will shall may might have has had get got give know right now just so about any some all
monthly month per one like based suit suits recommend""".split())
_PERSONAL = re.compile(r"\b(?:my|mine|me|i|i'm|i am|i've)\b", re.IGNORECASE)
_ASKS = re.compile(r"(?i)(what|which|how|when|where|who|why|do|does|did|is|are|can|could|should|tell|remind)\b")
_FACT_QUESTION = re.compile(r"(?i)\s*(?:what(?:'s| is| are| was| were)\s+(?:my|the)|how (?:old|much|many)|"
                            r"when|where|remind|tell me|do you (?:know|remember)|did i)\b")
THIS_MESSAGE = "this message"
FROM_SUMMARY = "from the summary"


def _words(text: str) -> set[str]:
    return {word.strip("'’-.") for word in re.findall(r"[a-z0-9][a-z0-9'’\-]*", text.lower())}


def _topics(words: set[str]) -> list[str]:
    return [topic for topic, synonyms in _TOPICS.items() if words & set(synonyms)]


def sentence_topics(sentence: str) -> list[str]:
    """What a fact sentence is about (salary, age, rules, ...), in a fixed order; [] if none is named."""
    found = set(_topics(_words(sentence))) | {_KIND_TOPICS[kind] for kind in fact_kinds(sentence)
                                              if kind in _KIND_TOPICS}
    return [topic for topic in _TOPICS if topic in found]


@dataclass(frozen=True)
class RequestFact:
    """A sentence of a chat request that states a fact about the user, and where in the request it is."""

    text: str
    where: str  # "from the summary", "this message" (the question), or "verbatim, N turns back"
    order: int
    topics: tuple[str, ...]


def _drop_heading(text: str) -> str:
    lines = text.split("\n", 1)
    if len(lines) == 2 and _HEADING.fullmatch(lines[0].rstrip()):
        return lines[1]  # "CONVERSATION SUMMARY (earlier turns):" or "CONVERSATION MEMORY (...):"
    return text


def request_facts(messages: list[dict[str, Any]]) -> list[RequestFact]:
    """The fact sentences about the user a chat request holds, in request order.

    They come from the summary (system messages after the first) and the user's messages. The
    first system message (the agent's instructions) and the assistant's replies are not facts
    about the user, and neither are the summary's sentences labelled "Assistant:".
    """
    user_positions = [index for index, message in enumerate(messages) if message.get("role") == "user"]
    facts: list[RequestFact] = []
    for index, message in enumerate(messages):
        role, text = message.get("role"), _content_text(message.get("content"))
        if role == "system" and index > 0:
            sentences = [sentence for label, sentence in _summary_sentences(_drop_heading(text))
                         if label in (None, "User")]
            where = FROM_SUMMARY
        elif role == "user":
            back = sum(1 for position in user_positions if position > index)
            sentences = split_sentences(text)
            where = THIS_MESSAGE if back == 0 else f"verbatim, {back} turn{'s' if back > 1 else ''} back"
        else:
            continue
        for sentence in sentences:
            if fact_score(sentence) > 0:
                facts.append(RequestFact(sentence, where, len(facts), tuple(sentence_topics(sentence))))
    return facts


def _join(items: list[str], last: str = "and") -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {last} {items[-1]}"


def _request_outline(messages: list[dict[str, Any]]) -> str:
    """What the request is made of, in o200k_base tokens of the contents (as the turn lines count them)."""
    def tokens(texts: list[str]) -> int:
        return sum(count_tokens(text) for text in texts)

    systems = [_content_text(m.get("content")) for m in messages if m.get("role") == "system"]
    recent = [_content_text(m.get("content")) for m in messages if m.get("role") in ("user", "assistant")]
    parts = [f"a system prompt ({tokens(systems[:1])} tokens)"] if systems else ["no system prompt"]
    summaries = [_drop_heading(text) for text in systems[1:]]
    parts.append(f"a summary of earlier turns ({tokens(summaries)} tokens)" if summaries else "no summary")
    parts.append(f"{len(recent)} message{'s' if len(recent) != 1 else ''} word for word ({tokens(recent)} tokens)")
    return f"This request holds {_join(parts)}."


def _recap(facts: list[RequestFact], quoted: list[RequestFact]) -> list[str]:
    """What else the request tells the stand-in about the user, by topic and where (values not repeated)."""
    rest = [fact for fact in facts if fact not in quoted]
    groups: dict[str, list[str]] = {}
    for fact in rest:
        topics = groups.setdefault(fact.where, [])
        for topic in fact.topics or ("other details",):
            if topic not in topics:
                topics.append(topic)
    parts: list[str] = []
    if groups:
        entries = [f"your {_join(topics)} ({where})" for where, topics in groups.items()]
        lead = "It also tells me about" if quoted else "What it tells me about you:"
        parts.append(f"{lead} {'; '.join(entries)}.")
    elif not quoted:
        parts.append("It states no fact about you yet.")
    held = {topic for fact in facts for topic in fact.topics}
    missing = [topic for topic in _TOPICS if topic not in held]
    if missing:
        parts.append(f"I find nothing in it about your {_join(missing, 'or')}.")
    return parts


def _quote(fact: RequestFact) -> str:
    where = "This message" if fact.where == THIS_MESSAGE else fact.where[0].upper() + fact.where[1:]
    return f"{where}: \"{fact.text}\""


def grounded_reply(messages: list[dict[str, Any]]) -> str:
    """A chat reply that uses only what the request holds, and says where each fact came from.

    A question about a stated fact ("what is my salary?") is answered by quoting the sentence that
    holds it; anything else is declined plainly. Then the reply says what the request tells it
    about the user: facts are quoted with their values only when the latest message states them
    or asks for them; the others are named by topic and place, so that no value is echoed into
    the recent turns by the stand-in (whether a fact is still in the verbatim part is the
    memory's doing, not the stand-in's).
    """
    if not messages or messages[-1].get("role") != "user":
        return f"{MARKER} There is no user message to answer at the end of this request."
    question = _content_text(messages[-1].get("content")).strip()
    question_words = _words(question)
    facts = request_facts(messages)
    asks = question.endswith("?") or bool(_ASKS.match(question))
    topics = _topics(question_words) if asks else []
    personal = bool(_PERSONAL.search(question))
    parts = [MARKER]
    quoted: list[RequestFact] = []
    if not asks:
        quoted = [fact for fact in facts if fact.where == THIS_MESSAGE]
        about = list(dict.fromkeys(topic for fact in quoted for topic in fact.topics))
        noted = " ".join(f"\"{fact.text}\"" for fact in quoted)
        parts.append(f"Noted, about your {_join(about)}: {noted}" if about else f"Noted: {noted}" if quoted
                     else "Noted.")
        parts.append("I am a deterministic stand-in, not a language model, so I cannot advise you; "
                     "I can only show what this request tells me.")
    elif personal and topics:
        keywords = question_words - _STOPWORDS
        missing: list[str] = []
        for topic in topics:  # one quote per fact asked for: the closest match, the latest of equals
            synonyms = set(_TOPICS[topic])
            matches = [(len(_words(fact.text) & (keywords | synonyms)), fact.order, fact)
                       for fact in facts if fact.where != THIS_MESSAGE and topic in fact.topics]
            if matches:
                best = max(matches, key=lambda match: (match[0], match[1]))[2]
                if best not in quoted:
                    quoted.append(best)
            else:
                missing.append(topic)
        quoted.sort(key=lambda fact: fact.order)
        parts += [_quote(fact) for fact in quoted]
        if missing:
            what = " or ".join(f"your {topic}" for topic in missing)
            parts.append(f"I do not have {what} in what I was sent: it is in neither the conversation summary "
                         "nor the recent turns of this request.")
        if quoted and not _FACT_QUESTION.match(question):
            parts.append("I cannot weigh options or advise: I am a stand-in, not a language model.")
    else:
        parts.append(f"I am a deterministic stand-in, not a language model, so I cannot answer \"{question}\" "
                     "from general knowledge. Run in live or replay mode for a real answer.")
    parts.append(_request_outline(messages))
    parts += _recap(facts, quoted)
    return " ".join(parts)


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
