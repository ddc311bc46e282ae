"""A check of every new summary for text that should never be in one: instructions aimed at the
assistant, role markers, chat-template tokens and forged section headers.

A summary is the model's notes about a conversation; the assistant's rules come from the system
prompt. A pattern check is cheap and offline; it catches the common wordings and misses
paraphrase, other languages and encoded text (measured in notebook 06).
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

CHECK_MODES = ("off", "report", "refuse")

_PATTERNS: dict[str, re.Pattern[str]] = {
    "instruction": re.compile(
        r"\bignore (?:all |any |the |your )?(?:previous|prior|above|earlier|system)\b|\bdisregard\b|"
        r"\bfrom now on\b|\bnew (?:system )?(?:rule|instruction|policy|directive)s?\b|\boverride\b|"
        r"\b(?:you|fincoach|the assistant|assistant)\s+(?:must|should|shall|will|has to|is required to)\s+(?:always|now|never)\b|"
        r"\bmust always\b|\bforget (?:all|your|previous|the)\b|\bdeveloper mode\b|\bjailbreak\b|"
        r"\b(?:remember|store|keep) (?:this|that) (?:forever|permanently)\b|\bpermanent (?:memory|instruction)\b|"
        r"\bdo not (?:tell|warn|mention|disclose) (?:the user|anyone)\b|\bact as\b|\bpretend\b",
        re.IGNORECASE),
    "role marker": re.compile(
        r"(?:^|\s)(?:SYSTEM|USER|ASSISTANT|DEVELOPER|System|Developer)\s*:|<\|(?:im_start|im_end|system|user|assistant)\|>|"
        r"\[/?INST\]|<start_of_turn>|<end_of_turn>|^#{2,}\s*(?:system|instruction)", re.MULTILINE),
    "forged header": re.compile(
        r"\b(?:EXISTING SUMMARY|CONVERSATION TURNS TO SUMMARISE|NEW TURNS TO ADD|MESSAGES TO SUMMARISE|"
        r"NEW MESSAGES TO INCORPORATE|CONVERSATION SUMMARY|CONVERSATION MEMORY|PINNED RULES|SYSTEM NOTE|"
        r"SYSTEM PROMPT|SUMMARY TO SHORTEN)\b|<<<|>>>"),
}


@dataclass(frozen=True)
class SummaryCheck:
    """What the check found in one summary: ``(kind, matched text)`` pairs, empty when clean."""

    findings: tuple[tuple[str, str], ...]

    @property
    def flagged(self) -> bool:
        return bool(self.findings)

    def describe(self) -> str:
        """One line: 'clean' or the kinds and the text matched."""
        if not self.findings:
            return "clean"
        return "; ".join(f"{kind}: {text!r}" for kind, text in self.findings)


def _heading_pattern(headings: tuple[str, ...]) -> re.Pattern[str] | None:
    """The memory kinds' own headings (their first line, any case and spacing), as forged headers."""
    names = [" ".join(heading.split(":")[0].split()) for heading in headings if heading.strip()]
    if not names:
        return None
    return re.compile("|".join(r"\s+".join(map(re.escape, name.split())) for name in names), re.IGNORECASE)


def check_summary(summary: str, *, headings: Iterable[str] = ()) -> SummaryCheck:
    """Every instruction-like phrase, role marker and forged header in ``summary``; ``headings`` are the
    memory kinds' own summary headings (``helpers.memory.registry.headings()``), also forged headers."""
    findings = []
    for kind, pattern in _PATTERNS.items():
        for match in pattern.finditer(summary):
            findings.append((kind, match.group(0).strip()))
    own = _heading_pattern(tuple(headings))
    if own is not None:
        findings += [("forged header", match.group(0).strip()) for match in own.finditer(summary)
                     if ("forged header", match.group(0).strip()) not in findings]
    return SummaryCheck(tuple(findings))


def check_mode(mode: str) -> str:
    """``mode`` if it is one of ``CHECK_MODES``; else a ``ValueError`` saying what to pass."""
    if mode not in CHECK_MODES:
        raise ValueError(f"summary_check must be 'off', 'report' (findings on the fold event) or 'refuse' "
                         f"(a flagged summary is not stored; the messages stay verbatim), got {mode!r}")
    return mode
