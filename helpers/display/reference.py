"""The lessons' published ``openai/gpt-oss-120b`` runs (reference data from the lesson pages, not this project's
runs), in the lessons' printed format; every heading printed here says whose they are."""
from __future__ import annotations

from helpers.base.tokens import count_tokens
from helpers.lessons.data import lesson4, published_run
from helpers.memory.summary import summarise_line, summary_memory_line
from helpers.memory.summary_buffer import compress_line

LABEL = "the lesson's run of openai/gpt-oss-120b on Groq (reference data, not this notebook's run)"
HEADING = "From " + LABEL + ":"


def lesson3_run_lines() -> list[str]:
    """Lesson 3's six-turn run as the lesson printed it, in the same line format as this project's runs."""
    run = published_run(3)["summary_run"]
    events = {event["after_turn"]: event for event in run["summarise_events"]}
    lines = [HEADING]
    for row in run["turn_lines"]:
        lines.append(summary_memory_line(row["turn"], row["messages_sent"], row["prompt_tokens"], row["summary_sent"],
                                         ("salary", row["salary_in_verbatim_turn"])))
        if row["turn"] in events:
            event = events[row["turn"]]
            lines.append(summarise_line(event["messages"], event["messages_tokens"], event["summary_tokens"]))
    return lines


def lesson4_run_lines() -> list[str]:
    """Lesson 4's six-turn run at 600 tokens; its overflows, told in prose, as ``[COMPRESS]`` lines marked rebuilt."""
    run = published_run(4)["buffer_run"]
    request = run["request_at_turn_6"]
    lines = [HEADING,
             "buffer after turns 1 to 3: " + ", ".join(f"{t}/600" for t in run["buffer_tokens_turns_1_to_3"]),
             "its three overflows, as [COMPRESS] lines rebuilt here from the figures the page gives in prose:"]
    lines += [compress_line(event["tokens_in"], event["summary_tokens"], event["messages"], old_summary=index > 0)
              for index, event in enumerate(run["compress_events"])]  # the first fold had no summary to merge
    lines += [f"overflows before turn 6: {run['overflows_before_turn_6']} (storing replies 3, 4 and 5)",
              f"request at turn 6: system prompt {request['system_prompt_tokens']} + memory block "
              f"{request['memory_block_tokens']} (summary {request['summary_tokens']}) + buffer "
              f"{request['buffer_tokens']} = {request['total_tiktoken']} tokens by tiktoken, "
              f"{request['billed_prompt_tokens']} billed",
              f"summary at the end: {run['summary_words_at_end']} words (the prompt allows 80)"]
    return lines


def lesson4_run_sizes() -> list[int]:
    """The o200k_base size of each message of lesson 4's run up to turn 6's question: user messages counted here,
    replies by difference from the page's figures (buffers after turns 1 to 3, overflows, turn 6's buffer)."""
    run = published_run(4)["buffer_run"]
    users = [count_tokens(text) for text in lesson4()["buffer_run"]["user_turns"]]
    after_1, after_2, after_3 = run["buffer_tokens_turns_1_to_3"]
    first, second, third = run["compress_events"]
    replies = [after_2 - after_1 - users[1], after_3 - after_2 - users[2],
               second["tokens_in"] - first["summary_tokens"] - users[2],
               third["tokens_in"] - second["summary_tokens"] - users[3],
               run["request_at_turn_6"]["buffer_tokens"] - users[4] - users[5]]
    return [size for user, reply in zip(users, replies) for size in (user, reply)] + [users[5]]


def lesson4_request_at_turn_6() -> dict[str, int]:
    """System prompt, memory block and buffer tokens of lesson 4's request at turn 6."""
    request = published_run(4)["buffer_run"]["request_at_turn_6"]
    return {"system prompt": request["system_prompt_tokens"], "memory block": request["memory_block_tokens"],
            "buffer": request["buffer_tokens"]}


def lesson4_unsupported_claims() -> list[str]:
    """The statements lesson 4 found in its summary that no user message made."""
    run = published_run(4)["buffer_run"]
    lines = [f"Found by the lesson in its own summary ({LABEL}):"]
    lines += [f"  {item['claim']!r}: {item['why']}" for item in run["unsupported_claims_in_summary"]]
    reply = run["unsupported_claim_in_turn_6_reply"]
    lines.append(f"  and in its turn-6 reply, {reply['quote']!r}: {reply['why']}")
    return lines
