"""Slider panels: built from the same render functions as the fixed-value cells; sliders update the readout."""
import pytest

from helpers.display.widgets import (
    budget_panel,
    render_budget,
    render_schedule,
    schedule_panel,
)

PNG = b"\x89PNG\r\n\x1a\n"


def test_schedule_panel_has_the_described_sliders_and_the_lessons_readout():
    panel = schedule_panel()
    assert [s.description for s in panel.sliders.values()] == ["threshold", "keep verbatim", "turns"]
    assert "summariser calls in 10 turns: 4" in panel.text
    assert bytes(panel.image.value).startswith(PNG)


def test_moving_the_schedule_sliders_gives_the_lessons_figures():
    panel = schedule_panel()
    panel.sliders["keep"].value = 3
    assert "summariser calls in 10 turns: 7" in panel.text
    panel.sliders["keep"].value = 2
    panel.sliders["threshold"].value = 6
    assert "summariser calls in 10 turns: 2" in panel.text
    assert "request at turn 10 holds 6 verbatim turns" in panel.text
    panel.sliders["turns"].value = 20
    assert "summariser calls in 20 turns:" in panel.text


def test_keep_verbatim_stays_below_the_threshold():
    panel = schedule_panel(threshold=4, keep=3)
    panel.sliders["threshold"].value = 2
    assert panel.sliders["keep"].value == 1 and panel.sliders["keep"].max == 1
    assert "Summarise after 2 turns, keep 1 verbatim:" in panel.text


def test_budget_panel_readout_is_the_lessons_table():
    panel = budget_panel()
    assert [s.description for s in panel.sliders.values()] == ["budget", "reply tokens", "compress"]
    assert "budget 600: overflows: 3, largest buffer: 592 tokens" in panel.text
    assert "  1500 |         0 |           1142" in panel.text


@pytest.mark.parametrize("slider, value, expected", [
    ("reply_tokens", 150, "   300 |         9 |"),
    ("reply_tokens", 150, "  1500 |         1 |"),
    ("compress", 2, "budget 600: overflows: 5"),
    ("budget", 1500, "budget 1500: overflows: 0"),
])
def test_moving_a_budget_slider_updates_the_readout(slider, value, expected):
    panel = budget_panel()
    before = panel.image.value
    panel.sliders[slider].value = value
    assert expected in panel.text
    assert panel.image.value != before


def test_panel_text_equals_the_fixed_value_render():
    panel = budget_panel(budget=300, reply_tokens=150, compress=4)
    assert panel.text == render_budget(300, 150, 4)[0]
    panel = schedule_panel(threshold=6, keep=2, turns=10)
    assert panel.text == render_schedule(6, 2, 10)[0]


def test_readout_is_html_escaped_text_in_a_pre_block():
    panel = budget_panel()
    assert panel.readout.value.startswith("<pre>") and panel.readout.value.endswith("</pre>")
