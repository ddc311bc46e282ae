"""Lesson 4's exercises: the check cells say "not done", "not yet" (with what is wrong) or "correct", and
agree with the memory class; the stored notebooks hold the exercise undone and the solutions correct."""
from __future__ import annotations

import nbformat
import pytest

from helpers.base.tokens import count_tokens
from helpers.display.exercise import CORRECT, NOT_DONE, WRONG
from helpers.display.lesson4_exercises import (
    CAP_CASES,
    LONG_SUMMARY,
    check_overflow_rule,
    check_summary_cap,
    reference_cap,
)
from helpers.lessons.data import lesson4
from helpers.memory.summary_buffer import SummaryBufferMemory

from .notebook_core_support import NOTEBOOKS

MESSAGES = lesson4()["budget_analysis"]["user_messages"]


def overflow_rule(extra_turns: bool = True, strict: bool = False):
    def count_overflows(sizes, budget, compress=4):
        buffer, overflows = [], 0
        for size in sizes:
            if sum(buffer) + size >= budget + (0 if strict else 1):
                whole = len(buffer) // 2 * 2
                n = min(compress, whole)
                while extra_turns and n < whole and sum(buffer[n:]) + size > budget:
                    n += 2
                if n:
                    buffer, overflows = buffer[n:], overflows + 1
            buffer.append(size)
        return overflows
    return count_overflows


def test_overflow_check_says_not_done_wrong_or_correct(capsys):
    assert check_overflow_rule(lambda sizes, budget, compress: ..., MESSAGES).status == NOT_DONE
    assert check_overflow_rule(overflow_rule(), MESSAGES).status == CORRECT
    wrong = check_overflow_rule(overflow_rule(extra_turns=False), MESSAGES)
    assert wrong.status == WRONG and "replies 1, budget 43, compress 2" in wrong.message
    assert check_overflow_rule(overflow_rule(strict=True), MESSAGES).status == WRONG  # '>=' instead of '>'
    raised = check_overflow_rule(lambda sizes, budget, compress: sizes[99], MESSAGES)
    assert raised.status == WRONG and "IndexError" in raised.message
    assert "[exercise 4.1] correct" in capsys.readouterr().out


def solution_cap(summary, summarise, cap):
    if cap is None or count_tokens(summary) <= cap:
        return summary
    shorter = summarise([], summary).strip()
    return shorter if count_tokens(shorter) < count_tokens(summary) else summary


def test_summary_cap_check_says_not_done_wrong_or_correct():
    assert check_summary_cap(lambda summary, summarise, cap: ...).status == NOT_DONE
    assert check_summary_cap(solution_cap).status == CORRECT
    always = check_summary_cap(lambda summary, summarise, cap: summarise([], summary))
    assert always.status == WRONG and "kept as it is" in always.message
    trusting = check_summary_cap(lambda s, summarise, cap: s if cap is None or count_tokens(s) <= cap
                                 else summarise([], s))
    assert trusting.status == WRONG and "came back longer" in trusting.message


@pytest.mark.parametrize("summary, shorten, cap, why", CAP_CASES)
def test_the_reference_cap_is_what_the_hardened_class_does(summary, shorten, cap, why):
    def summarise(messages, existing):
        return shorten(messages, existing) if not messages else summary  # every fold writes the long summary

    memory = SummaryBufferMemory("s", summarise, max_buffer_tokens=60, max_summary_tokens=cap)
    for index in range(6):
        memory.add_message(("user", "assistant")[index % 2], "x" + " x" * 29)
    assert memory.summary == reference_cap(summary, shorten, cap), why
    assert memory.summary == reference_cap(LONG_SUMMARY, shorten, cap)


def outputs(path) -> str:
    book = nbformat.read(path, as_version=4)
    cells = [cell for cell in book.cells if cell.cell_type == "code"]
    imports_only = [all(line.startswith(("from ", "import ")) for line in cell.source.splitlines()) for cell in cells]
    assert all(cell.outputs or silent for cell, silent in zip(cells, imports_only)), f"{path.name}: run it (python tools/refresh_notebooks.py)"
    return "\n".join(o.get("text", "") for cell in cells for o in cell.outputs)


@pytest.mark.parametrize("notebook, exercise", [("04_budget_analysis", "4.1"), ("05_summary_buffer_run", "5.1")])
def test_stored_notebooks_hold_the_exercise_undone_and_the_solution_correct(notebook, exercise):
    assert f"[exercise {exercise}] not done yet" in outputs(NOTEBOOKS / f"{notebook}.ipynb")
    assert f"[exercise {exercise}] correct" in outputs(NOTEBOOKS / "solutions" / f"{notebook}_solutions.ipynb")
