"""The lines the notebooks print: turns and folds, the schedule, budget and drift tables, the audit, a request; and
the lessons' published ``openai/gpt-oss-120b`` runs (reference data, every heading says whose) in their format."""
from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Mapping, Sequence

from helpers.base.tokens import count_tokens
from helpers.lessons.data import lesson4, published_run
from helpers.measure.audit import audit_summary, cut_figure
from helpers.measure.drift import CycleMeasure
from helpers.memory.budget import BudgetTable
from helpers.memory.registry import kind_named
from helpers.memory.schedule import Schedule
from helpers.memory.summary import summarise_line, summary_memory_line
from helpers.memory.summary_buffer import compress_line
from helpers.memory.turn_record import TurnRecord
from helpers.memory.types import FoldEvent

LABEL = "the lesson's run of openai/gpt-oss-120b on Groq (reference data, not this notebook's run)"
HEADING = "From " + LABEL + ":"


def turn_line(record: TurnRecord) -> str:
    """The turn line in its memory kind's format, then its warnings (dropped messages, a cut reply, an overrun)."""
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
    rows = [f"{label:<{width}} | {c.cycle:>5} | {c.batch_tokens:>5} | {c.summary_tokens:>7} | {c.words:>5} | "
            f"{str(c.mentions_keyword):>8} | {c.strength}" for label, cycles in runs.items() for c in cycles]
    return "\n".join([header, "-" * len(header), *rows])


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
    """One block per message: ``[n] role (tokens)``, then its text wrapped and indented, or the label ``known`` gives
    a text already shown (the system prompt), or for a message over ``first_line_over`` tokens its first line."""
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


def lesson3_run_lines() -> list[str]:
    """Lesson 3's six-turn run as the lesson printed it: a turn line each, a ``[SUMMARISE]`` line after a fold."""
    run = published_run(3)["summary_run"]
    folds = {event["after_turn"]: event for event in run["summarise_events"]}
    lines = [HEADING]
    for row in run["turn_lines"]:
        lines.append(summary_memory_line(row["turn"], row["messages_sent"], row["prompt_tokens"], row["summary_sent"],
                                         ("salary", row["salary_in_verbatim_turn"])))
        if fold := folds.get(row["turn"]):
            lines.append(summarise_line(fold["messages"], fold["messages_tokens"], fold["summary_tokens"]))
    return lines


def lesson4_run_lines() -> list[str]:
    """Lesson 4's six-turn run at 600 tokens; its overflows, told in prose, as ``[COMPRESS]`` lines marked rebuilt."""
    run = published_run(4)["buffer_run"]
    request = run["request_at_turn_6"]
    lines = [HEADING, "buffer after turns 1 to 3: " + ", ".join(f"{t}/600" for t in run["buffer_tokens_turns_1_to_3"]),
             "its three overflows, as [COMPRESS] lines rebuilt here from the figures the page gives in prose:"]
    lines += [compress_line(event["tokens_in"], event["summary_tokens"], event["messages"], old_summary=index > 0)
              for index, event in enumerate(run["compress_events"])]  # the first fold had no summary to merge
    lines += [f"overflows before turn 6: {run['overflows_before_turn_6']} (storing replies 3, 4 and 5)",
              f"request at turn 6: system prompt {request['system_prompt_tokens']} + memory block "
              f"{request['memory_block_tokens']} (summary {request['summary_tokens']}) + buffer "
              f"{request['buffer_tokens']} = {request['total_tiktoken']} tokens by tiktoken, "
              f"{request['billed_prompt_tokens']} billed",
              f"summary at the end: {run['summary_words_at_end']} words (the prompt allows 80)"]
    return lines


def lesson4_run_sizes() -> list[int]:
    """Each message's o200k_base size in lesson 4's run up to turn 6's question (replies from the page's figures)."""
    run = published_run(4)["buffer_run"]
    users = [count_tokens(text) for text in lesson4()["buffer_run"]["user_turns"]]
    after_1, after_2, after_3 = run["buffer_tokens_turns_1_to_3"]
    first, second, third = run["compress_events"]
    replies = [after_2 - after_1 - users[1], after_3 - after_2 - users[2],
               second["tokens_in"] - first["summary_tokens"] - users[2],
               third["tokens_in"] - second["summary_tokens"] - users[3],
               run["request_at_turn_6"]["buffer_tokens"] - users[4] - users[5]]
    return [size for user, reply in zip(users, replies) for size in (user, reply)] + [users[5]]


def lesson4_unsupported_claims() -> list[str]:
    """The statements lesson 4 found in its own summary (and its turn-6 reply) that no user message made."""
    run = published_run(4)["buffer_run"]
    reply = run["unsupported_claim_in_turn_6_reply"]
    return [f"Found by the lesson in its own summary ({LABEL}):",
            *(f"  {item['claim']!r}: {item['why']}" for item in run["unsupported_claims_in_summary"]),
            f"  and in its turn-6 reply, {reply['quote']!r}: {reply['why']}"]
