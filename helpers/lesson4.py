"""Lesson 4 (summary buffer memory): the names notebooks 04-05 use, each imported on first use (04 loads no SDK)."""
from helpers.base.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "helpers.base.tokens": "count_tokens encoding",
    "helpers.lessons.data": "lesson4 prompt",
    "helpers.memory.budget": "analyse_budget budget_table",
    "helpers.memory.summary_buffer": "SummaryBufferMemory",
    "helpers.memory.types": "SettingError",
    "helpers.display.plots": "overflow_bar_chart request_chart summary_buffer_flowchart",
    "helpers.grading.overflows": "check_overflows_at",
    "helpers.grading.runner": "try_it",
    "helpers.grading.summary_cap": "check_summary_cap",
    "helpers.display.lines": "audit_report fold_line lesson4_run_lines lesson4_run_sizes lesson4_unsupported_claims",
    "helpers.display.widgets": "budget_panel render_budget",
    "helpers.model.chat": "chat",
    "helpers.model.connect": "connect",
    "helpers.model.summarisers": "make_summariser",
})
