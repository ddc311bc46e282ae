"""The lessons' own published text, for false-alarm tests: every summary and conversation message the
data files hold (not the prompts, headings or notes), and the scripted conversation of notebook 06."""
from __future__ import annotations

import json

from helpers.base.paths import DATA_DIR


def _load(relative: str) -> dict:
    return json.loads((DATA_DIR / relative).read_text(encoding="utf-8"))


def lesson_texts() -> list[str]:
    texts = []
    reference3 = _load("reference/lesson3_gpt-oss-120b.json")
    texts += [reference3["summary_run"]["summary_after_turn_6"], reference3["summary_run"]["turn_6_reply"]]
    texts += [cycle["summary"] for cycle in reference3["drift_run"]["cycles"]]
    lesson3 = _load("lesson3_summary_memory.json")
    texts += lesson3["summary_run"]["user_turns"]
    texts += [line.split(": ", 1)[1] for batch in lesson3["drift_run"]["batches"] for line in batch]
    lesson4 = _load("lesson4_summary_buffer.json")
    texts += lesson4["buffer_run"]["user_turns"] + lesson4["budget_analysis"]["user_messages"]
    reference4 = _load("reference/lesson4_gpt-oss-120b.json")
    texts += [claim["claim"] for claim in reference4["buffer_run"]["unsupported_claims_in_summary"]]
    texts.append(reference4["buffer_run"]["unsupported_claim_in_turn_6_reply"]["quote"])
    conversation = _load("security/injection_payloads.json")["conversation"]
    texts += [conversation["benign_turn"]] + [text for turn in conversation["turns"] for text in turn if text]
    return texts
