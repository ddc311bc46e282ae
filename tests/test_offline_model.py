"""The offline stand-in: extractive, within the word limit, short grounded replies, marked, deterministic (issues 3, 17)."""
from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.base.errors import SettingError
from helpers.base.text import messages_from_lines, stated_word_limit, word_count
from helpers.base.tokens import count_tokens
from helpers.lessons.data import lesson3, lesson4, prompt
from helpers.measure import drift
from helpers.memory.summary import SummaryMemory
from helpers.model.chat import chat
from helpers.model.connect import connect
from helpers.model.offline import facts, markers, replies, server, summariser
from helpers.model.offline.replies import written_reply
from helpers.model.summarisers import build_summariser_request, make_summariser, request_templates

SYSTEM = prompt("fincoach_system")
SALARY_TURN = "Hi! I'm Chiru. My monthly take-home salary is ₹1,20,000."
SALARY_QUESTION = lesson3()["summary_run"]["user_turns"][-1]
L4_TURNS = lesson4()["buffer_run"]["user_turns"]


def summary_request(messages, existing=None, prompt_name="summary_memory", templates="lesson3", words=None):
    return build_summariser_request(messages, existing, system_prompt=prompt(prompt_name),
                                    templates=request_templates(templates), condense_words=words)


def reply(messages, **body):
    return server.respond({"model": "any", "messages": messages, **body})


def text_of(response):
    return response["choices"][0]["message"]["content"]


def grounded_part(text):
    """A reply without the written reply that follows its grounded line(s) for a lesson's message."""
    return text.split("\n\n")[0]


def drift_batches():
    return [messages_from_lines(batch) for batch in lesson3()["drift_run"]["batches"]]


# ----- the extractive summariser -----------------------------------------------------------------

def test_summariser_requests_of_both_lessons_are_recognised_and_chat_requests_are_not():
    turns = [{"role": "user", "content": SALARY_TURN}, {"role": "assistant", "content": "Noted."}]
    for name, templates in (("summary_memory", "lesson3"), ("summary_buffer", "lesson4")):
        assert summariser.is_summariser_request(summary_request(turns, None, name, templates))
        assert summariser.is_summariser_request(summary_request(turns, "Old summary.", name, templates))
    assert summariser.is_summariser_request(summary_request([], "A long summary to shorten.", words=20))
    assert not summariser.is_summariser_request([{"role": "system", "content": SYSTEM}, *turns[:1]])


def test_the_summary_keeps_the_fact_sentences_word_for_word_and_drops_the_rest():
    batch = drift_batches()[0]
    summary = text_of(reply(summary_request(batch)))
    assert summary.startswith(markers.SUMMARY_MARKER)
    assert "My monthly take-home salary is ₹1,20,000 and my expenses are ₹60,000." in summary
    assert "One hard rule: I am allergic to equity instruments, never suggest them." in summary
    assert "Hi!" not in summary and "What are your goals?" not in summary  # no fact: dropped
    # extractive: every sentence it wrote is copied from the source
    source = " ".join(m["content"] for m in batch)
    for _, sentence in summariser.summary_sentences(summary):
        assert sentence in source


def test_the_summary_merges_the_old_one_without_piling_up_markers_and_keeps_the_word_limit():
    summary = None
    for batch in drift_batches():
        summary = text_of(reply(summary_request(batch, summary)))
        assert summary.count(markers.SUMMARY_MARKER) == 1
        assert word_count(summary) <= 80  # the prompt says "at most 80 words"
    assert "₹1,20,000" in summary and "never suggest them" in summary  # the rule is kept verbatim
    assert "32 years old" in summary and "₹50,000" in summary


