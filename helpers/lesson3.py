"""Lesson 3 (summary memory): the names notebooks 01-03 use, each imported on first use (01 loads no SDK)."""
from helpers.base.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "helpers.base.paths": "NOTEBOOKS_DIR",
    "helpers.base.text": "stated_word_limit word_count",
    "helpers.base.tokens": "encoding",
    "helpers.lessons.data": "lesson3 prompt published_run",
    "helpers.memory.sliding_window": "SlidingWindowMemory",
    "helpers.memory.summary": "SummaryMemory",
    "helpers.memory.types": "SummariserError",
    "helpers.measure": "drift",
    "helpers.grading.calls": "check_calls_formula",
    "helpers.grading.rule_check": "RULE_WORDS check_rule_check",
    "helpers.grading.window": "check_window_memory",
    "helpers.display.lines": "HEADING audit_report comparison_table cycle_line lesson3_run_lines request_text",
    "helpers.display.widgets": "render_schedule schedule_panel",
    "helpers.model.chat": "chat",
    "helpers.model.connect": "connect",
    "helpers.model.offline.facts": "fact_score split_sentences",
})
