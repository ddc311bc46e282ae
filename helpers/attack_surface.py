"""Notebook 06, the summary as an attack surface: every name it uses from ``helpers``, each imported on first use."""
from helpers.base.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "helpers.base": "signing tokens",
    "helpers.lessons.data": "prompt",
    "helpers.memory.defences": "Defences",
    "helpers.memory.erasure": "forget",
    "helpers.memory.sliding_window": "SlidingWindowMemory",
    "helpers.memory.state": "load save",
    "helpers.memory.summary": "SummaryMemory",
    "helpers.memory.summary_check": "assistant_names check_summary",
    "helpers.measure": "LESSON_KINDS",
    "helpers.measure.attacks": "attack_rates corpus measure_check ordinary_run payload roles_holding "
                               "run_attacks where_it_is",
    "helpers.display.attack_chart": "attack_chart attack_table_text check_table_text",
    "helpers.model.connect": "connect",
    "helpers.model.responses": "adapt",
    "helpers.model.recordings": "Recording",
    "helpers.model.summarisers": "make_summariser summariser_for",
})