def test_the_condense_request_obeys_its_own_limit_and_keeps_the_top_facts():
    long_summary = markers.SUMMARY_MARKER + " User: " + " ".join(
        ["My monthly take-home salary is ₹1,20,000.", "I am allergic to equity, never suggest it.",
         "I have an FD of ₹50,000 maturing in 3 months.", "I want to retire by 55.", "I'm Chiru."] * 3)
    request = summary_request([], long_summary, words=25)
    assert "at most 25 words" in request[1]["content"]
    short = text_of(reply(request))
    assert word_count(short) <= 25
    assert "₹1,20,000" in short and "never suggest it" in short


def test_a_prompt_naming_hard_rules_ranks_the_rule_above_other_facts():
    turns = [{"role": "user", "content": "I earn ₹1,20,000 a month. My rent is ₹30,000. My FD is ₹50,000. "
                                         "Never suggest crypto."}]
    tight = {"role": "system", "content": "You are summarising. Preserve hard rules the user stated. "
                                          "Write at most 12 words."}
    plain = {"role": "system", "content": "You are summarising. Write at most 12 words."}
    user = summary_request(turns)[1]
    assert "Never suggest crypto." in text_of(reply([tight, user]))
    assert "Never suggest crypto." not in text_of(reply([plain, user]))  # equal rank: the newest goes first


RULE = "One hard rule: I am allergic to equity instruments, never suggest them."


def drift_with_limit(prompt_name, limit):
    """Lesson 3's drift run offline, with the prompt's "at most 80 words" changed to ``limit`` (as notebook 03 does)."""
    text = prompt(prompt_name)
    assert "at most 80 words" in text
    access = connect("offline", load_env=False, quiet=True)
    summarise = make_summariser(access, text.replace("at most 80 words", f"at most {limit} words"))
    return drift.run_drift(summarise, lesson3()["drift_run"]["batches"], word_limit=limit)


@pytest.mark.parametrize("limit", [20, 30, 36])
def test_a_tighter_word_limit_drops_the_equity_rule_and_a_prompt_naming_hard_rules_keeps_it(limit):
    plain = drift_with_limit("summary_memory", limit)
    hard_rules = drift_with_limit("summary_memory_hard_rules", limit)
    assert all(not cycle.over_limit for cycle in plain + hard_rules)
    # the stand-in really loses the rule: at the first fold it ties with the amounts and, the newest, goes first
    assert not plain[0].mentions_keyword and "₹1,20,000" in plain[0].summary
    assert [cycle.strength for cycle in plain] == ["absent"] * 3  # a dropped sentence never comes back
    # naming hard rules ranks the rule above every other fact: kept word for word in every cycle
    assert all(RULE in cycle.summary and cycle.strength == "rule" for cycle in hard_rules)


def test_the_lessons_limit_and_40_words_keep_the_rule_with_either_prompt():
    """The loss needs a limit of 36 words or fewer, where the first fold cannot keep the rule beside the two
    amount sentences; facts already in the summary are kept longest, so a later batch never pushes it out."""
    for limit in (80, 40, 37):
        for name in ("summary_memory", "summary_memory_hard_rules"):
            assert all(RULE in cycle.summary for cycle in drift_with_limit(name, limit)), (name, limit)


def test_stated_word_limits_are_read_from_prompts():
    assert stated_word_limit(prompt("summary_memory")) == 80
    assert stated_word_limit("Keep it to 50 words or fewer.") == 50
    assert stated_word_limit("Summarise briefly.") is None


# ----- grounded chat replies ----------------------------------------------------------------------

def summary_block(*sentences, heading="CONVERSATION MEMORY (earlier turns, compressed):\n"):
    """A second system message as the memories send it, holding a stand-in summary of these sentences."""
    return {"role": "system", "content": heading + markers.SUMMARY_MARKER + " User: " + " ".join(sentences)}


def quoted_in(text):
    return re.findall(r'"([^"]+)"', text)


def own_words(text):
    """What the stand-in says in its own words: the reply without the sentences it quotes."""
    return re.sub(r'"[^"]*"', '""', text)


