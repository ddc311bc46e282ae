"""The lessons' conversations, prompts, settings and published figures, loaded from ``data/``."""
from __future__ import annotations

import functools
import json
from typing import Any

from helpers.base.errors import SettingError
from helpers.base.paths import DATA_DIR

SUMMARISER_PROMPTS = ("summary_memory", "summary_memory_hard_rules", "summary_buffer",
                      "summary_memory_data")  # the last is this project's (notebook 06), not a lesson's
PROMPT_NAMES = ("fincoach_system", *SUMMARISER_PROMPTS)
LESSON_FILES = {"lesson3": "lesson3_summary_memory.json", "lesson4": "lesson4_summary_buffer.json"}
PUBLISHED_RUNS = {3: "reference/lesson3_gpt-oss-120b.json", 4: "reference/lesson4_gpt-oss-120b.json"}


def _choice(setting: str, value: object, choices: Any) -> None:
    if value not in choices:
        raise SettingError(setting, value, f"{setting} must be one of {', '.join(map(str, choices))}, got {value!r}")


def prompt(name: str) -> str:
    """A prompt from ``data/prompts/<name>.txt`` (one of ``PROMPT_NAMES``)."""
    _choice("prompt", name, PROMPT_NAMES)
    return (DATA_DIR / "prompts" / f"{name}.txt").read_text(encoding="utf-8").strip()


@functools.cache
def data_file(relative_path: str) -> dict[str, Any]:
    """A JSON file under ``data/``, read once a process: every caller gets the same object, not a copy."""
    return json.loads((DATA_DIR / relative_path).read_text(encoding="utf-8"))


def summariser_templates(lesson: str) -> dict[str, str]:
    """A lesson's summariser request templates (``first``, ``update``, ``line``), by its name in ``LESSON_FILES``."""
    _choice("lesson", lesson, LESSON_FILES)
    return dict(data_file(LESSON_FILES[lesson])["summariser_request"])


def lesson3() -> dict[str, Any]:
    """Lesson 3 (summary memory): schedule settings, the six-turn run, the drift batches."""
    return data_file(LESSON_FILES["lesson3"])


def lesson4() -> dict[str, Any]:
    """Lesson 4 (summary buffer memory): the budget analysis and the six-turn run."""
    return data_file(LESSON_FILES["lesson4"])


def published_run(lesson: int) -> dict[str, Any]:
    """The model outputs lesson 3 or 4 quotes from its ``openai/gpt-oss-120b`` run (reference data)."""
    _choice("lesson", lesson, PUBLISHED_RUNS)
    return data_file(PUBLISHED_RUNS[lesson])
