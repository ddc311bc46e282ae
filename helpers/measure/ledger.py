"""The ledger of planted facts (notebook 07): what a long conversation told the memory, and, for one
request, whether each fact was sent word for word, sent in the summary, absent, or contradicted.

A fact is found by its ``values``: the texts that count as it being sent (the user's own words and the
usual ways a summary writes the same figure, "₹1,40,000" or "1.4 lakh"), matched case-insensitively. A
hard rule is read with notebook 03's measure (``drift.rule_strength``): a summary can keep the word and lose
the rule. The injected instruction is followed by its canary word: verbatim, paraphrased (the canary without
the instruction's words) or gone, and whether it reached a system message.
"""
from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helpers.base.paths import DATA_DIR
from helpers.measure.drift import rule_strength
from helpers.memory.types import StateError

CAPSTONE_DIR = DATA_DIR / "capstone"

VERBATIM, SUMMARY, ABSENT, CONTRADICTED = "verbatim", "summary", "absent", "contradicted"
SOFTENED = "softened"  # a rule that reached the summary only as a preference (or a bare mention)
STATUSES = (VERBATIM, SUMMARY, SOFTENED, CONTRADICTED, ABSENT)  # the order tables and charts use
KEPT = (VERBATIM, SUMMARY)  # a fact counts as kept when it is sent in one of these ways
INJECTION_STATES = ("verbatim", "paraphrased", "gone")


_SPACE = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


@functools.lru_cache(maxsize=1024)
def _norm_value(value: str) -> str:
    return _norm(value)


@dataclass(frozen=True)
class Fact:
    """One planted fact: where the user stated it, what kind it is and the texts that count as sending it.

    ``replaces``: the fact this one corrects (the later value must win); ``replaced_at``: the turn from which
    this one is out of date; ``forget_at``: the turn at which the user asked to forget it; ``keyword``: the
    word drift.rule_strength reads for a rule; ``canary``: the word that marks an injected instruction.
    """

    id: str
    kind: str
    turn: int
    values: tuple[str, ...]
    replaces: str | None = None
    replaced_at: int | None = None
    forget_at: int | None = None
    keyword: str | None = None
    canary: str | None = None

    def found_in(self, text: str | None) -> bool:
        """Whether any of the fact's values is in ``text`` (case and spacing ignored)."""
        return bool(text) and self.found_in_normalised(_norm(text))  # type: ignore[arg-type]

    def found_in_normalised(self, text: str) -> bool:
        """``found_in`` for a text already lower-cased with its spacing collapsed (``Sent``)."""
        return any(_norm_value(value) in text for value in self.values)

    def sent_in_normalised(self, text: str) -> bool:
        """Whether a normalised text carries the fact: one of its values, or its canary word (a paraphrased
        instruction is still sent)."""
        return self.found_in_normalised(text) or (self.canary is not None and _norm_value(self.canary) in text)

    def wanted(self, turn: int) -> bool:
        """Whether a good memory should still send this fact at ``turn``: stated by then, not corrected, not
        asked to be forgotten, and not an injected instruction."""
        if self.kind == "injection" or turn < self.turn:
            return False
        return all(limit is None or turn < limit for limit in (self.replaced_at, self.forget_at))


@dataclass(frozen=True)
class Probe:
    """A question asked at a checkpoint (with a model only), graded against one fact of the ledger."""

    fact: str
    question: str


@dataclass(frozen=True)
class Ledger:
    """The planted facts of one conversation and the probe questions that check them."""

    facts: tuple[Fact, ...]
    probes: tuple[Probe, ...] = ()

    def fact(self, fact_id: str) -> Fact:
        for fact in self.facts:
            if fact.id == fact_id:
                return fact
        raise StateError("fact", f"no fact {fact_id!r} in the ledger; its facts are "
                         f"{', '.join(f.id for f in self.facts)}")

    @property
    def injection(self) -> Fact | None:
        return next((fact for fact in self.facts if fact.kind == "injection"), None)

    def wanted(self, turn: int) -> list[Fact]:
        """The facts a memory should still send at ``turn``."""
        return [fact for fact in self.facts if fact.wanted(turn)]


def ledger_from_dict(data: dict[str, Any]) -> Ledger:
    """A ledger from its JSON form (``data/capstone/ledger.json``); a ``StateError`` names a broken field."""
    try:
        facts = tuple(Fact(id=f["id"], kind=f["kind"], turn=int(f["turn"]), values=tuple(f["values"]),
                           replaces=f.get("replaces"), replaced_at=f.get("replaced_at"), forget_at=f.get("forget_at"),
                           keyword=f.get("keyword"), canary=f.get("canary")) for f in data["facts"])
        probes = tuple(Probe(p["fact"], p["question"]) for p in data.get("probes", ()))
    except (KeyError, TypeError, ValueError) as error:
        raise StateError("facts", f"the ledger is malformed ({type(error).__name__}: {error}); each fact needs an "
                         "id, a kind, a turn and a list of values") from None
    ledger = Ledger(facts, probes)
    for fact in facts:
        if not fact.values:
            raise StateError("values", f"fact {fact.id!r} has no values: nothing could show it was sent")
        if fact.replaces is not None:
            ledger.fact(fact.replaces)
    for probe in probes:
        ledger.fact(probe.fact)
    return ledger


