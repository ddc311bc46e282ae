"""Lesson 3's summary schedule, worked out without a model by running ``SummaryMemory`` itself on messages
``turn N`` with the stub summariser, so a table cannot disagree with the class it explains."""
from __future__ import annotations

from dataclasses import dataclass

from helpers.memory.stubs import turn_range_stub
from helpers.memory.summary import SummaryMemory
from helpers.memory.types import check_count


@dataclass(frozen=True)
class ScheduleRow:
    """What the request of one turn holds, and whether the summariser ran after its reply."""

    turn: int
    summarised_up_to: int  # the summary covers turns 1 to this; 0 means no summary yet
    verbatim_turns: tuple[int, ...]
    summariser_called_after: bool
    summary_label = property(lambda self: f"summary of turns 1 to {self.summarised_up_to}" if self.summarised_up_to
                             else "no summary")


@dataclass(frozen=True)
class Schedule:
    """The whole schedule for one setting: a row per turn and the number of summariser calls."""

    total_turns: int
    max_turns_before_summary: int
    turns_to_keep_verbatim: int
    rows: tuple[ScheduleRow, ...]
    calls = property(lambda self: sum(row.summariser_called_after for row in self.rows))


def summary_schedule(total_turns: int, max_turns_before_summary: int, turns_to_keep_verbatim: int) -> Schedule:
    """Each turn's request as lesson 3's ``SummaryMemory`` builds it with a stub summariser."""
    check_count("total_turns", total_turns, 1, "a schedule needs a turn")
    memory = SummaryMemory("", turn_range_stub, max_turns_before_summary=max_turns_before_summary,
                           turns_to_keep_verbatim=turns_to_keep_verbatim)
    rows = []
    for turn in range(1, total_turns + 1):
        memory.add_message("user", f"turn {turn}")
        request = memory.get_messages_for_api()
        verbatim = tuple(int(m["content"].split()[1]) for m in request if m["role"] == "user")
        calls_before = memory.summary_count
        memory.add_message("assistant", f"reply {turn}")
        summarised_up_to = int(request[1]["content"].rsplit(" ", 1)[1]) if request[1]["role"] == "system" else 0
        rows.append(ScheduleRow(turn, summarised_up_to, verbatim, memory.summary_count > calls_before))
    return Schedule(total_turns, max_turns_before_summary, turns_to_keep_verbatim, tuple(rows))
