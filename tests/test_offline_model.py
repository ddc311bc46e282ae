"""The offline stand-in: extractive summaries within the word limit, short replies grounded in the request and
marked, written replies for the course's own conversations, deterministic, usage counted in o200k_base."""
from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.base.text import messages_from_lines, word_count
from helpers.base.tokens import count_tokens
from helpers.lessons.data import lesson3, lesson4, prompt
from helpers.measure import drift
from helpers.model.offline import facts, markers, replies, server, summariser
from helpers.model.offline.replies import REPLIES_DIR, written_reply
from helpers.model.summarisers import build_summariser_request, make_summariser, request_templates

SYSTEM, RULE = prompt("fincoach_system"), "One hard rule: I am allergic to equity instruments, never suggest them."
SALARY = "My monthly take-home salary is ₹1,20,000."
SALARY_TURN = f"Hi! I'm Chiru. {SALARY}"
L3_TURNS, L4_TURNS = lesson3()["summary_run"]["user_turns"], lesson4()["buffer_run"]["user_turns"]
SELF_DESCRIPTION = re.compile(r"(?i)language model|deterministic|stand-in, not|this request holds|live or replay")


def summary_request(messages, existing=None, name="summary_memory", templates="lesson3", words=None):
    return build_summariser_request(messages, existing, system_prompt=prompt(name),
                                    templates=request_templates(templates), condense_words=words)


def reply(messages, **body) -> str:
    return server.respond({"model": "any", "messages": messages, **body})["choices"][0]["message"]["content"]


def summary_block(*sentences):
    """A second system message as the memories send it, holding a stand-in summary of these sentences."""
    return {"role": "system", "content": "CONVERSATION MEMORY (earlier turns, compressed):\n" + markers.SUMMARY_MARKER
            + " User: " + " ".join(sentences)}


def test_the_summary_copies_fact_sentences_merges_the_old_one_and_keeps_the_word_limit():
    summary, source = None, ""
    for batch in (messages_from_lines(lines) for lines in lesson3()["drift_run"]["batches"]):
        summary, source = reply(summary_request(batch, summary)), source + " ".join(m["content"] for m in batch)
        assert summary.count(markers.SUMMARY_MARKER) == 1 and word_count(summary) <= 80  # "at most 80 words"
        assert all(sentence in source for _, sentence in summariser.summary_sentences(summary))  # copied
    assert RULE in summary and "₹1,20,000" in summary and "32 years old" in summary and "Hi!" not in summary


def test_the_condense_request_obeys_its_own_limit_and_a_prompt_naming_hard_rules_ranks_the_rule_first():
    long_summary = markers.SUMMARY_MARKER + " User: " + " ".join(
        [SALARY, "I am allergic to equity, never suggest it.", "I want to retire by 55.", "I'm Chiru."] * 3)
    short = reply(summary_request([], long_summary, words=25))
    assert word_count(short) <= 25 and "₹1,20,000" in short and "never suggest it" in short
    user = summary_request([{"role": "user", "content": "I earn ₹1,20,000 a month. My rent is ₹30,000. My FD is "
                                                        "₹50,000. Never suggest crypto."}])[1]
    rules = {"role": "system", "content": "You are summarising. Preserve hard rules the user stated. At most 12 words."}
    plain = {"role": "system", "content": "You are summarising. Write at most 12 words."}
    assert "Never suggest crypto." in reply([rules, user]) and "Never suggest crypto." not in reply([plain, user])


@pytest.mark.parametrize("limit, plain_keeps", [(30, False), (36, False), (37, True), (80, True)])
def test_a_tighter_word_limit_drops_the_equity_rule_and_a_prompt_naming_hard_rules_keeps_it(offline_access, limit,
                                                                                            plain_keeps):
    def cycles(name):  # lesson 3's drift run with the prompt's limit changed, as notebook 03 does
        text = prompt(name).replace("at most 80 words", f"at most {limit} words")
        return drift.run_drift(make_summariser(offline_access, text), lesson3()["drift_run"]["batches"],
                               word_limit=limit)

    plain, hard_rules = cycles("summary_memory"), cycles("summary_memory_hard_rules")
    assert not any(cycle.over_limit for cycle in plain + hard_rules)
    assert [RULE in cycle.summary for cycle in plain] == [plain_keeps] * 3  # a dropped sentence never comes back
    assert all(RULE in cycle.summary and cycle.strength == "rule" for cycle in hard_rules)


def test_a_fact_asked_for_is_quoted_from_where_the_request_holds_it_or_said_not_to_be_sent():
    question = {"role": "user", "content": L3_TURNS[-1]}
    from_summary = reply([{"role": "system", "content": SYSTEM}, summary_block(SALARY), question])
    from_turns = reply([{"role": "system", "content": SYSTEM}, {"role": "user", "content": SALARY_TURN},
                        {"role": "assistant", "content": "[offline stand-in] Noted."}, question])
    written = "\n\n" + written_reply(L3_TURNS[-1])  # a lesson's question: the written reply follows
    assert from_summary == f'{markers.MARKER} From the summary: "{SALARY}"' + written
    assert from_turns == f'{markers.MARKER} From the recent turns: "{SALARY}"' + written
    system_numbers = {"role": "system", "content": "You are FinCoach. The user's salary is ₹9,99,999."}
    assert reply([system_numbers, question]).startswith(f"{markers.MARKER} I do not have your salary in what I")
    advice = [{"role": "user", "content": "Hello."}, {"role": "assistant", "content": "Invest ₹25,000 in a debt fund."},
              {"role": "user", "content": "What are my investments?"}]  # the assistant's words are not the user's
    assert reply(advice) == f"{markers.MARKER} I do not have your investments in what I was sent."


