"""Notebook 07: the same user turns and replies fed to every memory strategy, each turn's request measured (o200k_base
counts, and what an endpoint billed beside them when a model answers) and read against the ledger of planted facts."""
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from helpers.base.paths import DATA_DIR
from helpers.base.tokens import count_tokens
from helpers.measure import LESSON_KINDS
from helpers.measure.ledger import CAPSTONE_DIR, KEPT, Ledger, request_statuses
from helpers.memory.sliding_window import SlidingWindowMemory
from helpers.memory.types import StateError, SummariserError

FULL_BUFFER = "full buffer"  # every turn, word for word: a sliding window as long as the conversation
REPLIES_FILE = DATA_DIR / "offline_replies" / "capstone.json"
MemoryFactory = Callable[[str, dict[str, Any]], Any]  # make(kind, settings) -> memory: the notebook's
Responder = Callable[[list[dict[str, str]], int], tuple[str, int | None]]  # (request, turn) -> (reply, billed)


def request_tokens(messages: Sequence[dict[str, str]]) -> int:
    """The o200k_base tokens of a request's texts."""
    return sum(count_tokens(message["content"]) for message in messages)


class CallBill(NamedTuple):
    """One summariser call: the tokens it sent and the tokens it wrote."""
    prompt_tokens: int
    output_tokens: int


class Bill(NamedTuple):
    """A strategy's whole bill: its chat requests' tokens, its summariser calls, and the one total of both."""
    request_tokens: int
    calls: list[CallBill]  # every summariser call, in order
    total: int  # every request plus every summariser call, prompt and output
    summariser_calls: int


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
    return {FULL_BUFFER: (SlidingWindowMemory.KIND.name, {"window_turns": len(transcript)}),
            **{name: (name, {}) for name in LESSON_KINDS}}


@dataclass(frozen=True)
class TurnMeasure:
    """One turn of one strategy: request tokens (and billed, with a model), summariser calls, summary, facts' status."""
    turn: int
    request_tokens: int
    calls: tuple[CallBill, ...] = ()
    summary: str | None = None
    statuses: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()  # why a fold failed (nothing lost: the memory folds later)
    billed_request: int | None = None

    @property
    def tokens(self) -> int:
        """What the turn cost: the request plus every summariser call's prompt and output."""
        return self.request_tokens + sum(map(sum, self.calls))


@dataclass(frozen=True)
class StrategyRun:
    """A strategy's run of the transcript, measured; ``checkpoint_requests``: its request after a checkpoint's reply."""
    name: str
    settings: dict[str, Any]
    turns: tuple[TurnMeasure, ...]
    ledger: Ledger
    checkpoint_requests: dict[int, list[dict[str, str]]] = field(default_factory=dict)

    @property
    def bill(self) -> Bill:
        calls = [c for t in self.turns for c in t.calls]
        return Bill(sum(t.request_tokens for t in self.turns), calls, sum(t.tokens for t in self.turns), len(calls))

    @property
    def last(self) -> TurnMeasure:
        return self.turns[-1]

    def kept(self, turn: int | None = None) -> tuple[int, int]:
        """(facts kept, facts wanted) at ``turn`` (the last by default): wanted facts sent in a ``KEPT`` way."""
        turn = turn or len(self.turns)
        statuses, wanted = self.turns[turn - 1].statuses, self.ledger.wanted(turn)
        return sum(statuses.get(fact.id) in KEPT for fact in wanted), len(wanted)

    def leaks(self) -> list[str]:
        """What the last request sends that it should not: a fact asked to be forgotten, the planted instruction."""
        return [fact.id for fact in self.ledger.facts if fact.kind in ("forget", "injection")
                and not fact.wanted(len(self.turns)) and self.last.statuses.get(fact.id) in KEPT]

    def summary_versions(self) -> list[tuple[int, str]]:
        """The run's distinct summaries, in order, each with the first turn it was sent."""
        before = [None, *(turn.summary for turn in self.turns)]
        return [(turn.turn, turn.summary) for turn, old in zip(self.turns, before) if turn.summary not in (None, old)]

    def label(self) -> str:
        """The strategy and its settings, short: ``summary memory (4/2)``."""
        values = [str(v) for k, v in self.settings.items() if v is not None and k != "max_summary_tokens"]
        return self.name if self.name == FULL_BUFFER else f"{self.name} ({'/'.join(values)})"


