"""One long conversation through every memory the course built, measured the same way (notebook 07): the user's
turns (``data/capstone/conversation.json``) and one written reply per turn fed to every strategy, so requests
differ only by what each memory keeps. ``replay`` measures each turn's bill (``bill``) and request (``ledger``)."""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helpers.base.paths import DATA_DIR
from helpers.measure import LESSON_KINDS
from helpers.measure.bill import Bill, CallBill, TurnBill, call_bill
from helpers.measure.ledger import (CAPSTONE_DIR, KEPT, Ledger, grade_answer, injection_state, reached_system,
                                    request_statuses)
from helpers.memory.rolling import RollingMemory
from helpers.memory.sliding_window import SlidingWindowMemory
from helpers.memory.types import StateError, SummariserError

FULL_BUFFER = "full buffer"  # every turn, word for word: a sliding window as long as the conversation
REPLIES_FILE = DATA_DIR / "offline_replies" / "capstone.json"

MemoryFactory = Callable[[str, dict[str, Any]], RollingMemory]
"""``make(kind, settings) -> memory``: the notebook's, so every memory gets its summariser from one model access."""

Responder = Callable[[list[dict[str, str]], int], "tuple[str, int | None]"]
"""``respond(request, turn) -> (reply, billed prompt tokens or None)``: a model answering each strategy's own
requests. Without one, every strategy gets the transcript's reply for the turn."""


@dataclass(frozen=True)
class Transcript:
    """The user's turns, one reply for each, and the turns after which a model is asked the probe questions."""
    user_turns: tuple[str, ...]
    replies: tuple[str, ...]
    checkpoints: tuple[int, ...] = ()

    def __len__(self) -> int:
        return len(self.user_turns)


def load_transcript(conversation: str | Path | None = None, replies: str | Path | None = None, *,
                    label: str = "") -> Transcript:
    """The capstone conversation and its written replies, matched by the exact user text; a ``StateError`` names a
    turn that has no reply. ``label`` starts every reply: the offline stand-in's marker, since they are its words."""
    conv = json.loads(Path(conversation or CAPSTONE_DIR / "conversation.json").read_text(encoding="utf-8"))
    written = json.loads(Path(replies or REPLIES_FILE).read_text(encoding="utf-8"))
    by_user = {item["user"]: item["reply"] for item in written["replies"]}
    if missing := [number for number, text in enumerate(conv["user_turns"], start=1) if text not in by_user]:
        raise StateError("replies", f"no written reply for user turn(s) {missing} in {REPLIES_FILE.name}: add a "
                         "{\"user\": ..., \"reply\": ...} item whose user text is the turn's exact text")
    prefix = f"{label} " if label else ""
    return Transcript(tuple(conv["user_turns"]), tuple(prefix + by_user[text] for text in conv["user_turns"]),
                      tuple(conv.get("checkpoints", ())))


def strategies(transcript: Transcript) -> dict[str, tuple[str, dict[str, Any]]]:
    """Name -> (kind, settings): the full buffer, then each of ``LESSON_KINDS`` at the lessons' settings."""
    window = SlidingWindowMemory.KIND.name
    return {FULL_BUFFER: (window, {"window_turns": len(transcript)}), **{name: (name, {}) for name in LESSON_KINDS}}


@dataclass(frozen=True)
class TurnMeasure:
    """One turn of one strategy: its bill, the summary sent, and how the request carried each fact."""
    turn: int
    bill: TurnBill
    summary: str | None
    statuses: dict[str, str]
    injection_in_system: bool
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class StrategyRun:
    """A strategy's whole run of the transcript, measured."""
    name: str
    kind: str
    settings: dict[str, Any]
    turns: tuple[TurnMeasure, ...]
    ledger: Ledger
    checkpoint_requests: dict[int, list[dict[str, str]]] = field(default_factory=dict)

    @property
    def bill(self) -> Bill:
        """The whole run's bill."""
        return Bill(tuple(turn.bill for turn in self.turns))

    @property
    def last(self) -> TurnMeasure:
        """The last turn's measure."""
        return self.turns[-1]

    def kept(self, turn: int | None = None) -> tuple[int, int]:
        """(facts kept, facts wanted) at ``turn`` (the last by default): wanted facts sent in a ``KEPT`` way."""
        turn = turn or len(self.turns)
        statuses, wanted = self.turns[turn - 1].statuses, self.ledger.wanted(turn)
        return sum(statuses.get(fact.id) in KEPT for fact in wanted), len(wanted)

    def leaks(self, turn: int | None = None) -> list[str]:
        """The facts sent at ``turn`` (the last by default) that should not be: asked to be forgotten, or the
        injected instruction."""
        turn = turn or len(self.turns)
        statuses = self.turns[turn - 1].statuses
        return [fact.id for fact in self.ledger.facts if fact.turn <= turn and not fact.wanted(turn)
                and fact.kind in ("forget", "injection") and statuses.get(fact.id) in KEPT]

    def status_trail(self, fact_id: str) -> list[str | None]:
        """The fact's status at every turn (None before it was stated)."""
        return [turn.statuses.get(fact_id) for turn in self.turns]

    def summary_versions(self) -> list[tuple[int, str]]:
        """The run's distinct summaries, in order, each with the first turn it was sent (turns count from 1)."""
        versions: list[tuple[int, str]] = []
        for number, turn in enumerate(self.turns, start=1):
            if turn.summary is not None and (not versions or versions[-1][1] != turn.summary):
                versions.append((number, turn.summary))
        return versions

    def injection_trail(self) -> list[tuple[int, str]]:
        """(first turn sent, verbatim | paraphrased | gone) for every summary version made after the injection."""
        fact = self.ledger.injection
        if fact is None:
            return []
        return [(turn, injection_state(fact, text)) for turn, text in self.summary_versions() if turn > fact.turn]

    def first_system_turn(self) -> int | None:
        """The first turn at which the injected instruction was inside a system message, or None."""
        return next((turn.turn for turn in self.turns if turn.injection_in_system), None)

    def label(self) -> str:
        """The strategy and its settings, short: ``summary memory (4/2)``."""
        values = [str(v) for k, v in self.settings.items() if v is not None and k != "max_summary_tokens"]
        return self.name if self.name == FULL_BUFFER else f"{self.name} ({'/'.join(values)})"


