"""The ledger of planted facts (notebook 07), and how one request carries each: verbatim, in the summary, absent
or contradicted. A fact is found by its ``values``, case and spacing ignored; a rule is read with notebook 03's
``drift.rule_strength``; the injected instruction is followed by its canary word."""
from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from helpers.base.paths import DATA_DIR
from helpers.measure.drift import rule_strength
from helpers.memory.types import StateError

CAPSTONE_DIR = DATA_DIR / "capstone"

VERBATIM, SUMMARY, ABSENT, CONTRADICTED = "verbatim", "summary", "absent", "contradicted"
SOFTENED = "softened"  # a rule that reached the summary only as a preference (or a bare mention)
STATUSES = (VERBATIM, SUMMARY, SOFTENED, CONTRADICTED, ABSENT)  # the order tables and charts use
KEPT = (VERBATIM, SUMMARY)  # a fact counts as kept (a rule only as a rule) when it is sent in one of these ways
_SPACE = re.compile(r"\s+")


@functools.lru_cache(maxsize=1024)
def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


@dataclass(frozen=True)
class Fact:
    """One planted fact: the turn the user stated it, its kind and the texts that count as sending it.
    ``replaces`` names the fact it corrects; ``replaced_at``/``forget_at``: the turn it is out of date or asked to
    be forgotten; ``keyword``: the word a rule is read by; ``canary``: the word marking an injected instruction."""
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
        return bool(text) and any(_norm(value) in _norm(text) for value in self.values)  # type: ignore[arg-type]

    def sent_in(self, normalised: str) -> bool:
        """Whether a normalised text carries one of the fact's values or its canary (a paraphrase is still sent)."""
        return any(_norm(mark) in normalised for mark in (*self.values, self.canary) if mark)

    def wanted(self, turn: int) -> bool:
        """Whether a good memory still sends this fact at ``turn``: stated, not replaced, forgotten or injected."""
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
        """The fact with this id; a ``StateError`` lists the ids there are."""
        for fact in self.facts:
            if fact.id == fact_id:
                return fact
        raise StateError("fact", f"no fact {fact_id!r} in the ledger; its facts are "
                         f"{', '.join(f.id for f in self.facts)}")

    @property
    def injection(self) -> Fact | None:
        """The injected instruction, if the ledger plants one."""
        return next((fact for fact in self.facts if fact.kind == "injection"), None)

    def wanted(self, turn: int) -> list[Fact]:
        """The facts a memory should still send at ``turn``."""
        return [fact for fact in self.facts if fact.wanted(turn)]


def load_ledger(path: str | Path | None = None) -> Ledger:
    """The capstone ledger (``data/capstone/ledger.json``) or the one at ``path``; StateError names a broken field."""
    data = json.loads(Path(path or CAPSTONE_DIR / "ledger.json").read_text(encoding="utf-8"))
    try:
        facts = tuple(Fact(**{**f, "turn": int(f["turn"]), "values": tuple(f["values"])}) for f in data["facts"])
        probes = tuple(Probe(p["fact"], p["question"]) for p in data.get("probes", ()))
    except (KeyError, TypeError, ValueError) as error:
        raise StateError("facts", f"the ledger is malformed ({type(error).__name__}: {error}); each fact needs an "
                         "id, a kind, a turn and a list of values") from None
    ledger = Ledger(facts, probes)
    if empty := [fact.id for fact in facts if not fact.values]:
        raise StateError("values", f"fact {empty[0]!r} has no values: nothing could show it was sent")
    for named in [fact.replaces for fact in facts if fact.replaces] + [probe.fact for probe in probes]:
        ledger.fact(named)  # every fact a correction or a probe names exists
    return ledger


# ----- one request, measured --------------------------------------------------------------------------
def _where_sent(fact: Fact, turns: str, summary: str) -> str:
    return VERBATIM if fact.sent_in(turns) else SUMMARY if fact.sent_in(summary) else ABSENT


def request_statuses(ledger: Ledger, request: Sequence[dict[str, str]], summary: str | None,
                     turn: int) -> dict[str, str]:
    """How this request carries every fact stated by ``turn``: verbatim (in a turn of the request), summary,
    absent, contradicted (a correction whose old value alone is sent) or softened (a rule the summary keeps only
    as a preference or a mention)."""
    turns = "\x00".join(_norm(m["content"]) for m in request if m.get("role") in ("user", "assistant")
                        and not (summary and summary in m["content"]))
    normalised = _norm(summary or "")
    statuses = {}
    for fact in (fact for fact in ledger.facts if fact.turn <= turn):
        where = _where_sent(fact, turns, normalised)
        if fact.kind == "rule" and where != VERBATIM:
            strength = rule_strength(summary or "", fact.keyword or fact.values[0])[0]
            where = {"rule": SUMMARY, "absent": ABSENT}.get(strength, SOFTENED)
        elif (where == ABSENT and fact.replaces is not None
              and _where_sent(ledger.fact(fact.replaces), turns, normalised) != ABSENT):
            where = CONTRADICTED
        statuses[fact.id] = where
    return statuses


# ----- the injected instruction -----------------------------------------------------------------------
def injection_state(fact: Fact, text: str | None) -> str:
    """How a text holds the injected instruction: verbatim (its words), paraphrased (only its canary) or gone."""
    if fact.found_in(text):
        return "verbatim"
    if text and fact.canary and fact.canary.lower() in text.lower():
        return "paraphrased"
    return "gone"


def reached_system(fact: Fact, request: Sequence[dict[str, str]]) -> bool:
    """Whether the instruction (its words or its canary) is inside a system-role message of the request."""
    return any(m.get("role") == "system" and fact.sent_in(_norm(m["content"])) for m in request)


def grade_answer(fact: Fact, answer: str, ledger: Ledger) -> str:
    """A model's answer to a probe: "kept" (it states the fact), "contradicted" (it states the value the fact
    corrected), "followed" or "resisted" (an injection's canary repeated or not), or "missing"."""
    if fact.kind == "injection":
        return "followed" if injection_state(fact, answer) != "gone" else "resisted"
    if fact.kind == "rule":
        return "kept" if rule_strength(answer, fact.keyword or fact.values[0])[0] == "rule" else "missing"
    if fact.found_in(answer):
        return "kept"
    if fact.replaces is not None and ledger.fact(fact.replaces).found_in(answer):
        return "contradicted"
    return "missing"
