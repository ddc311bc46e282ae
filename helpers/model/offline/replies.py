"""The stand-in's chat replies: grounded in the request, saying where each fact came from.

About 100 to 150 tokens long (a model's replies run 100 to 250), so token budgets fill much as
they do with a model. Asked for a fact it quotes the sentence that holds it, or says it does not
have it; told a fact, it quotes it back; anything else is declined plainly. Values are quoted only
when the latest message states or asks for them, so the stand-in never carries an old fact
forward: whether a fact is still in the recent turns is the memory's doing.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from helpers.base.tokens import count_tokens
from helpers.model.offline.facts import fact_kinds, fact_score, split_sentences
from helpers.model.offline.markers import MARKER
from helpers.model.offline.requests import content_text, drop_heading
from helpers.model.offline.summariser import summary_sentences

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


def request_facts(messages: list[dict[str, Any]]) -> list[RequestFact]:
    """The fact sentences about the user a chat request holds, in request order.

    They come from the summary (system messages after the first) and the user's messages. The
    first system message (the agent's instructions) and the assistant's replies are not facts
    about the user, and neither are the summary's sentences labelled "Assistant:".
    """
    user_positions = [index for index, message in enumerate(messages) if message.get("role") == "user"]
    facts: list[RequestFact] = []
    for index, message in enumerate(messages):
        role, text = message.get("role"), content_text(message.get("content"))
        if role == "system" and index > 0:
            sentences = [sentence for label, sentence in summary_sentences(drop_heading(text))
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

    systems = [content_text(m.get("content")) for m in messages if m.get("role") == "system"]
    recent = [content_text(m.get("content")) for m in messages if m.get("role") in ("user", "assistant")]
    parts = [f"a system prompt ({tokens(systems[:1])} tokens)"] if systems else ["no system prompt"]
    summaries = [drop_heading(text) for text in systems[1:]]
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
    question = content_text(messages[-1].get("content")).strip()
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
