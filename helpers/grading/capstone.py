"""Exercise 7.1 (notebook 07): choose the memory and its settings so that every planted fact survives the
long conversation, at the lowest cost. The check is bounded: one replay of the answer, then the few
candidate settings it compares with, each under a time limit.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from helpers.base.bounded import TimedOut, run_bounded
from helpers.grading.verdict import CORRECT, NOT_DONE, WRONG, Feedback, is_unanswered, show
from helpers.measure.ledger import Ledger
from helpers.measure.transcript import FULL_BUFFER, MemoryFactory, StrategyRun, Transcript, replay, strategies
from helpers.memory.registry import KINDS
from helpers.memory.types import SettingError

EXERCISE = "7.1"
SECONDS_PER_RUN = 30.0


def candidates(transcript: Transcript) -> dict[str, tuple[str, dict[str, Any]]]:
    """The settings the check compares an answer with: the lessons' settings, then each kind with twice and four
    times as much kept word for word (a window as long as the conversation is the full buffer)."""
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


def _answer_spec(answer: Any) -> tuple[str, dict[str, Any]] | Feedback:
    if (not isinstance(answer, tuple) or len(answer) != 2 or not isinstance(answer[0], str)
            or not isinstance(answer[1], dict)):
        return Feedback(EXERCISE, WRONG, f"the answer must be a pair (kind, settings), such as ('summary memory', "
                        f"{{'max_turns_before_summary': 8, 'turns_to_keep_verbatim': 4}}); got {answer!r}")
    if answer[0] not in KINDS:
        return Feedback(EXERCISE, WRONG, f"{answer[0]!r} is not a memory kind; the kinds are "
                        f"{', '.join(map(repr, KINDS))} (the full buffer is a sliding window as long as the "
                        "conversation)")
    return answer[0], dict(answer[1])


def judge_cheapest(answer: Any, make: MemoryFactory, transcript: Transcript, ledger: Ledger,
                   compare: Sequence[tuple[str, dict[str, Any]]] | None = None) -> Feedback:
    """The verdict on ``answer = (kind, settings)``: every wanted fact sent at the last turn, for less than the full
    buffer, and no candidate that also keeps every fact costs less (``candidates()`` unless ``compare`` gives them)."""
    if is_unanswered(answer):
        return Feedback(EXERCISE, NOT_DONE, "replace the ... with (kind, settings), then run this cell again.")
    spec = _answer_spec(answer)
    if isinstance(spec, Feedback):
        return spec
    kind, settings = spec
    try:
        memory = make(kind, settings)
    except (SettingError, TypeError) as error:
        return Feedback(EXERCISE, WRONG, f"the {kind} refused these settings: {error}")
    try:
        run = run_bounded(replay, memory, transcript, ledger, kind, seconds=SECONDS_PER_RUN)
    except TimedOut:
        return Feedback(EXERCISE, WRONG, f"the run took more than {SECONDS_PER_RUN:g} seconds, so the check stopped it")
    missing = missing_facts(run)
    if missing:
        return Feedback(EXERCISE, WRONG, f"at turn {run.last.turn} the request does not carry {', '.join(missing)}; "
                        "look at where that fact was stated and what the memory kept of that turn by then")
    full = run_bounded(replay, make("sliding window", {"window_turns": len(transcript)}), transcript, ledger,
                       FULL_BUFFER, seconds=SECONDS_PER_RUN)
    if run.bill.total >= full.bill.total:
        return Feedback(EXERCISE, WRONG, f"every fact survives, but for {run.bill.total:,} tokens, no less than the "
                        f"{FULL_BUFFER}'s {full.bill.total:,}: which turns can leave the request without taking a "
                        "fact with them, and when?")
    others = list(compare) if compare is not None else list(candidates(transcript).values())
    cheaper = []
    for other_kind, other_settings in others:
        try:
            other = run_bounded(replay, make(other_kind, other_settings), transcript, ledger, other_kind,
                                seconds=SECONDS_PER_RUN)
        except TimedOut:
            continue
        if not missing_facts(other) and other.bill.total < run.bill.total:
            cheaper.append(other.bill.total)
    if cheaper:
        return Feedback(EXERCISE, WRONG, f"every fact survives, at {run.bill.total:,} tokens, but another setting the "
                        f"check tried keeps them all for {min(cheaper):,}: what does each turn pay for that no "
                        "fact needs?")
    saved = full.bill.total - run.bill.total
    return Feedback(EXERCISE, CORRECT, f"{run.label()} keeps every planted fact to turn {run.last.turn} for "
                    f"{run.bill.total:,} tokens ({run.bill.summariser_calls} summariser calls): {saved:,} fewer than "
                    f"the {FULL_BUFFER} ({saved / full.bill.total:.1%}), and none of the {len(others)} other settings "
                    "the check tried keeps them all for less. Compare that saving with what the lessons' settings "
                    "save by losing facts.")


def check_cheapest(answer: Any, make: MemoryFactory, transcript: Transcript, ledger: Ledger) -> Feedback:
    """Print and return the verdict on exercise 7.1."""
    return show(judge_cheapest(answer, make, transcript, ledger))
