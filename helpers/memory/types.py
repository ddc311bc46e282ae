"""What every memory kind shares with its users: messages, fold events and results, the snapshot a turn line
reads, a kind's description of itself (``MemoryKind``), the errors, and the checks of settings and texts."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from helpers.base.errors import Explained, SettingError
from helpers.base.files import lone_surrogate_at

# summarise(messages_to_fold, existing_summary) -> new summary: a model call, the stand-in or a stub
Summariser = Callable[[list[dict[str, str]], "str | None"], "str | Summarised"]
ROLES = ("user", "assistant")


class StateError(Explained, ValueError):
    """A saved memory state is refused: damaged, edited or inconsistent; ``field`` names the part at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class SummariserError(Explained, RuntimeError):
    """A fold did not happen and nothing was lost; ``problem`` says why ("raised", "not text", "too long", "empty
    text", "unstorable text", "refused", "still mentions"), ``kept_role`` which message was stored verbatim (None:
    only the fold failed), ``will_retry`` whether the fold is tried again on a later message."""

    def __init__(self, message: str, *, problem: str = "raised", kept_role: str | None = None,
                 will_retry: bool = True) -> None:
        super().__init__(message)
        self.problem, self.kept_role, self.will_retry = problem, kept_role, will_retry


class SummaryRefused(SummariserError):
    """The summary check (``summary_check="refuse"``) refused a new summary; ``findings`` are what it saw."""

    def __init__(self, message: str, *, findings: tuple[str, ...] = (), kept_role: str | None = None) -> None:
        super().__init__(message, problem="refused", kept_role=kept_role)
        self.findings = findings


@dataclass(frozen=True)
class Summarised:
    """A summary its summariser knows was cut at the model's token limit (one that cannot tell returns a str)."""

    text: str
    cut: bool = True


def asked(summarise: Summariser | None) -> Summariser | None:
    """What a memory calls to ask ``summarise`` for a summary: its ``summarised`` where it has one (which can tell a
    cut), else ``summarise`` itself."""
    flagged = getattr(summarise, "summarised", None)
    return flagged if callable(flagged) else summarise


class FoldResult(NamedTuple):
    """What a fold would store: the summary (None for a drop), whether it was condensed to meet
    ``max_summary_tokens`` or cut by the summariser, and the summary check's findings."""

    summary: str | None
    condensed: bool
    cut: bool
    findings: tuple[str, ...] | None


