"""What a kind whose folds keep a summary adds: the summariser, the cap on the summary, the fold checked by the
defences, the wait after a fold a retry cannot fix, and the rule that there is a summary once turns are folded."""
from __future__ import annotations

from typing import Any

from helpers.base.reading import shows_nothing
from helpers.base.tokens import count_tokens
from helpers.memory.rolling import RollingMemory, quoted_headings
from helpers.memory.types import (FoldResult, MemoryDefences, Message, SettingError, StateError, Summarised,
                                  Summariser, SummariserError, SummaryRefused, asked, check_count, check_text)


def _sentence(text: str) -> str:
    """``text`` ending with a full stop, so another sentence can follow it."""
    text = text.rstrip()
    return text if text.endswith((".", "!", "?")) else text + "."


class SummarisingMemory(RollingMemory):
    """A memory whose folds keep a summary written by ``summarise(messages, existing_summary)``."""

    max_summary_chars = 20_000  # the longest summary stored (a summary longer than this is refused: nothing lost)

    def __init__(self, system_prompt: str, summarise: Summariser, *, max_summary_tokens: int | None = None,
                 defences: MemoryDefences | None = None) -> None:
        super().__init__(system_prompt, defences=defences)
        if not callable(summarise):
            raise SettingError("summarise", summarise, "summarise must be a callable (messages, existing_summary) "
                               "-> str: the summariser that writes the summary")
        if max_summary_tokens is not None:
            check_count("max_summary_tokens", max_summary_tokens, 1, "a summary needs room for at least one token")
        self.summarise, self.max_summary_tokens = summarise, max_summary_tokens
        self._doomed: tuple[Any, ...] | None = None  # a fold that failed for good: (its conditions, its tokens)

    summary_over_cap = property(lambda self: self.max_summary_tokens is not None and self.summary_tokens >
                                self.max_summary_tokens, doc="The summary is over max_summary_tokens, even condensed.")
    # what a fold's request depends on besides the folded messages
    _conditions = property(lambda self: (self.summary, self.settings(), self.defences, self.summarise))

    @property
    def fold_waits(self) -> bool:
        """True while the next fold failed in a way a retry cannot fix (a request too long for the server, say): not
        tried until the summary, settings, defences or summariser change, or fewer tokens are to be folded."""
        return self._doomed is not None and self._doomed[0] == self._conditions

    def _new_summary(self, folded: list[Message], existing: str | None) -> FoldResult | None:
        """The summary fold, not made (None) while ``fold_waits`` for a fold at least as large."""
        tokens = sum(m.tokens for m in folded)
        if self.fold_waits and tokens >= self._doomed[1]:  # type: ignore[index]
            return None
        try:
            return self.summary_for([m.to_api() for m in folded], existing)
        except SummariserError as error:
            if not error.will_retry:
                self._doomed = (self._conditions, tokens)
            raise

    def summary_for(self, messages: list[dict[str, str]], existing: str | None) -> FoldResult:
        """What a fold of ``messages`` into ``existing`` would store (condensed once over ``max_summary_tokens``, the
        defences' redaction and check applied), the memory unchanged; raises as a fold does."""
        defences = self.defences
        summary, cut = self._call_summariser(defences.fold_input(messages) if defences else messages, existing)
        condensed = False
        # counted here only to hold it to the cap: what a fold stores is counted once, by the fold
        if self.max_summary_tokens is not None and (tokens := count_tokens(summary)) > self.max_summary_tokens:
            try:
                shorter, shorter_cut = self._call_summariser([], summary)
            except SummariserError:
                shorter = None  # the fold itself worked; the cap is reported as missed on the fold event
            if shorter is not None and count_tokens(shorter) < tokens:
                summary, condensed, cut = shorter, True, shorter_cut
        findings = defences.check(summary, self.system_prompt, quoted_headings(self.KIND.heading)) if defences else None
        if defences and defences.refuses(findings):
            raise SummaryRefused(f"the summary check refused the new summary ({'; '.join(findings or ())})",
                                 findings=findings or ())
        return FoldResult(summary, condensed, cut, findings)

    def _call_summariser(self, messages: list[dict[str, str]], existing: str | None) -> tuple[str, bool]:
        """The summariser's text, stripped, and whether it was cut; ``SummariserError`` if it is no summary."""
        what = f"folding {len(messages)} messages" if messages else "condensing the summary"
        try:
            result = asked(self.summarise)(messages, existing)  # type: ignore[misc]
        except Exception as error:
            retry = getattr(error, "retry_can_help", True) is not False
            raise SummariserError(_sentence(f"the summariser raised {type(error).__name__} while {what}: {error}"),
                                  will_retry=retry) from error
        text, cut = (result.text, result.cut) if isinstance(result, Summarised) else (result, False)
        if not isinstance(text, str):
            raise SummariserError(f"the summariser returned {type(text).__name__} ({str(text)[:60]!r}) while "
                                  f"{what}, not text; a summariser must return the summary as a str (or Summarised).",
                                  problem="not text")
        if len(text) > self.max_summary_chars:  # before anything reads it
            raise SummariserError(f"the summariser returned {len(text):,} characters while {what}, more than the "
                                  f"{self.max_summary_chars:,} a summary may hold (max_summary_chars); it was not "
                                  "stored. Ask for a shorter summary (or raise max_summary_chars).", problem="too long")
        if shows_nothing(text):
            raise SummariserError(f"the summariser returned empty text while {what}; an empty summary is never "
                                  "stored.", problem="empty text")
        try:
            check_text("the summary", text)
        except ValueError as error:
            raise SummariserError(f"the summariser's text was refused while {what}: {error}",
                                  problem="unstorable text") from error
        return text.strip(), cut

    def _try_fold(self, n_messages: int, role: str) -> SummariserError | None:
        """Fold the oldest ``n_messages`` (if any); a failed fold's error, saying that the ``role`` message is kept
        and what happens next, is returned for ``add_message`` to raise once the message is stored."""
        try:
            if n_messages:
                self._fold(n_messages)
            return None
        except SummariserError as error:
            kept = (f"{_sentence(str(error))} Nothing was lost: the {role} message was kept verbatim and added to the "
                    "archive, and the summary is unchanged.")
            if isinstance(error, SummaryRefused):  # the summariser worked; what it wrote was refused
                failure: SummariserError = SummaryRefused(
                    f"{kept} The fold is tried again on a later message and is refused again while the turns to fold "
                    "hold that text: forget() it, or use summary_check='report' to keep the summary and see the "
                    "findings on the fold line.", findings=error.findings, kept_role=role)
            else:
                later = ("The fold will be tried again on a later message. Fix the summariser (or switch to "
                         "replay/offline mode) and go on." if error.will_retry else
                         "Trying the same fold again cannot help (the summariser's error says so), so the memory does "
                         "not try it again until the summary, the memory's settings or its summariser change: fix "
                         "what the error names, then give the memory a summariser from a new connect() "
                         "(memory.summarise = ...) or run the notebook again.")
                failure = SummariserError(f"{kept} {later}", problem=error.problem, kept_role=role,
                                          will_retry=error.will_retry)
            failure.__cause__ = error
            return failure

    def check_loaded(self) -> None:
        """The folded turns are sent only through the summary: there is a summary exactly when some were folded."""
        if (self.summary is None) != (self.verbatim_start == 0):
            raise StateError("summary", f"summary and verbatim_start disagree: summary is "
                             f"{'null' if self.summary is None else 'set'} but verbatim_start is "
                             f"{self.verbatim_start}; turns before verbatim_start are sent only through the summary, "
                             "so there is a summary exactly when verbatim_start > 0")
