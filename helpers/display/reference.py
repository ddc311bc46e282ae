"""The lessons' published ``openai/gpt-oss-120b`` runs (reference data from the lesson pages, not this project's
runs), in the lessons' printed format; every heading printed here says whose they are."""
from __future__ import annotations

from helpers.base.tokens import count_tokens
from helpers.lessons.data import lesson4, published_run

LABEL = "the lesson's run of openai/gpt-oss-120b on Groq (reference data, not this notebook's run)"
HEADING = "From " + LABEL + ":"


def lesson3_run_lines() -> list[str]:
    """Lesson 3's six-turn run as the lesson printed it: a turn line each, a ``[SUMMARISE]`` line after a fold."""
    run = published_run(3)["summary_run"]
    folds = {event["after_turn"]: event for event in run["summarise_events"]}
    lines = [HEADING]
    for row in run["turn_lines"]:
        lines.append(f"[Turn {row['turn']}] messages sent: {row['messages_sent']} | prompt_tokens: "
                     f"{row['prompt_tokens']} | summary sent: {row['summary_sent']} | salary in a verbatim turn: "
                     f"{row['salary_in_verbatim_turn']}")
        if fold := folds.get(row["turn"]):
            lines.append(f"  [SUMMARISE] {fold['messages']} messages ({fold['messages_tokens']} tokens) -> summary "
                         f"({fold['summary_tokens']} tokens)")
    return lines


def lesson4_run_lines() -> list[str]:
    """Lesson 4's six-turn run at 600 tokens; its overflows, told in prose, as ``[COMPRESS]`` lines marked rebuilt."""
    run = published_run(4)["buffer_run"]
    request = run["request_at_turn_6"]
    lines = [HEADING, "buffer after turns 1 to 3: " + ", ".join(f"{t}/600" for t in run["buffer_tokens_turns_1_to_3"]),
             "its three overflows, as [COMPRESS] lines rebuilt here from the figures the page gives in prose:"]
    lines += [f"  [COMPRESS] {event['messages']} messages{' + old summary' if index else ''} ({event['tokens_in']} "
              f"tokens) -> new summary ({event['summary_tokens']} tokens)"  # the first fold had no summary to merge
              for index, event in enumerate(run["compress_events"])]
    lines += [f"overflows before turn 6: {run['overflows_before_turn_6']} (storing replies 3, 4 and 5)",
              f"request at turn 6: system prompt {request['system_prompt_tokens']} + memory block "
              f"{request['memory_block_tokens']} (summary {request['summary_tokens']}) + buffer "
              f"{request['buffer_tokens']} = {request['total_tiktoken']} tokens by tiktoken, "
              f"{request['billed_prompt_tokens']} billed",
              f"summary at the end: {run['summary_words_at_end']} words (the prompt allows 80)"]
    return lines


def lesson4_run_sizes() -> list[int]:
    """Each message's o200k_base size in lesson 4's run up to turn 6's question (replies from the page's figures)."""
    run = published_run(4)["buffer_run"]
    users = [count_tokens(text) for text in lesson4()["buffer_run"]["user_turns"]]
    after_1, after_2, after_3 = run["buffer_tokens_turns_1_to_3"]
    first, second, third = run["compress_events"]
    replies = [after_2 - after_1 - users[1], after_3 - after_2 - users[2],
               second["tokens_in"] - first["summary_tokens"] - users[2],
               third["tokens_in"] - second["summary_tokens"] - users[3],
               run["request_at_turn_6"]["buffer_tokens"] - users[4] - users[5]]
    return [size for user, reply in zip(users, replies) for size in (user, reply)] + [users[5]]


def lesson4_unsupported_claims() -> list[str]:
    """The statements lesson 4 found in its own summary (and its turn-6 reply) that no user message made."""
    run = published_run(4)["buffer_run"]
    reply = run["unsupported_claim_in_turn_6_reply"]
    return [f"Found by the lesson in its own summary ({LABEL}):",
            *(f"  {item['claim']!r}: {item['why']}" for item in run["unsupported_claims_in_summary"]),
            f"  and in its turn-6 reply, {reply['quote']!r}: {reply['why']}"]