class Message(NamedTuple):
    """One chat message with its o200k_base token count, counted once when it was added."""

    role: str
    content: str
    tokens: int

    def to_api(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


class FoldEvent(NamedTuple):
    """What one fold did: which turns left the verbatim part and the tokens in and out (a summary or a drop)."""

    first_turn: int
    last_turn: int
    messages_folded: int
    message_tokens: int
    old_summary_tokens: int
    summary_tokens: int
    condensed: bool = False  # the summary passed max_summary_tokens and was summarised again
    over_cap: bool = False  # still over max_summary_tokens after that (reported, never cut)
    cut: bool = False  # the summariser stopped at its token limit: the summary may end mid-sentence
    check: tuple[str, ...] = ()  # what the summary check found ("kind: text"), when it is on (notebook 06)

    @classmethod
    def of(cls, first_turn: int, folded: Sequence[Message], old_summary_tokens: int, summary_tokens: int,
           result: FoldResult, cap: int | None) -> FoldEvent:
        """The event of a fold of ``folded`` (whole turns from ``first_turn``) that stored ``result``."""
        return cls(first_turn, first_turn + len(folded) // 2 - 1, len(folded), sum(m.tokens for m in folded),
                   old_summary_tokens, summary_tokens, result.condensed, cap is not None and summary_tokens > cap,
                   result.cut, result.findings or ())

    tokens_in = property(lambda self: self.message_tokens + self.old_summary_tokens,
                         doc="Tokens handed to the summariser: the folded messages plus the old summary.")

    def notes(self) -> str:
        """What a fold line adds after the lesson's figures: a condensed, capped, cut or flagged summary's notes."""
        return ((" [condensed: passed max_summary_tokens]" if self.condensed else "")
                + (" [still over max_summary_tokens]" if self.over_cap else "")
                + (" [SUMMARY CUT at the token limit: it may end mid-sentence]" if self.cut else "")
                + (f" [SUMMARY CHECK: {'; '.join(self.check)}]" if self.check else ""))  # summary_check="report"


@dataclass(frozen=True)
class MemorySnapshot:
    """The numbers a turn line reads off a memory, taken when the request is built."""

    kind: str  # the kind's registered name (``MemoryKind.name``)
    turn: int
    summary: str | None
    summary_tokens: int
    summary_block_tokens: int  # the heading plus the summary, as sent (0 without a summary)
    pinned_tokens: int  # the pinned-rules block, as sent (0 without pinned rules)
    system_prompt_tokens: int
    verbatim_tokens: int  # the buffer, for summary buffer memory
    verbatim_messages: int
    request_tokens: int  # every part above, by o200k_base (the chat template adds a few per message)
    folds: int  # folds made so far (summariser calls that were kept; drops for a sliding window)
    budget: int | None = None  # a token cap on the verbatim part, for a kind that has one (lesson 4)
    over_budget: bool = False


@dataclass(frozen=True)
class MemoryKind:
    """What the rest of the project needs to know about a memory kind, carried by its class as ``KIND``."""

    name: str  # "summary memory": how tables, charts and saved states name the kind
    heading: str | None  # the heading of the summary block, as sent; None for a kind that never summarises
    fold_tag: str  # the tag its fold line opens with: "SUMMARISE", "COMPRESS", "DROP" (the line reads it here)
    turn_line: Callable[[Any], str]  # the kind's per-turn line from a ``TurnRecord`` (the lesson's format)
    fold_line: Callable[[FoldEvent], str]  # the kind's per-fold line
    summariser_prompt: str | None = None  # a name in data/prompts/ or the kind's own prompt text
    # a lesson's request wording ("lesson3", "lesson4") or the kind's own templates (docs/architecture.md)
    request_templates: str | Mapping[str, str] | None = None
    attack_settings: Mapping[str, Any] = field(default_factory=dict)  # its settings in notebook 06's attack table
    block_label: str = "summary block"  # what a chart calls the memory message
    recent_label: str = "verbatim turns"  # what a chart calls the verbatim part


MemoryDefences = Any  # a ``helpers.memory.defences.Defences``: what the memory calls on it is in docs/architecture.md


class UnstorableText(Explained, ValueError):
    """Text that cannot be stored as UTF-8 (a lone surrogate); ``what`` names it, ``position`` is the character."""

    def __init__(self, what: str, position: int, message: str) -> None:
        super().__init__(message)
        self.what, self.position = what, position


def check_count(name: str, value: object, minimum: int, why: str) -> int:
    """``value`` if it is a whole number of at least ``minimum``; else a ``SettingError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise SettingError(name, value, f"{name} must be a whole number, got {value!r}")
    if value < minimum:
        raise SettingError(name, value, f"{name} must be at least {minimum}, got {value}: {why}")
    return value


def check_text(name: str, value: object, limit: int | None = None, setting: str = "") -> str:
    """``value`` if it is text of at most ``limit`` characters (the limit named ``setting``) that can be stored as
    UTF-8; else an error naming ``name`` and the fix. The length is checked first, before anything reads the text."""
    if not isinstance(value, str):
        raise SettingError(name, value, f"{name} must be text, got {type(value).__name__}")
    if limit is not None and len(value) > limit:
        raise SettingError(setting, len(value), (
            f"{name} is {len(value):,} characters, more than the {limit:,} it may hold ({setting}); it was not "
            f"stored and nothing changed. Shorten it, or raise {setting} if texts this long are meant"))
    if not value.isascii() and (position := lone_surrogate_at(value)) is not None:
        raise UnstorableText(name, position, (
            f"{name} holds a lone surrogate at character {position} ({value[position]!r}): half of a character "
            "such as an emoji, as escaped JSON like \"\\ud83d\" gives. It cannot be saved, so it is refused "
            "and nothing was stored. Fix the text (e.g. text.encode('utf-16', 'surrogatepass').decode('utf-16') "
            "rejoins a split pair, text.encode('utf-8', 'replace').decode() drops the half) and add it again."))
    return value
