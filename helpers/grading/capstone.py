"""Exercise 7.1 (notebook 07): a memory and settings that keep every planted fact, near the cheapest that does. The
check replays the answer, then searches the lessons' three kinds for the cheapest setting that keeps every fact:
summary memory from the latest threshold down, turns kept from as many below it as the cheapest setting so far
folds, down until three in a row lose a fact, until two thresholds keep none; summary buffer memory folding 2 or 4
messages, and the sliding window: the smallest budget (to 100 tokens) or window that keeps them all, by halving.
An answer must save at least ``MARGIN`` of what the best setting found saves against the full buffer."""
from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from helpers.base.bounded import TimedOut, run_bounded
from helpers.grading.runner import CORRECT, NOT_DONE, WRONG, Feedback, show
from helpers.measure.ledger import Ledger
from helpers.measure.transcript import FULL_BUFFER, MemoryFactory, StrategyRun, Transcript, replay
from helpers.memory.registry import KINDS
from helpers.memory.types import SettingError

MARGIN = 0.5  # the share of the best saving an answer must reach
SEARCH_SECONDS = 60.0  # offline the search takes a few seconds; with a model, each replay calls it


def missing_facts(run: StrategyRun) -> list[str]:
    """The wanted facts the last request does not carry, each with how it was sent ("absent", "contradicted")."""
    return [f"{fact.id} ({run.last.statuses.get(fact.id)})" for fact in run.ledger.wanted(run.last.turn)
            if run.last.statuses.get(fact.id) not in ("verbatim", "summary")]


@functools.lru_cache(maxsize=8)
def full_buffer(make: MemoryFactory, transcript: Transcript, ledger: Ledger) -> StrategyRun:
    """The run of the full buffer (a sliding window as long as the conversation), replayed once a kernel."""
    return replay(make("sliding window", {"window_turns": len(transcript)}), transcript, ledger, FULL_BUFFER)


@functools.lru_cache(maxsize=8)
def search(make: MemoryFactory, transcript: Transcript, ledger: Ledger) -> tuple[int, int]:
    """(the cheapest bill of a setting that keeps every fact, settings tried), as the module says; once a kernel."""
    ends, n = time.monotonic() + SEARCH_SECONDS, len(transcript)
    full = full_buffer(make, transcript, ledger)
    costs = {repr(("sliding window", {"window_turns": n})): None if missing_facts(full) else full.bill.total}

    def cost(kind: str, **settings: Any) -> int | None:
        """The bill of a setting's run if it keeps every fact (None: it loses one, is refused or runs out of time)."""
        key = repr((kind, settings))
        if key not in costs and time.monotonic() < ends:
            try:
                run = run_bounded(replay, make(kind, settings), transcript, ledger, seconds=ends - time.monotonic())
                costs[key] = None if missing_facts(run) else run.bill.total
            except (SettingError, TypeError, TimedOut):
                costs[key] = None
        return costs.get(key)

    def smallest(keeps: Callable[[int], int | None], low: int, high: int) -> None:
        while low < high:  # the smallest value that keeps every fact, by halving (``high`` keeps them)
            middle = (low + high) // 2
            low, high = (low, middle) if keeps(middle) else (middle + 1, high)
        keeps(high)

    smallest(lambda w: cost("sliding window", window_turns=w), 1, n)
    largest = max(turn.request_tokens for turn in full.turns) // 100 + 1
    for compress in (2, 4):  # budgets in steps of 100 tokens, up to the full buffer's largest request
        smallest(lambda b: cost("summary buffer memory", max_buffer_tokens=b * 100,
                                messages_to_compress_on_overflow=compress), 1, largest)
    dry, fold = 0, 1  # fold: turns folded by the cheapest setting so far; higher keeps fold fewer and cost more
    for threshold in range(n - 1, 1, -1):
        misses, kept = 0, False
        for keep in range(threshold - fold, 0, -1):
            found = cost("summary memory", max_turns_before_summary=threshold, turns_to_keep_verbatim=keep)
            misses, kept = (misses + 1, kept) if found is None else (0, True)
            if found is not None and found <= min(v for v in costs.values() if v is not None):
                fold = threshold - keep
            if misses == 3:
                break
        dry = 0 if kept else dry + 1
        if dry == 2 or time.monotonic() > ends:
            break
    return min((value for value in costs.values() if value is not None), default=0), len(costs)


