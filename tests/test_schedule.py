"""Lesson 3's schedule comes out exactly as published, from the SummaryMemory class itself (notebook 01's own
``schedule()`` is held to it in tests/test_notebook_core.py)."""
import pytest

from helpers.lessons.data import lesson3
from helpers.memory.schedule import summary_schedule
from helpers.memory.stubs import turn_range_stub
from helpers.memory.summary import SummaryMemory
from helpers.display.lines import schedule_text
from helpers.memory.types import SettingError

PUBLISHED_KEEP_2_OF_4 = """\
Summarise after 4 turns, keep 2 verbatim:
 turn  1 request: no summary                + verbatim turns [1]
 turn  2 request: no summary                + verbatim turns [1, 2]
 turn  3 request: no summary                + verbatim turns [1, 2, 3]
 turn  4 request: no summary                + verbatim turns [1, 2, 3, 4]
 turn  5 request: summary of turns 1 to 2   + verbatim turns [3, 4, 5]
 turn  6 request: summary of turns 1 to 2   + verbatim turns [3, 4, 5, 6]
 turn  7 request: summary of turns 1 to 4   + verbatim turns [5, 6, 7]
 turn  8 request: summary of turns 1 to 4   + verbatim turns [5, 6, 7, 8]
 turn  9 request: summary of turns 1 to 6   + verbatim turns [7, 8, 9]
 turn 10 request: summary of turns 1 to 6   + verbatim turns [7, 8, 9, 10]
 summariser calls in 10 turns: 4"""


def test_keep_2_of_4_prints_the_lessons_ten_lines_and_4_calls():
    assert schedule_text(summary_schedule(10, 4, 2)) == PUBLISHED_KEEP_2_OF_4


def test_keep_3_of_4_calls_after_every_turn_from_turn_4():
    schedule = summary_schedule(10, 4, 3)
    assert schedule.calls == 7
    assert [row.summariser_called_after for row in schedule.rows] == [False] * 3 + [True] * 7
    row_5 = " turn  5 request: summary of turns 1 to 1   + verbatim turns [2, 3, 4, 5]"
    assert schedule_text(schedule).splitlines()[5] == row_5


def test_try_it_6_and_2_gives_2_calls_and_six_verbatim_turns_at_turn_10():
    schedule = summary_schedule(10, 6, 2)
    assert schedule.calls == 2
    assert schedule.rows[-1].verbatim_turns == (5, 6, 7, 8, 9, 10)


@pytest.mark.parametrize("run", lesson3()["schedule"]["runs"], ids=lambda run: run["label"])
def test_every_published_call_count_in_the_data_file(run):
    schedule = summary_schedule(10, run["max_turns_before_summary"], run["turns_to_keep_verbatim"])
    assert schedule.calls == run["published_calls"]


@pytest.mark.parametrize("threshold, keep, turns", [(2, 1, 15), (5, 2, 23), (8, 7, 30), (3, 1, 1)])
def test_schedule_agrees_with_the_class_it_explains(threshold, keep, turns):
    schedule = summary_schedule(turns, threshold, keep)
    memory = SummaryMemory("", turn_range_stub, max_turns_before_summary=threshold, turns_to_keep_verbatim=keep)
    for row in schedule.rows:
        memory.add_message("user", f"turn {row.turn}")
        assert memory.turns_folded == row.summarised_up_to
        assert len(memory.verbatim) == 2 * len(row.verbatim_turns) - 1
        memory.add_message("assistant", "reply")
    assert memory.summary_count == schedule.calls


def test_every_turn_is_either_summarised_or_verbatim():
    for row in summary_schedule(12, 5, 2).rows:
        assert list(range(1, row.summarised_up_to + 1)) + list(row.verbatim_turns) == list(range(1, row.turn + 1))


@pytest.mark.parametrize("args, setting", [((0, 4, 2), "total_turns"), ((10, 4, 4), "turns_to_keep_verbatim"),
                                           ((10, 0, 2), "max_turns_before_summary")])
def test_bad_settings_say_which_setting(args, setting):
    with pytest.raises(SettingError) as refused:
        summary_schedule(*args)
    assert refused.value.setting == setting
