"""The lines the notebooks print: turns and folds, the schedule, budget and drift tables, the audit, a request."""
from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Mapping, Sequence

from helpers.base.tokens import count_tokens
from helpers.measure.audit import audit_summary, cut_figure
from helpers.measure.drift import CycleMeasure
from helpers.memory.budget import BudgetTable
from helpers.memory.registry import kind_named
from helpers.memory.schedule import Schedule
from helpers.memory.turn_record import TurnRecord
from helpers.memory.types import FoldEvent


def turn_line(record: TurnRecord) -> str:
    """The turn line in the format of the record's memory kind, then what applies: messages a server dropped, a reply
    cut at the token limit, a budget overrun."""
    warnings = []
    if record.not_received:
        warnings.append(f"NOT RECEIVED BY THE MODEL: {', '.join(record.not_received)}")
    if record.reply_cut:
        warnings.append(f"REPLY CUT at the token limit ({record.completion_tokens} tokens)")
    if record.over_budget_after_reply and not record.snapshot.over_budget:
        after = record.after_reply
        warnings.append(f"the reply took the buffer to {after.verbatim_tokens}/{after.budget}: "
                        "OVER BUDGET until the next overflow")
    return kind_named(record.kind).KIND.turn_line(record) + "".join(f" | {w}" for w in warnings)


def fold_line(event: FoldEvent, kind: str) -> str:
    """A fold as the memory kind ``kind`` prints it (``[SUMMARISE] ...``, ``[COMPRESS] ...``, ``[DROP] ...``)."""
    return kind_named(kind).KIND.fold_line(event)


def turn_lines(record: TurnRecord) -> list[str]:
    """Everything a turn prints, in the order it happened: folds, the turn line, folds, notes."""
    return ([fold_line(e, record.kind) for e in record.folds_before] + [turn_line(record)]
            + [fold_line(e, record.kind) for e in record.folds_after] + [f"  [NOTE] {note}" for note in record.notes])


def turn_text(record: TurnRecord) -> str:
    return "\n".join(turn_lines(record))


def schedule_text(schedule: Schedule) -> str:
    """The whole schedule as the lesson prints it: heading, a row per turn, the number of summariser calls."""
    heading = (f"Summarise after {schedule.max_turns_before_summary} turns, "
               f"keep {schedule.turns_to_keep_verbatim} verbatim:")
    rows = [f" turn {row.turn:>2} request: {row.summary_label:<25} + verbatim turns {list(row.verbatim_turns)}"
            for row in schedule.rows]
    turns = schedule.total_turns
    footer = f" summariser calls in {turns} turn{'' if turns == 1 else 's'}: {schedule.calls}"
    return "\n".join([heading, *rows, footer])


def budget_table_text(table: BudgetTable) -> str:
    """Lesson 4's table: budget, overflows, largest buffer."""
    lines = [f"{'Budget':>6} | {'Overflows':>9} | {'Largest buffer':>14}"]
    lines += [f"{r.max_buffer_tokens:>6} | {r.overflows:>9} | {r.peak_buffer_tokens:>14}" for r in table.results]
    return "\n".join(lines)


def cycle_line(cycle: CycleMeasure) -> str:
    """The lesson's line: ``Cycle 1: batch 82 tokens | summary 58 tokens | mentions equity: True``."""
    return (f"Cycle {cycle.cycle}: batch {cycle.batch_tokens} tokens | summary {cycle.summary_tokens} tokens | "
            f"mentions equity: {cycle.mentions_keyword}")


def comparison_table(runs: Mapping[str, Sequence[CycleMeasure]]) -> str:
    """Runs side by side per cycle: summary tokens, words, keyword check, rule or preference."""
    width = max([3, *map(len, runs)])
    header = f"{'run':<{width}} | cycle | batch | summary | words | mentions | survives as"
    lines = [header, "-" * len(header)]
    for label, cycles in runs.items():
        for c in cycles:
            lines.append(f"{label:<{width}} | {c.cycle:>5} | {c.batch_tokens:>5} | {c.summary_tokens:>7} | "
                         f"{c.words:>5} | {str(c.mentions_keyword):>8} | {c.strength}")
    return "\n".join(lines)


def audit_report(summary: str, archive: Sequence[dict[str, str]]) -> str:
    """The audit as printable lines: a heading, then a line per statement no user message makes (and if a reply did)."""
    claims = audit_summary(summary, archive)
    roles = Counter(m["role"] for m in archive)
    lines = [f"Figures and negations in the summary that none of the {roles['user']} user messages states: "
             f"{len(claims)}"]
    for claim in claims:
        where = ("in no user message; an assistant reply said it" if claim.source == "assistant reply"
                 else "in no user message, and in no reply either" if roles["assistant"]
                 else "in no user message (the replies were not available to check)")
        lines.append(f"  {claim.kind:<8} {claim.text!r}: {where}")
    if fragment := cut_figure(summary):
        lines.append(f"  (the summary ends mid-figure, {fragment!r}: it was cut, and the fragment is not checked)")
    return "\n".join(lines)


def request_text(messages: Sequence[Mapping[str, str]], *, known: Mapping[str, str] | None = None,
                 width: int = 100, first_line_over: int | None = None) -> str:
    """One block per message: ``[n] role (tokens)`` then its text, indented and wrapped. ``known`` maps a text
    already shown (the system prompt) to a label printed instead; a message of more than ``first_line_over``
    tokens is shown by its first line and "[...]"."""
    blocks = []
    for number, message in enumerate(messages, start=1):
        content = message["content"]
        tokens = count_tokens(content)
        head = f"[{number}] {message['role']} ({tokens} tokens)"
        if content in (known or {}):
            blocks.append(f"{head}: {known[content]}")
            continue
        if first_line_over is not None and tokens > first_line_over:
            first = content.strip().split("\n", 1)[0]
            content = first if first == content.strip() else f"{first} [...]"
        lines = [line for paragraph in content.split("\n") for line in
                 textwrap.wrap(paragraph, width - 4, break_long_words=False, break_on_hyphens=False) or [""]]
        blocks.append(head + "\n" + "\n".join("    " + line if line else "" for line in lines))
    return "\n".join(blocks)
