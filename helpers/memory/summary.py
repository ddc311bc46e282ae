"""Lesson 3's summary memory: fold by turn count."""
from __future__ import annotations

from typing import Any, ClassVar

from helpers.memory.rolling import RollingSummaryMemory
from helpers.memory.types import Summariser, SummariserError
from helpers.memory.validation import check_count


class SummaryMemory(RollingSummaryMemory):
    """Lesson 3: after an assistant reply, once ``max_turns_before_summary`` turns are held verbatim,
    every turn but the last ``turns_to_keep_verbatim`` is folded into the summary."""

    summary_heading: ClassVar[str] = "CONVERSATION SUMMARY (earlier turns):\n"

    def __init__(self, system_prompt: str, summarise: Summariser, max_turns_before_summary: int = 4,
                 turns_to_keep_verbatim: int = 2, max_summary_tokens: int | None = None,
                 **defences: Any) -> None:
        check_count("max_turns_before_summary", max_turns_before_summary, 1,
                    "the summary is triggered once this many turns are held verbatim")
        check_count("turns_to_keep_verbatim", turns_to_keep_verbatim, 1,
                    "the request needs the latest turn word for word")
        if turns_to_keep_verbatim >= max_turns_before_summary:
            raise ValueError(
                f"turns_to_keep_verbatim ({turns_to_keep_verbatim}) must be smaller than max_turns_before_summary "
                f"({max_turns_before_summary}): otherwise a summary cycle has no turn to fold")
        super().__init__(system_prompt, summarise, max_summary_tokens, **defences)  # placement=, pinned_rules=, ...
        self.max_turns_before_summary = max_turns_before_summary
        self.turns_to_keep_verbatim = turns_to_keep_verbatim

    def settings(self) -> dict[str, Any]:
        return {"max_turns_before_summary": self.max_turns_before_summary,
                "turns_to_keep_verbatim": self.turns_to_keep_verbatim,
                "max_summary_tokens": self.max_summary_tokens, **self.defence_settings()}

    def _check_loaded(self) -> None:
        held = (len(self._archive) - self._verbatim_start) // 2
        if held >= self.max_turns_before_summary and not self._fold_pending:
            raise ValueError(
                f"the saved state holds {held} complete verbatim turns, but max_turns_before_summary is "
                f"{self.max_turns_before_summary}: a fold would have run (fold_pending is false, so none failed)")

    def add_message(self, role: str, content: str) -> None:
        """Store the message; after a reply, fold the oldest turns once the threshold is reached.

        Raises ``SummariserError`` if that fold fails: the message is kept and the fold is retried
        after the next reply.
        """
        message = self._new_message(role, content)
        self._append(message)
        verbatim_turns = (len(self._archive) - self._verbatim_start) // 2
        if role == "assistant" and verbatim_turns >= self.max_turns_before_summary:
            try:
                self._fold(2 * (verbatim_turns - self.turns_to_keep_verbatim))
            except SummariserError as error:
                raise self._kept_error(error, role) from error
