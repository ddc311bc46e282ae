"""Lesson 4's token-budget analysis: ``SummaryBufferMemory`` itself run on the lesson's texts with placeholder replies
of the assumed length, so the table, chart and exercise checks use the class's own overflow rule (summary not sized)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from helpers.base.tokens import filler_text
from helpers.memory.stubs import turn_range_stub
from helpers.memory.summary_buffer import SummaryBufferMemory
from helpers.memory.types import SettingError, check_count


@dataclass(frozen=True)
class BudgetStep:
    """One message added to the buffer: its size, whether it caused an overflow, the buffer after it."""

    turn: int
    role: str
    message_tokens: int
    messages_folded: int  # 0 when this message caused no overflow
    buffer_tokens: int
    would_reach: int = 0  # the buffer before the message plus the message: above the budget means an overflow
    overflow = property(lambda self: self.messages_folded > 0)


@dataclass(frozen=True)
class BudgetResult:
    """Overflows and the largest buffer for one budget and one assumed reply length."""

    max_buffer_tokens: int
    reply_tokens: int
    messages_to_compress: int
    steps: tuple[BudgetStep, ...]
    overflows = property(lambda self: sum(step.overflow for step in self.steps))
    peak_buffer_tokens = property(lambda self: max((step.buffer_tokens for step in self.steps), default=0))


@dataclass(frozen=True)
class BudgetTable:
    """Several budgets side by side (``helpers.display.lines.budget_table_text`` prints the lesson's table)."""

    results: tuple[BudgetResult, ...]


def analyse_budget(user_messages: Sequence[str], max_buffer_tokens: int, reply_tokens: int = 100,
                   messages_to_compress: int = 4) -> BudgetResult:
    """The conversation run through lesson 4's class with replies of ``reply_tokens`` tokens, a step a message."""
    if not user_messages or not all(isinstance(message, str) for message in user_messages):
        raise SettingError("user_messages", user_messages, "user_messages must be a non-empty list of texts, got "
                           f"{list(user_messages)!r}")
    reply = filler_text(check_count("reply_tokens", reply_tokens, 1, "a reply holds at least one token"))
    memory = SummaryBufferMemory("", turn_range_stub, max_buffer_tokens=max_buffer_tokens,
                                 messages_to_compress_on_overflow=messages_to_compress)
    steps = []
    for index, content in enumerate(text for message in user_messages for text in (message, reply)):
        role = ("user", "assistant")[index % 2]
        folds_before, before = memory.summary_count, memory.buffer_tokens
        memory.add_message(role, content)
        folded = memory.last_fold.messages_folded if memory.summary_count > folds_before else 0
        tokens = memory.verbatim_records[-1].tokens  # the message just stored, as the memory counted it
        steps.append(BudgetStep(index // 2 + 1, role, tokens, folded, memory.buffer_tokens, before + tokens))
    return BudgetResult(max_buffer_tokens, reply_tokens, messages_to_compress, tuple(steps))


def budget_table(user_messages: Sequence[str], budgets: Sequence[int], reply_tokens: int = 100,
                 messages_to_compress: int = 4) -> BudgetTable:
    """``analyse_budget`` for each budget."""
    return BudgetTable(tuple(analyse_budget(user_messages, budget, reply_tokens, messages_to_compress)
                             for budget in budgets))