SELF_DESCRIPTION = re.compile(r"(?i)language model|deterministic|stand-in, not|this request holds|"
                              r"live or replay|system prompt \(")


def test_it_finds_the_salary_only_when_the_request_holds_it_and_says_where():
    summary = "CONVERSATION SUMMARY (earlier turns):\n" + text_of(reply(summary_request(
        [{"role": "user", "content": SALARY_TURN}, {"role": "assistant", "content": "Noted."}])))
    question = {"role": "user", "content": SALARY_QUESTION}
    from_summary = text_of(reply([{"role": "system", "content": SYSTEM}, {"role": "system", "content": summary},
                                  question]))
    from_turns = text_of(reply([{"role": "system", "content": SYSTEM}, {"role": "user", "content": SALARY_TURN},
                                {"role": "assistant", "content": "[offline stand-in] Noted."}, question]))
    without = text_of(reply([{"role": "system", "content": SYSTEM},
                             {"role": "user", "content": "My monthly expenses are about ₹60,000."},
                             {"role": "assistant", "content": "Noted."}, question]))
    salary = "My monthly take-home salary is ₹1,20,000."
    written = "\n\n" + written_reply(SALARY_QUESTION)  # a lesson's question: the written reply follows
    assert from_summary == f'{markers.MARKER} From the summary: "{salary}"' + written
    assert from_turns == f'{markers.MARKER} From the recent turns: "{salary}"' + written
    assert without == f"{markers.MARKER} I do not have your salary in what I was sent." + written  # nothing else
    for text in (from_summary, from_turns, without):
        assert count_tokens(grounded_part(text)) <= 40
    assert "1,20,000" not in written  # the written reply never supplies the fact the memory must keep


def test_a_statement_is_acknowledged_in_a_few_words_that_name_its_topics_and_repeat_no_value():
    messages = [{"role": "system", "content": SYSTEM},
                summary_block("I'm Chiru.", "My monthly take-home salary is ₹1,20,000."),
                {"role": "user", "content": "My monthly expenses are ₹60,000. I'm 32 years old and risk-averse."},
                {"role": "assistant", "content": "[offline stand-in] Noted: your expenses, age and risk profile."},
                {"role": "user", "content": L4_TURNS[3]}]  # "My financial goal is to retire by 55 ..."
    text = grounded_part(text_of(reply(messages)))
    assert text.startswith(markers.MARKER + " Noted") and "goal" in text
    assert count_tokens(text) <= 20 and not quoted_in(text)
    # neither the values told earlier nor the one just told: whether a fact stays in the recent turns is
    # the memory's doing, never a copy in the stand-in's reply
    for value in ("₹1,20,000", "₹60,000", "32", "Chiru", "55", "salary", "expenses"):
        assert value not in text
    rule = text_of(reply([{"role": "user", "content": "Do not suggest gold to me, ever."}]))
    assert rule.startswith(markers.MARKER + " Noted") and "hard rules" in rule  # "Do ..." but not a question
    assert text_of(reply([{"role": "user", "content": "Thanks!"}])) == f"{markers.MARKER} Noted."


def test_a_general_question_gets_one_short_line_saying_it_cannot_answer_offline():
    summary = summary_block("My monthly take-home salary is ₹1,20,000.")
    turns = [{"role": "user", "content": L4_TURNS[1]},
             {"role": "assistant", "content": "[offline stand-in] Noted: your expenses, age and risk profile."},
             {"role": "user", "content": "What is the difference between PPF and NPS?"}]  # no written reply
    text = text_of(reply([{"role": "system", "content": SYSTEM}, summary, *turns]))
    assert "cannot answer that offline" in text and count_tokens(text) <= 15
    assert not SELF_DESCRIPTION.search(text)  # said once, by connect()'s mode line, not in every reply
    for value in ("₹1,20,000", "₹60,000", "32"):
        assert value not in text


