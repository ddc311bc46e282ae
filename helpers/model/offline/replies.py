"""The stand-in's chat replies, grounded only in the request: a fact asked for is quoted with where it was found, or
said not to be sent; one told is named; the course's own conversations also get a reply written for them."""
from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any, NamedTuple

from helpers.base.paths import DATA_DIR
from helpers.base.text import listed
from helpers.memory.blocks import PINNED_HEADING
from helpers.memory.registry import headings
from helpers.model.offline.facts import content_text, fact_kinds, fact_score, split_sentences
from helpers.model.offline.markers import MARKER
from helpers.model.offline.summariser import summary_sentences

REPLIES_DIR = DATA_DIR / "offline_replies"
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
_ASKS = re.compile(r"(?i)\s*(what|which|how|when|where|who|why|do|does|did|is|are|can|could|should|tell|remind|"
                   r"give|explain|list|show|compare|describe|suggest|recommend|help|calculate|summari[sz]e|recap)\b")
_TELLS = re.compile(r"(?i)\s*(?:don['’]?t|do not|do never)\b")  # "Do not suggest gold." starts like a question
# a question that asks what was said, not what to do ("how much do I earn?", not "how much should I invest?")
_FACT_QUESTION = re.compile(r"(?i)\s*(?:what(?:'s| is| are| was| were)\s+(?:my|the)|how (?:old|much|many)\b"
                            r"(?!\s+(?:should|could|would|can|must|to)\b)|when|where|remind|tell me|"
                            r"do you (?:know|remember)|did i)\b")
CANNOT_ANSWER, CANNOT_ADVISE = "I cannot answer that offline.", "I cannot advise offline."
SUMMARY, RECENT_TURNS, THIS_MESSAGE = "the summary", "the recent turns", "this message"


def _words(text: str) -> set[str]:
    return {word.strip("'’-.") for word in re.findall(r"[a-z0-9][a-z0-9'’\-]*", text.lower())}


def _topics(words: set[str]) -> list[str]:
    return [topic for topic, synonyms in _TOPICS.items() if words & set(synonyms)]


def sentence_topics(sentence: str) -> list[str]:
    """What a fact sentence is about (salary, age, rules, ...), in a fixed order; [] if none is named."""
    found = set(_topics(_words(sentence))) | {_KIND_TOPICS[k] for k in fact_kinds(sentence) if k in _KIND_TOPICS}
    return [topic for topic in _TOPICS if topic in found]


class RequestFact(NamedTuple):
    """A sentence of a chat request that states a fact about the user, and where in the request it is."""

    text: str
    where: str  # SUMMARY, RECENT_TURNS or THIS_MESSAGE (the latest user message)
    order: int
    topics: tuple[str, ...]


def drop_heading(text: str) -> str:
    """A memory message without the heading its memory kind (or the pinned rules) gives it."""
    return next((text[len(heading):] for heading in (*headings(), PINNED_HEADING) if text.startswith(heading)), text)


def request_facts(messages: list[dict[str, Any]]) -> list[RequestFact]:
    """The fact sentences about the user a chat request holds, in request order: from the summary (also when merged
    into the first system message) and the user's messages, never the instructions or the assistant's replies."""
    last_user = max((index for index, message in enumerate(messages) if message.get("role") == "user"), default=-1)
    facts: list[RequestFact] = []
    for index, message in enumerate(messages):
        role, text = message.get("role"), content_text(message.get("content"))
        if role == "system" and index == 0:  # only the memory LLM_SYSTEM_MESSAGES=merge put in it, from its heading on
            found = [text.find(heading) for heading in (*headings(), PINNED_HEADING) if heading in text]
            text = text[min(found):] if found else None
        if role == "system" and text is not None:
            sentences = [sentence for part in text.split("\n\n") for label, sentence in
                         summary_sentences(drop_heading(part)) if label in (None, "User")]
            where = SUMMARY
        elif role == "user":
            sentences, where = split_sentences(text), THIS_MESSAGE if index == last_user else RECENT_TURNS
        else:
            continue
        facts += [RequestFact(sentence, where, len(facts) + n, tuple(sentence_topics(sentence)))
                  for n, sentence in enumerate(s for s in sentences if fact_score(s) > 0)]
    return facts


