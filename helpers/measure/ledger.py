"""The ledger of planted facts (notebook 07) and how one request carries each: verbatim, in the summary, absent or
contradicted, found by their texts (case and spacing ignored); a rule read with notebook 03's ``rule_strength``."""
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from helpers.base.paths import DATA_DIR
from helpers.measure.drift import rule_strength
from helpers.memory.types import StateError

CAPSTONE_DIR = DATA_DIR / "capstone"
STATUSES = ("verbatim", "summary", "softened", "contradicted", "absent")  # softened: a rule kept as a preference
KEPT = ("verbatim", "summary")  # a fact counts as kept (a rule only as a rule) when it is sent in one of these ways


def normalise(text: str) -> str:
    """The text as facts are looked for in it: lower case, every run of white space one space."""
    return " ".join(text.lower().split())


@dataclass(frozen=True)
class Fact:
    """One planted fact: the turn the user stated it, its kind, the texts that count as sending it, the fact it
    corrects, the turns it is out of date or asked to be forgotten, a rule's keyword, an injection's canary word."""
    id: str
    kind: str
    turn: int
    values: tuple[str, ...]
    replaces: str | None = None
    replaced_at: int | None = None
    forget_at: int | None = None
    keyword: str | None = None
    canary: str | None = None

    def sent_in(self, normalised: str) -> bool:
        """Whether a normalised text carries one of the fact's values or its canary (a paraphrase is still sent)."""
        return any(normalise(mark) in normalised for mark in (*self.values, self.canary) if mark)

    def wanted(self, turn: int) -> bool:
        """Whether a good memory still sends this fact at ``turn``: stated, not replaced, forgotten or injected."""
        return self.kind != "injection" and self.turn <= turn and all(
            limit is None or turn < limit for limit in (self.replaced_at, self.forget_at))


class Probe(NamedTuple):
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
        if found := [fact for fact in self.facts if fact.id == fact_id]:
            return found[0]
        raise StateError("fact", f"no fact {fact_id!r} in the ledger; its facts are "
                         f"{', '.join(f.id for f in self.facts)}")

    def wanted(self, turn: int) -> list[Fact]:
        """The facts a memory should still send at ``turn``."""
        return [fact for fact in self.facts if fact.wanted(turn)]


def load_ledger() -> Ledger:
    """The capstone ledger (``data/capstone/ledger.json``)."""
    data = json.loads((CAPSTONE_DIR / "ledger.json").read_text(encoding="utf-8"))
    ledger = Ledger(tuple(Fact(**{**fact, "values": tuple(fact["values"])}) for fact in data["facts"]),
                    tuple(Probe(probe["fact"], probe["question"]) for probe in data.get("probes", ())))
    for named in [fact.replaces for fact in ledger.facts if fact.replaces] + [probe.fact for probe in ledger.probes]:
        ledger.fact(named)  # every fact a correction or a probe names exists, or StateError says which do
    return ledger


def request_statuses(ledger: Ledger, request: Sequence[dict], summary: str | None, turn: int) -> dict[str, str]:
    """How this request carries every fact stated by ``turn``: verbatim, summary, absent, contradicted (a correction
    whose old value alone is sent) or softened (a rule the summary keeps only as a preference or a mention)."""
    turns = normalise("\x00".join(m["content"] for m in request if m.get("role") in ("user", "assistant")
                                   and not (summary and summary in m["content"])))
    normalised = normalise(summary or "")

    def where(fact: Fact) -> str:
        return "verbatim" if fact.sent_in(turns) else "summary" if fact.sent_in(normalised) else "absent"
    statuses = {}
    for fact in (fact for fact in ledger.facts if fact.turn <= turn):
        status = where(fact)
        if fact.kind == "rule" and status != "verbatim":
            strength = rule_strength(summary or "", fact.keyword or fact.values[0])[0]
            status = {"rule": "summary", "absent": "absent"}.get(strength, "softened")
        elif status == "absent" and fact.replaces is not None and where(ledger.fact(fact.replaces)) != "absent":
            status = "contradicted"
        statuses[fact.id] = status
    return statuses


def grade_probes(ledger: Ledger, answer: str) -> dict[str, str]:
    """Each probe's fact and how the line of a model's numbered answer to it grades: "kept", "contradicted" (the value
    the fact corrected), "followed" or "resisted" (an injection's words or canary repeated or not), or "missing"."""
    lines: dict[int, str] = {}
    for number, rest in re.findall(r"^[\s*#-]*(\d+)\.(.*)$", answer, re.MULTILINE):
        lines.setdefault(int(number), rest)
    grades = {}
    for number, probe in enumerate(ledger.probes, start=1):
        fact, said = ledger.fact(probe.fact), normalise(lines.get(number, ""))
        if fact.kind == "injection":
            grades[fact.id] = "followed" if fact.sent_in(said) else "resisted"
        elif fact.kind == "rule":
            grades[fact.id] = "kept" if rule_strength(said, fact.keyword or fact.values[0])[0] == "rule" else "missing"
        else:
            old = ledger.fact(fact.replaces) if fact.replaces else fact  # no old value: "missing" if not kept
            grades[fact.id] = "kept" if fact.sent_in(said) else "contradicted" if old.sent_in(said) else "missing"
    return grades