def test_a_question_about_several_facts_quotes_each_from_where_it_is():
    messages = [{"role": "system", "content": SYSTEM},
                summary_block("Hi!", "I'm Chiru.", "My monthly take-home salary is ₹1,20,000."),
                {"role": "user", "content": "My monthly expenses are ₹60,000. I'm 32 years old and risk-averse."},
                {"role": "assistant", "content": "[offline stand-in] Noted: your expenses, age and risk profile."},
                {"role": "user", "content": L4_TURNS[5]}]  # "Based on my salary and risk profile, which one ...?"
    text = text_of(reply(messages))
    grounded = (f'{markers.MARKER} From the summary: "My monthly take-home salary is ₹1,20,000." '
                f'From the recent turns: "I\'m 32 years old and risk-averse."')
    assert text == grounded + "\n\n" + written_reply(L4_TURNS[5])  # advice: the written reply, not "cannot advise"
    assert count_tokens(grounded) <= 45 and "1,20,000" not in written_reply(L4_TURNS[5])
    shorter = dict(messages[-1], content=L4_TURNS[5].replace("Based on", "Given"))  # no written reply
    assert text_of(reply(messages[:-1] + [shorter])) == grounded + " I cannot advise offline."


def test_a_message_that_tells_and_asks_is_noted_and_answered_and_what_it_tells_is_not_missing():
    messages = [{"role": "system", "content": SYSTEM}, summary_block("My monthly take-home salary is ₹1,20,000."),
                {"role": "user", "content": "I am 41 years old. What is my salary, and how old am I?"}]
    text = text_of(reply(messages))
    assert text == f'{markers.MARKER} Noted: your age. From the summary: "My monthly take-home salary is ₹1,20,000."'
    asked = text_of(reply(messages[:2] + [{"role": "user", "content": "My rent is ₹30,000. What are my debts?"}]))
    assert asked == f"{markers.MARKER} Noted: your expenses. I do not have your debts in what I was sent."


def test_a_request_for_advice_is_not_taken_for_a_statement_nor_for_a_question_about_what_was_said():
    history = [{"role": "system", "content": SYSTEM},
               summary_block("I have an FD of ₹50,000 maturing next quarter.")]
    for text in ("Give me a complete monthly investment breakdown.",  # an imperative, no question mark
                 "How much should I invest monthly to build a ₹2 crore corpus by 55?"):  # states its own goal
        answer = text_of(reply(history + [{"role": "user", "content": text}]))
        assert answer == (f'{markers.MARKER} From the summary: "I have an FD of ₹50,000 maturing next quarter." '
                          "I cannot advise offline."), text


def test_the_system_prompt_is_not_a_source_of_facts():
    system_with_numbers = {"role": "system", "content": "You are FinCoach. The user's salary is ₹9,99,999."}
    answer = text_of(reply([system_with_numbers, {"role": "user", "content": "What is my salary?"}]))
    assert "9,99,999" not in answer and "do not have your salary" in answer


def test_the_assistants_replies_are_not_facts_about_the_user():
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Hello."},
                {"role": "assistant", "content": "You should invest ₹25,000 a month in a debt fund."},
                {"role": "user", "content": "What are my investments?"}]
    text = text_of(reply(messages))
    assert "₹25,000" not in text and "do not have your investments" in text