def _answer(question: str, facts: list[RequestFact], told_topics: set[str]) -> list[str]:
    """A question about the user's own facts: the sentences that hold them, by where they are; or "not sent"."""
    question_words = _words(question)
    keywords, quoted, missing = question_words - _STOPWORDS, [], []
    for topic in _topics(question_words):  # one quote per fact asked for: the closest match, the latest of equals
        wanted = keywords | set(_TOPICS[topic])
        if matches := [fact for fact in facts if fact.where != THIS_MESSAGE and topic in fact.topics]:
            best = max(matches, key=lambda fact: (len(_words(fact.text) & wanted), fact.order))
            if best not in quoted:
                quoted.append(best)
        elif topic not in told_topics:  # told in this very message: not missing
            missing.append(topic)
    lines = [f"From {where}: " + listed([f'"{fact.text}"' for fact in sorted(here, key=lambda fact: fact.order)])
             for where in (SUMMARY, RECENT_TURNS) if (here := [fact for fact in quoted if fact.where == where])]
    if missing:
        lines.append(f"I do not have your {listed(missing, 'or')} in what I was sent.")
    questions = [sentence for sentence in split_sentences(question) if sentence.endswith("?")] or [question]
    if quoted and not all(_FACT_QUESTION.match(sentence) for sentence in questions):
        lines.append(CANNOT_ADVISE)
    return lines


def grounded_reply(messages: list[dict[str, Any]]) -> str:
    """A short chat reply that uses only what the request holds and says where each quoted fact came from; a written
    reply (``data/offline_replies/``) follows after a blank line, in place of "I cannot answer / advise offline"."""
    if not messages or messages[-1].get("role") != "user":
        return f"{MARKER} There is no user message to answer."
    message = content_text(messages[-1].get("content")).strip()
    facts = request_facts(messages)
    stated = [fact for fact in facts if fact.where == THIS_MESSAGE and not fact.text.endswith("?")]
    asks = "?" in message or (bool(_ASKS.match(message)) and not _TELLS.match(message))  # a question or a request
    lines = [MARKER]
    if stated or not asks:  # acknowledged by its topics, never its values
        about = list(dict.fromkeys(topic for fact in stated for topic in fact.topics))
        lines.append(f"Noted: your {listed(about)}." if about else "Noted.")
    if asks:
        personal = bool(_PERSONAL.search(message)) and bool(_topics(_words(message)))
        told = {topic for fact in facts if fact.where == THIS_MESSAGE for topic in fact.topics}  # questions too
        lines += (_answer(message, facts, told) if personal else []) or [CANNOT_ANSWER]
    if (written := written_reply(message)) is None:
        return " ".join(lines)
    grounded = " ".join(line for line in lines if line not in (CANNOT_ANSWER, CANNOT_ADVISE))
    return f"{MARKER} {written}" if grounded == MARKER else f"{grounded}\n\n{written}"  # the marker alone: one line


@lru_cache(maxsize=None)
def _written() -> dict[str, str]:
    """Every written reply (``{"source": ..., "replies": [{"user", "reply"}]}`` files), by its user message with
    whitespace runs made one space."""
    return {" ".join(entry["user"].split()): entry["reply"].strip() for path in sorted(REPLIES_DIR.glob("*.json"))
            for entry in json.loads(path.read_text(encoding="utf-8"))["replies"]}


def written_reply(user_message: str) -> str | None:
    """The reply written for this exact user message (after whitespace normalisation), or None."""
    return _written().get(" ".join((user_message or "").split()))