def test_a_message_that_tells_and_asks_is_noted_and_answered_and_advice_is_not_given():
    told = [summary_block(SALARY), {"role": "user", "content": "I am 41. What is my salary, and how old am I?"}]
    assert reply(told) == f'{markers.MARKER} Noted: your age. From the summary: "{SALARY}"'
    debts = [summary_block(SALARY), {"role": "user", "content": "My rent is ₹30,000. What are my debts?"}]
    assert reply(debts) == f"{markers.MARKER} Noted: your expenses. I do not have your debts in what I was sent."
    for text in ("Give me a complete monthly investment breakdown.",
                 "How much should I invest monthly to build a ₹2 crore corpus by 55?"):
        fd = "I have an FD of ₹50,000 maturing next quarter."
        assert reply([summary_block(fd), {"role": "user", "content": text}]) == (
            f'{markers.MARKER} From the summary: "{fd}" I cannot advise offline.'), text
    general = reply([{"role": "user", "content": "What is the difference between PPF and NPS?"}])
    assert general == f"{markers.MARKER} I cannot answer that offline." and reply(
        [{"role": "user", "content": "Thanks!"}]) == f"{markers.MARKER} Noted."


def test_the_written_replies_are_one_per_message_and_matched_whatever_the_spacing():
    seen = {}
    for path in sorted(REPLIES_DIR.glob("*.json")):
        for entry in json.loads(path.read_text(encoding="utf-8"))["replies"]:
            user = " ".join(entry["user"].split())
            assert entry["reply"].strip() and seen.setdefault(user, entry["reply"].strip()) == entry["reply"].strip()
    assert written_reply(" " + L3_TURNS[0].replace(" ", "\n ", 2)) == seen[L3_TURNS[0]] and not written_reply("Hi!")


def test_usage_counts_o200k_a_long_reply_is_cut_at_max_tokens_and_no_messages_is_a_400():
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": SALARY_TURN}]
    first = server.respond({"messages": messages, "max_tokens": 100})
    assert first == server.respond({"messages": messages, "max_tokens": 100}) and first["model"] == markers.MODEL_NAME
    assert first["usage"]["prompt_tokens"] == count_tokens(SYSTEM) + count_tokens(SALARY_TURN)
    cut = server.respond({"messages": [{"role": "user", "content": "What is a SIP and how does it work?"}],
                          "max_tokens": 5})
    assert cut["choices"][0]["finish_reason"] == "length" and cut["usage"]["completion_tokens"] <= 5
    status, body = server.answer({"model": "any"})
    assert status == 400 and body["error"]["type"] == "invalid_request_error"


LESSON_FACTS = [s for text in L3_TURNS + L4_TURNS for s in facts.split_sentences(text) if facts.fact_score(s)]
QUESTIONS = [L4_TURNS[4], L4_TURNS[5], L3_TURNS[-1], "How old am I?", "What are my debts?", "Never suggest gold.",
             "I am 41. What is my name?", "Is my ₹2 crore corpus by 55 realistic?"]


@settings(max_examples=40, deadline=None)
@given(in_summary=st.lists(st.sampled_from(LESSON_FACTS), max_size=3, unique=True),
       turns=st.lists(st.sampled_from(LESSON_FACTS + ["Thanks!", "Okay."]), max_size=3),
       last=st.sampled_from(QUESTIONS + LESSON_FACTS))
def test_any_reply_is_short_grounded_marked_and_deterministic(in_summary, turns, last):
    messages = [{"role": "system", "content": SYSTEM + " Example: a salary of ₹9,99,999."}]
    messages += [summary_block(*in_summary)] if in_summary else []
    for text in turns:
        messages += [{"role": "user", "content": text}, {"role": "assistant", "content": "[offline stand-in] Noted."}]
    full = reply(messages + [{"role": "user", "content": last}])
    written = written_reply(last)
    text = full if written is None else full.removesuffix(written).rstrip()
    assert full.startswith(markers.MARKER) and full.count(markers.MARKER) == 1 and (written is None or text != full)
    assert count_tokens(re.sub(r'"[^"]*"', '""', text)) <= 30 and not SELF_DESCRIPTION.search(text)
    earlier = in_summary + turns  # every quote and amount is one the user stated earlier, never the system prompt's
    assert all(any(quote in sentence for sentence in earlier) for quote in re.findall(r'"([^"]+)"', text))
    assert all(any(amount in sentence for sentence in earlier) for amount in re.findall(r"₹[\d,]+", text))
    held = {topic for s in earlier + [last] if facts.fact_score(s) for topic in replies.sentence_topics(s)}
    if missing := re.search(r"I do not have your (.*) in what I was sent\.", text):  # missing only if not held
        assert not held & {topic for topic in replies._TOPICS if topic in missing.group(1)}


@settings(max_examples=30, deadline=None)
@given(texts=st.lists(st.sampled_from(L3_TURNS + L4_TURNS + ["Okay.", "Never buy gold for me."]), min_size=1,
                      max_size=8), limit=st.integers(min_value=8, max_value=120), existing=st.booleans())
def test_any_summary_keeps_the_limit_and_copies_only_source_sentences(texts, limit, existing):
    messages = [{"role": ("user", "assistant")[i % 2], "content": text} for i, text in enumerate(texts)]
    request = [{"role": "system", "content": f"You are summarising. Write at most {limit} words."},
               summary_request(messages, reply(summary_request(messages[:2])) if existing else None)[1]]
    summary = reply(request)
    assert word_count(summary) <= limit and summary.startswith(markers.SUMMARY_MARKER)
    assert all(sentence.removesuffix("…") in " ".join(texts) or sentence == "No facts stated yet."
               for _, sentence in summariser.summary_sentences(summary))