def test_lesson_3_turn_6_is_answered_from_the_summary_and_a_sliding_window_has_nothing_to_answer_from():
    access = connect("offline", load_env=False, quiet=True)
    memory = SummaryMemory(SYSTEM, make_summariser(access, "summary_memory"), **lesson3()["summary_run"]["settings"])
    records = [chat(memory, text, access, watch="1,20,000") for text in lesson3()["summary_run"]["user_turns"]]
    turn_6 = records[-1]
    assert turn_6.summary_sent and not turn_6.watch_in_verbatim  # the salary is in no verbatim turn ...
    assert grounded_part(turn_6.reply) == f'{markers.MARKER} From the summary: "My monthly take-home salary is ₹1,20,000."'
    window = [message for message in turn_6.request if "SUMMARY" not in message["content"]]  # ... a window's request
    assert len(window) == len(turn_6.request) - 1
    assert grounded_part(text_of(reply(window))) == f"{markers.MARKER} I do not have your salary in what I was sent."
    # the replies have the lesson's lengths (a coach's answer after the grounded line), so the fold saves tokens
    assert all(180 <= record.completion_tokens <= 320 for record in records[:5])
    assert records[4].prompt_tokens < records[3].prompt_tokens  # the lesson's 997 then 857
    assert all(count_tokens(grounded_part(record.reply)) <= 40 for record in records)
    assert not any(SELF_DESCRIPTION.search(record.reply) for record in records)
    assert all(record.reply.count(markers.MARKER) == 1 and record.reply.startswith(markers.MARKER)
               for record in records)


LESSON_FACTS = [sentence for text in lesson3()["summary_run"]["user_turns"] + L4_TURNS
                for sentence in facts.split_sentences(text) if facts.fact_score(sentence)]
ASIDES = ["Thanks!", "Okay.", "Hello again."]
QUESTIONS = [L4_TURNS[4], L4_TURNS[5], SALARY_QUESTION, "How old am I?", "What are my debts?",
             "I will open a PPF account this month.", "Never suggest gold to me.", "I am 41. What is my name?",
             "Give me a complete monthly investment breakdown.", "Is my ₹2 crore corpus by 55 realistic?"]


@settings(max_examples=80, deadline=None)
@given(in_summary=st.lists(st.sampled_from(LESSON_FACTS), max_size=4, unique=True),
       turns=st.lists(st.sampled_from(LESSON_FACTS + ASIDES), min_size=0, max_size=4),
       last=st.sampled_from(QUESTIONS + LESSON_FACTS))
def test_any_reply_is_short_grounded_marked_and_deterministic(in_summary, turns, last):
    messages = [{"role": "system", "content": SYSTEM + " Example: a salary of ₹9,99,999."}]
    if in_summary:
        messages.append(summary_block(*in_summary))
    for text in turns:
        messages += [{"role": "user", "content": text}, {"role": "assistant", "content": "[offline stand-in] Noted."}]
    messages.append({"role": "user", "content": last})
    full = text_of(reply(messages))
    assert full == text_of(reply(messages)) and full.startswith(markers.MARKER) and full.count(markers.MARKER) == 1
    written = written_reply(last)  # a lesson's message: a written reply follows the grounded line(s)
    text = full if written is None else full.removesuffix(written).rstrip()
    assert written is None or full.endswith(written)
    # short: what it says in its own words stays a line or two, however much the request holds
    assert count_tokens(own_words(text)) <= 30 and not SELF_DESCRIPTION.search(text)
    # every quote is a sentence the user stated earlier (the summary or a recent turn), said with where it is
    earlier = in_summary + turns
    for quote in quoted_in(text):
        assert any(quote in sentence for sentence in earlier), quote
    for amount in re.findall(r"₹[\d,]+", text):
        assert any(amount in sentence for sentence in earlier), amount
    assert "9,99,999" not in text  # the system prompt is not the user's
    if "From the summary" in text:
        assert any(quote in sentence for sentence in in_summary for quote in quoted_in(text))
    # a value is quoted only when the latest message asks about its topic
    asked = set(replies._topics(replies._words(last))) if replies._asks(last) else set()
    for sentence in earlier:
        for amount in re.findall(r"₹[\d,]+", sentence):
            if amount in text:
                assert asked & set(replies.sentence_topics(sentence)), (amount, last)
    # a topic is said to be missing only if no fact the request holds is about it
    held = {topic for sentence in earlier + [last] if facts.fact_score(sentence)
            for topic in replies.sentence_topics(sentence)}
    missing = re.search(r"I do not have your (.*) in what I was sent\.", text)
    if missing:
        assert not held & {topic for topic in replies._TOPICS if topic in missing.group(1)}


