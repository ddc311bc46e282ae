"""Lesson 4's budget table comes out exactly as published, from SummaryBufferMemory itself."""
import pytest

from helpers.base.tokens import filler_text
from helpers.display.lines import lesson4_run_sizes
from helpers.lessons.data import lesson4
from helpers.memory.budget import analyse_budget, budget_table
from helpers.memory.stubs import turn_range_stub
from helpers.memory.summary_buffer import SummaryBufferMemory
from helpers.display.lines import budget_table_text
from helpers.memory.types import SettingError

ANALYSIS = lesson4()["budget_analysis"]
MESSAGES = ANALYSIS["user_messages"]

PUBLISHED_TABLE_FIGURES = {300: 4, 400: 4, 600: 3, 800: 2, 1000: 1, 1500: 0}


def test_the_lessons_budgets_give_its_overflows():
    table = budget_table(MESSAGES, list(PUBLISHED_TABLE_FIGURES))
    assert {r.max_buffer_tokens: r.overflows for r in table.results} == PUBLISHED_TABLE_FIGURES
    assert ANALYSIS["published_overflows"] == list(PUBLISHED_TABLE_FIGURES.values())


def test_1500_tokens_never_overflows_and_peaks_at_1142():
    result = analyse_budget(MESSAGES, 1500)
    assert result.overflows == 0 and result.peak_buffer_tokens == 1142 == ANALYSIS["published_peak_at_1500"]


def test_replies_of_150_tokens_overflow_9_times_at_300_and_once_at_1500():
    assert analyse_budget(MESSAGES, 300, reply_tokens=150).overflows == 9
    assert analyse_budget(MESSAGES, 1500, reply_tokens=150).overflows == 1


def test_compressing_2_messages_overflows_5_times_at_600():
    assert analyse_budget(MESSAGES, 600, messages_to_compress=2).overflows == 5


def test_table_prints_in_the_lessons_layout():
    lines = budget_table_text(budget_table(MESSAGES, [300, 1500])).splitlines()
    assert lines == ["Budget | Overflows | Largest buffer",
                     "   300 |         4 |            250",
                     "  1500 |         0 |           1142"]


@pytest.mark.parametrize("budget, reply_tokens, compress", [(300, 100, 4), (555, 70, 2), (900, 240, 6)])
def test_steps_agree_with_the_class(budget, reply_tokens, compress):
    result = analyse_budget(MESSAGES, budget, reply_tokens, compress)
    memory = SummaryBufferMemory("", turn_range_stub, max_buffer_tokens=budget, messages_to_compress_on_overflow=compress)
    for step, (role, content) in zip(result.steps, [(r, c) for m in MESSAGES
                                                    for r, c in (("user", m), ("assistant", filler_text(reply_tokens)))]):
        memory.add_message(role, content)
        assert (step.role, step.buffer_tokens) == (role, memory.buffer_tokens)
    assert memory.overflow_count == result.overflows
    assert len(result.steps) == 2 * len(MESSAGES) and result.steps[-1].turn == len(MESSAGES)


@pytest.mark.parametrize("kwargs, setting", [
    ({"user_messages": []}, "user_messages"),
    ({"max_buffer_tokens": 0}, "max_buffer_tokens"),
    ({"reply_tokens": 0}, "reply_tokens"),
    ({"messages_to_compress": 3}, "messages_to_compress_on_overflow"),
])
def test_bad_input_is_refused_with_the_setting_named(kwargs, setting):
    arguments = {"user_messages": MESSAGES, "max_buffer_tokens": 600, **kwargs}
    with pytest.raises(SettingError) as refused:
        analyse_budget(**arguments)
    assert refused.value.setting == setting


def test_the_lessons_run_sizes_give_its_published_buffers_and_its_three_overflows():
    """Worked out from the page's figures: the buffer after turns 1 to 3 (19, 251, 570), the overflows when
    storing replies 3, 4 and 5, the folds' inputs (550, 370 and 537 with the summaries) and 412 at turn 6."""
    memory, buffers, folded = SummaryBufferMemory("", turn_range_stub, max_buffer_tokens=600), [], {}
    for number, size in enumerate(lesson4_run_sizes(), start=1):
        folds = memory.overflow_count
        memory.add_message(("user", "assistant")[(number - 1) % 2], filler_text(size))
        buffers.append(memory.buffer_tokens)
        if memory.overflow_count > folds:
            folded[number] = memory.last_fold.messages_folded
    assert [buffers[0], buffers[2], buffers[4]] == [19, 251, 570] and buffers[-1] == 412
    assert folded == {6: 4, 8: 2, 10: 2}
