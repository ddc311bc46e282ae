"""Exercise 7.1 (notebook 07): the memory and settings that keep every planted fact at the lowest cost; one
bounded replay of the answer, then of the few candidate settings it is compared with."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from helpers.base.bounded import TimedOut, run_bounded
from helpers.grading.runner import CORRECT, NOT_DONE, WRONG, Feedback, show
from helpers.measure.ledger import Ledger
from helpers.measure.transcript import FULL_BUFFER, MemoryFactory, StrategyRun, Transcript, replay, strategies
from helpers.memory.registry import KINDS
from helpers.memory.types import SettingError

EXERCISE = "7.1"
SECONDS_PER_RUN = 30.0
Spec = tuple[str, dict[str, Any]]


def candidates(transcript: Transcript) -> dict[str, Spec]:
    """The settings an answer is compared with: the lessons', then each kind keeping twice and four times as much."""
    chosen = dict(strategies(transcript))
    n = len(transcript)
    for scale in (2, 4):
        chosen[f"summary memory x{scale}"] = ("summary memory", {"max_turns_before_summary": min(4 * scale, n),
                                                                  "turns_to_keep_verbatim": min(2 * scale, n - 1)})
        chosen[f"summary buffer memory x{scale}"] = ("summary buffer memory", {"max_buffer_tokens": 600 * scale})
        chosen[f"sliding window x{scale}"] = ("sliding window", {"window_turns": min(4 * scale, n)})
    return {name: spec for name, spec in chosen.items() if spec[0] in KINDS}


def missing_facts(run: StrategyRun) -> list[str]:
    """The wanted facts the last request does not carry, each with how it was sent ("absent", "contradicted")."""
    last = run.last
    return [f"{fact.id} ({last.statuses[fact.id]})" for fact in run.ledger.wanted(last.turn)
            if last.statuses.get(fact.id) not in ("verbatim", "summary")]


def _wrong(message: str) -> Feedback:
    return Feedback(EXERCISE, WRONG, message)


def judge_cheapest(answer: Any, make: MemoryFactory, transcript: Transcript, ledger: Ledger,
                   compare: Sequence[Spec] | None = None) -> Feedback:
    """The verdict on ``answer = (kind, settings)``: every wanted fact sent at the last turn, for less than the full
    buffer, and no candidate that also keeps every fact costs less (``candidates()`` unless ``compare`` gives them)."""
    def run(memory: Any, label: str) -> StrategyRun:
        return run_bounded(replay, memory, transcript, ledger, label, seconds=SECONDS_PER_RUN)

    if answer is Ellipsis or answer is None:
        return Feedback(EXERCISE, NOT_DONE, "replace the ... with (kind, settings), then run this cell again.")
    if not (isinstance(answer, tuple) and len(answer) == 2 and isinstance(answer[0], str)
            and isinstance(answer[1], dict)):
        return _wrong("the answer must be a pair (kind, settings), such as ('summary memory', "
                      f"{{'max_turns_before_summary': 8, 'turns_to_keep_verbatim': 4}}); got {answer!r}")
    kind, settings = answer
    if kind not in KINDS:
        return _wrong(f"{kind!r} is not a memory kind; the kinds are {', '.join(map(repr, KINDS))} (the full buffer "
                      "is a sliding window as long as the conversation)")
    try:
        memory = make(kind, dict(settings))
    except (SettingError, TypeError) as error:
        return _wrong(f"the {kind} refused these settings: {error}")
    try:
        mine = run(memory, kind)
    except TimedOut:
        return _wrong(f"the run took more than {SECONDS_PER_RUN:g} seconds, so the check stopped it")
    cost = mine.bill.total
    if missing_facts(mine):
        return _wrong(f"at turn {mine.last.turn} the request does not carry {', '.join(missing_facts(mine))}; look "
                      "at where that fact was stated and what the memory kept of that turn by then")
    full = run(make("sliding window", {"window_turns": len(transcript)}), FULL_BUFFER)
    if cost >= full.bill.total:
        return _wrong(f"every fact survives, but for {cost:,} tokens, no less than the {FULL_BUFFER}'s "
                      f"{full.bill.total:,}: which turns can leave the request without taking a fact with them, and "
                      "when?")
    others = list(compare) if compare is not None else list(candidates(transcript).values())
    cheaper = []
    for other_kind, other_settings in others:
        try:
            other = run(make(other_kind, other_settings), other_kind)
        except TimedOut:
            continue
        if not missing_facts(other) and other.bill.total < cost:
            cheaper.append(other.bill.total)
    if cheaper:
        return _wrong(f"every fact survives, at {cost:,} tokens, but another setting the check tried keeps them all "
                      f"for {min(cheaper):,}: what does each turn pay for that no fact needs?")
    saved = full.bill.total - cost
    return Feedback(EXERCISE, CORRECT, f"{mine.label()} keeps every planted fact to turn {mine.last.turn} for "
                    f"{cost:,} tokens ({mine.bill.summariser_calls} summariser calls): {saved:,} fewer than the "
                    f"{FULL_BUFFER} ({saved / full.bill.total:.1%}), and none of the {len(others)} other settings the "
                    "check tried keeps them all for less. Compare that saving with what the lessons' settings save by "
                    "losing facts.")


def check_cheapest(answer: Any, make: MemoryFactory, transcript: Transcript, ledger: Ledger) -> Feedback:
    """Print and return the verdict on exercise 7.1."""
    return show(judge_cheapest(answer, make, transcript, ledger))