def _wrong(message: str, hint: str) -> Feedback:
    return Feedback("7.1", WRONG, message, hint)


def judge_cheapest(answer: Any, make: MemoryFactory, transcript: Transcript, ledger: Ledger) -> Feedback:
    """The verdict on ``answer = (kind, settings)``: every wanted fact sent at the last turn, for less than the full
    buffer, saving at least ``MARGIN`` of what the cheapest setting the check's search finds saves."""
    if answer is Ellipsis or answer is None:
        return Feedback("7.1", NOT_DONE, "replace the ... with (kind, settings), then run this cell again.")
    pair = answer if isinstance(answer, (tuple, list)) and len(answer) == 2 else ()
    kinds, settings = ([item for item in pair if isinstance(item, cls)] for cls in (str, dict))
    if len(kinds) != 1 or len(settings) != 1:  # a pair in either order, as a tuple or a list
        return _wrong("the answer is a pair (kind, settings), such as ('summary memory', {'max_turns_before_summary': "
                      f"8, 'turns_to_keep_verbatim': 4}}); got {answer!r}", "a kind's name in quotes, then a dict of "
                      "its settings by name, in brackets")
    kind, settings = kinds[0].strip().lower().replace("_", " "), settings[0]
    if kind not in KINDS:
        return _wrong(f"{kind!r} is not a memory kind; the kinds are {', '.join(map(repr, KINDS))} (the full buffer "
                      "is a sliding window as long as the conversation)", "copy a kind's name from the table above")
    try:
        mine = run_bounded(replay, make(kind, dict(settings)), transcript, ledger, kind, seconds=SEARCH_SECONDS)
    except (SettingError, TypeError) as error:
        return _wrong(f"the {kind} refused these settings: {error}", "the sliders above show each kind's settings")
    except TimedOut:
        return _wrong(f"the run took more than {SEARCH_SECONDS:g} seconds, so the check stopped it", "try the setting "
                      "with the sliders first")
    if lost := missing_facts(mine):
        return _wrong(f"at turn {mine.last.turn} the request does not carry {', '.join(lost)}; look at where that "
                      "fact was stated and what the memory kept of that turn by then", "the ledger table shows each "
                      "fact's turn: which turns must still be sent word for word, or fit in the summary?")
    full = full_buffer(make, transcript, ledger)
    cost, whole = mine.bill.total, full.bill.total
    if cost >= whole:
        return _wrong(f"every fact survives, but for {cost:,} tokens, no less than the {FULL_BUFFER}'s {whole:,}: "
                      "which turns can leave the request without taking a fact with them, and when?",
                      "a fold late in the conversation, of the turns whose facts fit in the summary, saves tokens on "
                      "every request after it")
    best, tried = search(make, transcript, ledger)
    saved, most = whole - cost, whole - min(best or cost, cost)
    said = (f"{mine.label()} keeps every planted fact to turn {mine.last.turn} for {cost:,} tokens "
            f"({mine.bill.summariser_calls} summariser calls), {saved:,} fewer than the {FULL_BUFFER} "
            f"({saved / whole:.1%}); the cheapest of the {tried} settings the check's search tried saves {most:,} "
            f"({most / whole:.1%})")
    if saved < MARGIN * most:
        return _wrong(f"{said}: an answer must save at least {MARGIN:.0%} of that.", "each turn folded early saves "
                      "its tokens on every later request: which turns' facts fit in one summary, and how late can "
                      "that fold come and still save?")
    return Feedback("7.1", CORRECT, f"{said}: within the margin (at least {MARGIN:.0%} of it). Compare that saving "
                    "with what the lessons' settings save by losing facts.")


def check_cheapest(answer: Any, make: MemoryFactory, transcript: Transcript, ledger: Ledger, *,
                   hint: bool | None = None) -> Feedback:
    """Print and return the verdict on exercise 7.1 (the hint comes on a second failure, or with ``hint=True``)."""
    return show(judge_cheapest(answer, make, transcript, ledger), hint, "check_cheapest", "CHOICE, make, transcript, "
                "ledger")