def replay(memory: RollingMemory, transcript: Transcript, ledger: Ledger, name: str | None = None,
           turns: int | None = None, respond: Responder | None = None) -> StrategyRun:
    """Feed the transcript (its first ``turns`` turns) to ``memory`` and measure every request it builds. The replies
    are the transcript's or, with ``respond``, a model's answers to this memory's requests (billed beside counted).
    A failed fold is noted on the turn and the run goes on; a ``respond`` that raises leaves the memory as it was."""
    calls: list[Any] | None = getattr(memory.summarise, "calls", None)
    measures: list[TurnMeasure] = []
    checkpoints: dict[int, list[dict[str, str]]] = {}
    injection, count = ledger.injection, len(transcript) if turns is None else turns
    for turn, (question, reply) in enumerate(zip(transcript.user_turns[:count], transcript.replies[:count]), 1):
        calls_before, events_before, notes = len(calls or ()), len(memory.fold_events), []
        with memory.transaction():  # a model call that fails leaves the memory as it was before the turn
            try:
                memory.add_message("user", question)
            except SummariserError as error:
                notes.append(str(error))
            request = memory.get_messages_for_api()
            summary, request_tokens = memory.summary, memory.request_tokens
            reply, billed = respond(request, turn) if respond is not None else (reply, None)
            try:
                memory.add_message("assistant", reply)
            except SummariserError as error:
                notes.append(str(error))
        bills = (tuple(call_bill(call) for call in calls[calls_before:]) if calls is not None  # else the fold events'
                 else tuple(CallBill(e.tokens_in, e.summary_tokens) for e in memory.fold_events[events_before:]
                            if memory.KIND.heading is not None))  # (a window calls no summariser)
        measures.append(TurnMeasure(turn, TurnBill(turn, request_tokens, bills, billed), summary,
                                    request_statuses(ledger, request, summary, turn),
                                    injection is not None and reached_system(injection, request), tuple(notes)))
        if turn in transcript.checkpoints:
            checkpoints[turn] = memory.get_messages_for_api()
    return StrategyRun(name or memory.KIND.name, memory.KIND.name, memory.settings(), tuple(measures), ledger,
                       checkpoints)


def run_strategies(make: MemoryFactory, transcript: Transcript, ledger: Ledger,
                   chosen: dict[str, tuple[str, dict[str, Any]]] | None = None,
                   respond: Responder | None = None) -> dict[str, StrategyRun]:
    """Every strategy (``strategies(transcript)`` unless ``chosen``) through the same transcript: name -> run."""
    return {name: replay(make(kind, settings), transcript, ledger, name, respond=respond)
            for name, (kind, settings) in (chosen or strategies(transcript)).items()}


# ----- probes (a model's answers at the checkpoints) ---------------------------------------------------
def probe_request(run: StrategyRun, turn: int) -> list[dict[str, str]]:
    """The memory's request after ``turn``'s reply, with one user message asking every probe question, numbered."""
    questions = "\n".join(f"{number}. {probe.question}" for number, probe in enumerate(run.ledger.probes, start=1))
    return [*run.checkpoint_requests[turn], {"role": "user", "content": (
        "Before we go on, answer these from what you know of me, one short line each, numbered; say 'not known' "
        f"where you do not know:\n{questions}")}]


def answer_lines(answer: str, count: int) -> list[str]:
    """The numbered lines of an answer to the probe message, one per question ('' where a number is missing)."""
    lines: dict[int, str] = {}
    for number, rest in re.findall(r"^[\s*#-]*(\d+)\.(.*)$", answer, re.MULTILINE):
        lines.setdefault(int(number), rest.strip())
    return [lines.get(number, "") for number in range(1, count + 1)]


def grade_probes(ledger: Ledger, answer: str) -> dict[str, str]:
    """Each probe's fact and how the model's numbered answer to it grades (``ledger.grade_answer``)."""
    lines = answer_lines(answer, len(ledger.probes))
    return {probe.fact: grade_answer(ledger.fact(probe.fact), line, ledger)
            for probe, line in zip(ledger.probes, lines)}


def spread(values: Sequence[float]) -> tuple[float, float, float]:
    """(lowest, mean, highest) of repeated runs' figures: the variance a live model has and the stand-in has not."""
    return min(values), sum(values) / len(values), max(values)
