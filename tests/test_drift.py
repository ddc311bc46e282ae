"""Drift measures: the lesson's counts, the keyword check, and rule versus preference; notebook 03's own
drift loop does what ``run_drift`` does."""
import contextlib
import io

import pytest

from helpers.lessons.data import lesson3, published_run
from helpers.measure import drift
from helpers.base.tokens import encoding
from helpers.display.lines import comparison_table, cycle_line
from helpers.lessons.data import prompt
from helpers.model.connect import connect
from helpers.model.summarisers import make_summariser
from helpers.memory.types import SettingError
from tests.notebook_core_support import load_core

CYCLES = published_run(3)["drift_run"]["cycles"]
SUMMARIES = [c["summary"] for c in CYCLES]


def test_word_count_matches_the_lessons_counts():
    assert drift.word_count(SUMMARIES[2]) == published_run(3)["drift_run"]["cycle_3_words"] == 82
    assert drift.word_count(published_run(3)["summary_run"]["summary_after_turn_6"]) == 81


def test_the_keyword_check_passes_every_cycle_of_the_lessons_run():
    assert [drift.mentions(s) for s in SUMMARIES] == [c["mentions_equity"] for c in CYCLES] == [True] * 3


def test_the_rule_weakens_to_a_preference_in_cycle_3():
    strengths = [drift.rule_strength(s)[0] for s in SUMMARIES]
    assert strengths == ["rule", "rule", "preference"]
    assert "hard rule" in drift.rule_strength(SUMMARIES[0])[1]
    assert set(drift.rule_strength(SUMMARIES[2])[1]) == {"avoid", "prefer"}


@pytest.mark.parametrize("text, expected", [
    ("He never wants equity funds suggested.", "rule"),
    ("She prefers to stay away from equities.", "preference"),
    ("He holds some equity.", "mentioned"),
    ("He holds an FD.", "absent"),
])
def test_rule_strength_cases(text, expected):
    assert drift.rule_strength(text)[0] == expected


def test_measure_counts_tokens_words_and_limit():
    cycles = drift.measure(SUMMARIES, [c["batch_tokens"] for c in CYCLES])
    assert [c.summary_tokens for c in cycles][:2] == [58, 99]  # cycle 3's quoted text lost a few characters
    assert [c.over_limit for c in cycles] == [False, False, True]
    assert cycle_line(cycles[0]) == "Cycle 1: batch 82 tokens | summary 58 tokens | mentions equity: True"
    assert (cycles[2].words, cycles[2].word_limit) == (82, 80)
    with pytest.raises(SettingError) as refused:
        drift.measure(SUMMARIES, [1, 2])
    assert refused.value.setting == "batch_tokens"


def test_run_drift_folds_each_batch_into_the_previous_summary():
    calls = []

    def summarise(messages, existing):
        calls.append((len(messages), existing))
        return (existing or "") + f" Batch of {len(messages)}; he never wants equity."

    batches = lesson3()["drift_run"]["batches"]
    cycles = drift.run_drift(summarise, batches)
    assert [c.batch_tokens for c in cycles] == lesson3()["drift_run"]["published_batch_tokens"]
    assert calls[0] == (4, None) and calls[1][1] is not None
    assert [cycle_line(c).startswith(f"Cycle {c.cycle}: ") for c in cycles] == [True] * 3
    assert cycles[0].strength == "rule" and "never" in cycles[0].cues


def test_comparison_table_has_a_row_per_cycle_and_run():
    cycles = drift.measure(SUMMARIES, [82, 71, 66])
    table = comparison_table({"a": cycles, "a much longer label": cycles})
    assert len(table.splitlines()) == 2 + 6
    assert drift.chart_series(cycles)["words"] == [39, 65, 82]


# ----- notebook 03's own drift loop against run_drift ---------------------------------------------------

def notebook_drift(mutations=()):
    """Notebook 03's prompt, batches and run_cycles, with the offline client its set-up cell makes."""
    access = connect("offline", quiet=True)
    scope = load_core("03_drift_measurement.ipynb", mutations=mutations,
                      namespace={"access": access, "client": access.client, "MODEL": access.model,
                                 "TOKENISER": encoding()})
    return scope, access


def assert_as_run_drift(scope, access, prompt_text, word_limit=80):
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        summaries = scope["run_cycles"](prompt_text, scope["batches"])
    cycles = drift.run_drift(make_summariser(access, prompt_text), scope["batches"], word_limit=word_limit)
    assert summaries == [c.summary for c in cycles]
    assert printed.getvalue().splitlines() == [line for c in cycles for line in (cycle_line(c), "  " + c.summary)]
    return cycles


def test_the_notebooks_prompt_and_batches_are_the_lessons():
    scope, _ = notebook_drift()
    assert scope["FINCOACH_SUMMARY_PROMPT"] == prompt("summary_memory")
    assert scope["batches"] == lesson3()["drift_run"]["batches"]


def test_the_notebooks_drift_loop_is_run_drift_and_the_stand_in_loses_the_rule_only_at_30_words():
    scope, access = notebook_drift()
    lesson_prompt = scope["FINCOACH_SUMMARY_PROMPT"]
    tight = lesson_prompt.replace("at most 80 words", "at most 30 words")
    named = tight.replace("decisions made,", "hard rules the user stated, decisions made,")
    assert tight != lesson_prompt and named != tight
    assert [c.strength for c in assert_as_run_drift(scope, access, lesson_prompt)] == ["rule"] * 3
    assert [c.strength for c in assert_as_run_drift(scope, access, tight, 30)] == ["absent"] * 3
    kept = assert_as_run_drift(scope, access, named, 30)
    rule = "One hard rule: I am allergic to equity instruments, never suggest them."
    assert all(rule in c.summary for c in kept)  # word for word, in every cycle


def test_a_changed_notebook_drift_loop_is_caught():
    scope, access = notebook_drift(mutations=[("if summary:", "if False:")])  # the old summary is not passed on
    with pytest.raises(AssertionError):
        assert_as_run_drift(scope, access, scope["FINCOACH_SUMMARY_PROMPT"])
