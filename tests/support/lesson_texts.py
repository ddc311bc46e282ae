"""The lessons' own published text, for false-alarm tests: every summary and conversation message the
data files hold (not the prompts, headings or notes), and the scripted conversation of notebook 06."""
from __future__ import annotations

from helpers.lessons.data import data_file, lesson3, lesson4, published_run


def lesson_texts() -> list[str]:
    texts = []
    reference3 = published_run(3)
    texts += [reference3["summary_run"]["summary_after_turn_6"], reference3["summary_run"]["turn_6_reply"]]
    texts += [cycle["summary"] for cycle in reference3["drift_run"]["cycles"]]
    texts += lesson3()["summary_run"]["user_turns"]
    texts += [line.split(": ", 1)[1] for batch in lesson3()["drift_run"]["batches"] for line in batch]
    texts += lesson4()["buffer_run"]["user_turns"] + lesson4()["budget_analysis"]["user_messages"]
    reference4 = published_run(4)
    texts += [claim["claim"] for claim in reference4["buffer_run"]["unsupported_claims_in_summary"]]
    texts.append(reference4["buffer_run"]["unsupported_claim_in_turn_6_reply"]["quote"])
    conversation = data_file("security/injection_payloads.json")["conversation"]
    texts += [conversation["benign_turn"]] + [text for turn in conversation["turns"] for text in turn if text]
    return texts