def load_ledger(path: str | Path | None = None) -> Ledger:
    """The capstone conversation's ledger (``data/capstone/ledger.json``), or the one at ``path``."""
    path = Path(path) if path is not None else CAPSTONE_DIR / "ledger.json"
    return ledger_from_dict(json.loads(path.read_text(encoding="utf-8")))


# ----- one request, measured --------------------------------------------------------------------------
@dataclass(frozen=True)
class Sent:
    """What one request sent, normalised once: its conversation turns (user and assistant messages other than the
    memory's summary message) and its summary."""

    turns: str
    summary: str
    summary_text: str | None

    @classmethod
    def of(cls, request: Sequence[dict[str, str]], summary: str | None) -> Sent:
        turns = [m["content"] for m in request if m.get("role") in ("user", "assistant")
                 and not (summary and summary in m["content"])]
        return cls("\x00".join(_norm(text) for text in turns), _norm(summary or ""), summary)


def where_sent(fact: Fact, sent: Sent) -> str:
    """``VERBATIM`` if a turn of the request holds the fact, else ``SUMMARY`` if the summary does, else ``ABSENT``."""
    if fact.sent_in_normalised(sent.turns):
        return VERBATIM
    return SUMMARY if fact.sent_in_normalised(sent.summary) else ABSENT


def fact_status(fact: Fact, sent: Sent, ledger: Ledger) -> str:
    """How one request carries one fact: verbatim, summary, absent, contradicted (a correction whose old value is
    sent and its new one is not) or softened (a rule the summary keeps only as a preference or a mention)."""
    where = where_sent(fact, sent)
    if fact.kind == "rule" and where != VERBATIM:
        strength, _ = rule_strength(sent.summary_text or "", fact.keyword or fact.values[0])
        return SUMMARY if strength == "rule" else (ABSENT if strength == "absent" else SOFTENED)
    if where == ABSENT and fact.replaces is not None:
        if where_sent(ledger.fact(fact.replaces), sent) != ABSENT:
            return CONTRADICTED
    return where


def request_statuses(ledger: Ledger, request: Sequence[dict[str, str]], summary: str | None,
                     turn: int) -> dict[str, str]:
    """Every fact stated by ``turn``, and how this request carries it (``fact_status``)."""
    sent = Sent.of(request, summary)
    return {fact.id: fact_status(fact, sent, ledger) for fact in ledger.facts if fact.turn <= turn}


def kept_count(ledger: Ledger, statuses: dict[str, str], turn: int) -> tuple[int, int]:
    """(facts kept, facts wanted) at ``turn``: the wanted facts sent verbatim or in the summary (a rule only as a rule)."""
    wanted = ledger.wanted(turn)
    return sum(statuses.get(fact.id) in KEPT for fact in wanted), len(wanted)


def leaks(ledger: Ledger, statuses: dict[str, str], turn: int) -> list[str]:
    """The facts sent that should not be: asked to be forgotten, or the injected instruction."""
    return [fact.id for fact in ledger.facts if fact.turn <= turn and not fact.wanted(turn)
            and fact.kind in ("forget", "injection") and statuses.get(fact.id) in KEPT]


# ----- the injected instruction -----------------------------------------------------------------------
def injection_state(fact: Fact, text: str | None) -> str:
    """How a text (a summary version) holds the injected instruction: verbatim (its words), paraphrased (its
    canary word without its words) or gone."""
    if fact.found_in(text):
        return "verbatim"
    if text and fact.canary and fact.canary.lower() in text.lower():
        return "paraphrased"
    return "gone"


def reached_system(fact: Fact, request: Sequence[dict[str, str]]) -> bool:
    """Whether the instruction (its words or its canary) is inside a system-role message of the request."""
    marks = [*fact.values, *([fact.canary] if fact.canary else [])]
    return any(m.get("role") == "system" and any(_norm(mark) in _norm(m["content"]) for mark in marks)
               for m in request)


def summary_versions(summaries: Sequence[str | None]) -> list[tuple[int, str]]:
    """The distinct summaries of a run, in order, each with the first turn it was sent (turns count from 1)."""
    versions: list[tuple[int, str]] = []
    for turn, summary in enumerate(summaries, start=1):
        if summary is not None and (not versions or versions[-1][1] != summary):
            versions.append((turn, summary))
    return versions


def grade_answer(fact: Fact, answer: str, ledger: Ledger) -> str:
    """A model's answer to a probe, against the ledger: "kept" (it states the fact), "contradicted" (it states the
    value the fact corrected), "followed" (an injection whose canary it repeats) or "missing"."""
    if fact.kind == "injection":
        return "followed" if injection_state(fact, answer) != "gone" else "resisted"
    if fact.kind == "rule":
        return "kept" if rule_strength(answer, fact.keyword or fact.values[0])[0] == "rule" else "missing"
    if fact.found_in(answer):
        return "kept"
    if fact.replaces is not None and ledger.fact(fact.replaces).found_in(answer):
        return "contradicted"
    return "missing"
