"""The helpers lesson 3's notebooks added: request printing, the replayed summariser, the billed-token
arithmetic, the audit wording and the drift chart's rule panel (the exercise checks: test_lesson3_exercises)."""
import pytest

from helpers.base.tokens import count_tokens
from helpers.display import plots
from helpers.display.lines import audit_report, request_text
from helpers.lessons.data import lesson3, published_run
from helpers.measure import drift
from helpers.measure.billed_tokens import (
    PromptPoint,
    fit_overhead,
    lesson3_points,
    lesson4_point,
)
from helpers.measure.drift import RecordedSummariser
from helpers.memory.types import SettingError


def test_request_text_shows_every_message_with_its_role_and_size():
    messages = [{"role": "system", "content": "LONG PROMPT"}, {"role": "user", "content": "Hi there.\nSecond line."}]
    text = request_text(messages, known={"LONG PROMPT": "the prompt, shown above"})
    assert text.splitlines()[0] == f"[1] system ({count_tokens('LONG PROMPT')} tokens): the prompt, shown above"
    assert f"[2] user ({count_tokens('Hi there.' + chr(10) + 'Second line.')} tokens)" in text
    assert "    Hi there.\n    Second line." in text
    brief = request_text(messages, first_line_over=4)  # over 4 tokens: the first line, marked as cut
    assert brief.splitlines()[-1] == "    Hi there. [...]" and "Second line." not in brief
    assert "    LONG PROMPT" in brief and brief.count("[...]") == 1  # 3 tokens: shown whole
    assert "[...]" not in request_text(messages[:1], first_line_over=1)  # one line only: nothing to cut


def test_recorded_summariser_replays_in_order_and_refuses_a_different_run():
    summaries = [c["summary"] for c in published_run(3)["drift_run"]["cycles"]]
    run = drift.run_drift(RecordedSummariser(summaries, "lesson"), lesson3()["drift_run"]["batches"])
    assert [c.summary for c in run] == summaries
    assert [c.strength for c in run] == ["rule", "rule", "preference"]
    assert [c.batch_tokens for c in run] == lesson3()["drift_run"]["published_batch_tokens"]
    replay = RecordedSummariser(summaries[:1], "lesson")
    replay([{"role": "user", "content": "x"}], None)
    with pytest.raises(SettingError) as refused:
        replay([{"role": "user", "content": "y"}], summaries[0])
    assert (refused.value.setting, refused.value.value) == ("calls", 2)
    with pytest.raises(SettingError) as refused:
        RecordedSummariser(summaries, "lesson")([{"role": "user", "content": "x"}], "another summary")
    assert refused.value.setting == "existing_summary"


def test_billed_token_points_rebuild_the_lessons_counts():
    points = lesson3_points()
    assert [(p.messages, p.counted, p.billed) for p in points] == [(2, 155, 229), (6, 648, 742), (7, 756, 857)]
    assert all(p.how.endswith(f"= {p.counted}") for p in points)
    overhead = fit_overhead(points)
    assert 60 < overhead.fixed < 66 and 4.5 < overhead.per_message < 6
    assert all(abs(overhead.predict(p.messages) - p.gap) < 1.5 for p in [*points, lesson4_point()])
    assert lesson4_point().gap == 830 - 739


def test_fit_needs_two_message_counts():
    with pytest.raises(SettingError) as refused:
        fit_overhead([PromptPoint("a", 2, 1, 5, ""), PromptPoint("b", 2, 1, 6, "")])
    assert refused.value.setting == "points"


def test_audit_heading_and_lines_speak_of_user_messages():
    users_only = [{"role": "user", "content": "I earn ₹1,20,000."}]
    text = audit_report("He earns ₹1,20,000 and saves ₹30,000.", users_only)
    head, line = text.splitlines()
    assert "none of the 1 user messages" in head and head.endswith(": 1")
    assert "in no user message (the replies were not available to check)" in line
    with_reply = [*users_only, {"role": "assistant", "content": "Fine."}]
    assert "in no user message, and in no reply either" in audit_report("He saves ₹30,000.", with_reply)


def test_drift_chart_draws_rule_against_preference_per_cycle():
    cycles = [c["summary"] for c in published_run(3)["drift_run"]["cycles"]]
    series = drift.chart_series(drift.measure(cycles, [82, 71, 66]))
    fig = plots.drift_chart({"lesson": series})
    assert len(fig.axes) == 3
    (line,) = fig.axes[2].get_lines()
    levels = [round(y) for y in line.get_ydata()]
    assert levels == [plots.STRENGTHS.index(s) for s in ("rule", "rule", "preference")]
    assert [t.get_text() for t in fig.axes[2].get_yticklabels()] == list(plots.STRENGTHS)


def test_drift_chart_is_readable_on_a_projector():
    """Shown 900 px wide (a 1024x768 projector), its smallest letters are still 14 px high."""
    cycles = [c["summary"] for c in published_run(3)["drift_run"]["cycles"]]
    series = drift.chart_series(drift.measure(cycles, [82, 71, 66]))
    fig = plots.drift_chart({"lesson's run (reference)": series, "this run": series, "hard-rules prompt": series})
    fig.canvas.draw()
    texts = [t for t in fig.findobj(plots.Text) if t.get_visible() and t.get_text().strip()]
    scale = min(1.0, 900 / (fig.get_figwidth() * plots.DISPLAY_DPI))
    assert min(t.get_fontsize() for t in texts) * plots.DISPLAY_DPI / 72 * scale >= 14
