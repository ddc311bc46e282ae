"""A summariser that hands back summaries written earlier, in order: lesson 3's published drift run, replayed
through the project's own drift code exactly as a live run is measured."""
from __future__ import annotations

from collections.abc import Sequence

from helpers.memory.types import SettingError


class RecordedSummariser:
    """``summarise(messages, existing_summary)`` returning ``summaries[0]``, then ``[1]``, ...;
    the arguments of every call are kept in ``calls`` so a run can be checked against the record."""

    def __init__(self, summaries: Sequence[str], source: str) -> None:
        if not summaries or not all(isinstance(s, str) and s.strip() for s in summaries):
            raise SettingError("summaries", summaries, "RecordedSummariser needs at least one non-empty summary text")
        self.summaries = list(summaries)
        self.source = source
        self.calls: list[tuple[list[dict[str, str]], str | None]] = []

    def __call__(self, messages: list[dict[str, str]], existing_summary: str | None = None) -> str:
        if len(self.calls) >= len(self.summaries):
            raise SettingError("calls", len(self.calls) + 1, (
                f"{self.source} holds {len(self.summaries)} summaries, and call {len(self.calls) + 1} asked for "
                "another: run it on as many cycles as were recorded"))
        expected_existing = self.summaries[len(self.calls) - 1] if self.calls else None
        if existing_summary != expected_existing:
            raise SettingError("existing_summary", existing_summary, (
                f"call {len(self.calls) + 1} was given an existing summary that is not the one recorded before it: "
                f"the run being replayed differs from {self.source}"))
        self.calls.append((list(messages), existing_summary))
        return self.summaries[len(self.calls) - 1]