def test_the_summary_never_copies_the_stand_ins_own_replies():
    turns = [{"role": "user", "content": L4_TURNS[0]}]
    turns.append({"role": "assistant", "content": text_of(reply([{"role": "system", "content": SYSTEM}, *turns]))})
    turns.append({"role": "user", "content": "What is my monthly take-home salary?"})
    turns.append({"role": "assistant", "content": text_of(reply([{"role": "system", "content": SYSTEM}, *turns]))})
    assert "₹1,20,000" in turns[3]["content"]  # the reply quoted the fact it was asked for ...
    summary = text_of(reply(summary_request(turns, prompt_name="summary_buffer", templates="lesson4")))
    assert "Assistant:" not in summary and "From the" not in summary and "Noted" not in summary
    assert summary.count("₹1,20,000") == 1  # ... and the summary holds it once, from the user's message


def test_replies_are_deterministic_and_usage_holds_real_o200k_counts():
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": SALARY_TURN}]
    first, second = reply(messages, max_tokens=100), reply(messages, max_tokens=100)
    assert first == second
    assert first["model"] == markers.MODEL_NAME
    assert first["usage"]["prompt_tokens"] == count_tokens(SYSTEM) + count_tokens(SALARY_TURN)
    assert first["usage"]["completion_tokens"] == count_tokens(text_of(first))
    assert first["usage"]["total_tokens"] == first["usage"]["prompt_tokens"] + first["usage"]["completion_tokens"]


def test_a_request_without_messages_is_refused_naming_the_field_and_answered_400_over_http():
    with pytest.raises(SettingError) as refused:
        server.respond({"model": "any", "messages": []})
    assert refused.value.setting == "messages"
    status, body = server.answer({"model": "any"})
    assert status == 400 and body["error"]["type"] == "invalid_request_error"


def test_a_reply_longer_than_max_tokens_is_cut_with_finish_reason_length():
    messages = [{"role": "user", "content": "What is a Systematic Investment Plan and how does it work?"}]
    cut = reply(messages, max_tokens=5)
    assert cut["choices"][0]["finish_reason"] == "length"
    assert cut["usage"]["completion_tokens"] <= 5
    assert reply(messages, max_tokens=500)["choices"][0]["finish_reason"] == "stop"


# ----- properties ---------------------------------------------------------------------------------

sentences = st.sampled_from(
    lesson3()["summary_run"]["user_turns"] + lesson4()["buffer_run"]["user_turns"]
    + [line.split(": ", 1)[1] for batch in lesson3()["drift_run"]["batches"] for line in batch]
    + ["Okay.", "Thanks!", "Never buy gold for me.", "Understood. I will keep that in mind."])


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(sentences, min_size=1, max_size=10), limit=st.integers(min_value=8, max_value=120),
       existing=st.booleans())
def test_any_summary_keeps_the_limit_is_deterministic_and_copies_only_source_sentences(texts, limit, existing):
    messages = [{"role": ("user", "assistant")[i % 2], "content": text} for i, text in enumerate(texts)]
    old = text_of(reply(summary_request(messages[:2]))) if existing else None
    system = {"role": "system", "content": f"You are summarising. Write at most {limit} words."}
    request = [system, summary_request(messages, old)[1]]
    summary = text_of(reply(request))
    assert summary == text_of(reply(request))
    assert word_count(summary) <= limit
    assert summary.startswith(markers.SUMMARY_MARKER) and summary.count(markers.SUMMARY_MARKER) == 1
    source = " ".join(texts)
    for _, sentence in summariser.summary_sentences(summary):
        cut = sentence.removesuffix("…")  # a single sentence longer than the limit is cut
        assert cut in source or sentence == "No facts stated yet."