def replay(memory: Any, transcript: Transcript, ledger: Ledger, name: str | None = None,
           respond: Responder | None = None) -> StrategyRun:
    """Feed the transcript to ``memory`` and measure every request; the replies are the transcript's or ``respond``'s
    (a model's). A failed fold is noted and the run goes on; a ``respond`` that raises leaves the turn undone."""
    calls: list[Any] | None = getattr(memory.summarise, "calls", None)  # a model summariser's record of its calls
    measures, checkpoints = [], {}
    for turn, (question, reply) in enumerate(zip(transcript.user_turns, transcript.replies), start=1):
        calls_before, events_before, notes = len(calls or ()), len(memory.fold_events), []
        with memory.transaction():
            _add(memory, "user", question, notes)
            request, summary, tokens = memory.get_messages_for_api(), memory.summary, memory.request_tokens
            reply, billed = respond(request, turn) if respond is not None else (reply, None)
            _add(memory, "assistant", reply, notes)
        bills = (tuple(CallBill(request_tokens(c.request), count_tokens(c.summary)) for c in calls[calls_before:])
                 if calls is not None else tuple(CallBill(e.tokens_in, e.summary_tokens)  # else the fold events'
                                                 for e in memory.fold_events[events_before:] if memory.KIND.heading))
        measures.append(TurnMeasure(turn, tokens, bills, summary, request_statuses(ledger, request, summary, turn),
                                    tuple(notes), billed))
        if turn in transcript.checkpoints:
            checkpoints[turn] = memory.get_messages_for_api()
    return StrategyRun(name or memory.KIND.name, memory.settings(), tuple(measures), ledger, checkpoints)


def _add(memory: Any, role: str, text: str, notes: list[str]) -> None:
    try:
        memory.add_message(role, text)
    except SummariserError as error:
        notes.append(str(error))


def run_strategies(make: MemoryFactory, transcript: Transcript, ledger: Ledger,
                   respond: Responder | None = None) -> dict[str, StrategyRun]:
    """Every strategy of ``strategies(transcript)`` through the same transcript: name -> run."""
    return {name: replay(make(kind, settings), transcript, ledger, name, respond=respond)
            for name, (kind, settings) in strategies(transcript).items()}


def probe_request(run: StrategyRun, turn: int) -> list[dict[str, str]]:
    """The memory's request after ``turn``'s reply, with one user message asking every probe question, numbered."""
    questions = "\n".join(f"{number}. {probe.question}" for number, probe in enumerate(run.ledger.probes, start=1))
    return [*run.checkpoint_requests[turn], {"role": "user", "content": (
        "Before we go on, answer these from what you know of me, one short line each, numbered; say 'not known' "
        f"where you do not know:\n{questions}")}]


def call_plan(runs: Mapping[str, StrategyRun], context_tokens: int, probe_tokens: int, repeats: int = 3) -> str:
    """What notebook 07 asks of a model, from a dry run of ``runs``: by default only what fits ``context_tokens``."""
    calls = [call.prompt_tokens for run in runs.values() for call in run.bill.calls]
    probes = {(run.name, turn): request_tokens(probe_request(run, turn))
              for run in runs.values() for turn in run.checkpoint_requests}
    fit = [size for size in probes.values() if size + probe_tokens <= context_tokens]
    out = dict.fromkeys(name for (name, _), size in probes.items() if size + probe_tokens > context_tokens)
    replies = sum(len(run.turns) for run in runs.values())
    full = 2 * len(calls) + len(probes) + replies + repeats * runs["summary memory"].bill.summariser_calls
    largest = max([*probes.values(), *calls, *(turn.request_tokens for run in runs.values() for turn in run.turns)])
    return (f"With a model, Run All makes {len(calls) + len(fit)} calls ({len(calls)} summariser calls, {len(fit)} "
            f"probes), none sending over {max(calls + fit):,} tokens;\n  not sent: the probes of the "
            f"{', '.join(out) or '-'}, over a {context_tokens:,}-token context with {probe_tokens} to write.\n"
            "FULL_MEASUREMENT = True: about "
            f"{full} calls, up to {largest:,} tokens a request: every probe, {replies} replies to each strategy's "
            f"own\n  requests, {repeats} repeats of summary memory, and the sliders and exercise 7.1 on the model.\n"
            "(o200k_base counts on a dry run with the stand-in's summaries: a model's may be longer, and a server's "
            "tokenizer\n  may count about a fifth more.)")
