"""What the defences cost: each on an ordinary 1,500-character text, a whole turn with every defence on, and the
worst case at the memory's bound (``--size`` characters of each shape that once made a pattern rescan a run, and of
near-misses of every pattern). CPU time; prints figures, asserts nothing. A linear function stays a small multiple
of the baseline (``re.findall(r"\\d")`` over as many digits) at every size; double ``--size`` and it doubles.

    python benchmarks/pattern_time.py [--size 200000]
"""
from __future__ import annotations

import argparse
import random
import re
import time
from collections.abc import Callable

from helpers.base.redaction import redact
from helpers.lessons.data import prompt
from helpers.measure.audit import audit_summary
from helpers.memory.defences import Defences, quote_copies
from helpers.base.reading import mentions, read
from helpers.memory.summary import SummaryMemory
from helpers.memory.summary_check import check_summary

SHAPES = ["1.", "1 ", "1-", "1,", "rs 1 ", "+1 ", "98765 4321 ", "4111 1111 ", "९८७६५ ", "１２３ ", "abcde1234", "a@",
          "a at b dot ", "GB82 WEST ", "SYSTEM: ", "## ", "<system", "<|", "[INST", "<<", "\\n", "\n", "\n\n ",
          "ignore previous ", "you'll ", "from now on ", "FinCoach must ", "ѕуѕтем ", "Система ", "ꜱʏꜱᴛᴇᴍ ",
          "ＣＯＮＶＥＲＳＡＴＩＯＮ ", "S\u0301Y", "\u200b", "\U000E0053", "\u0399", " ", "a "]
HEADINGS = ("CONVERSATION SUMMARY (earlier turns):\n", "CONVERSATION MEMORY (earlier turns, compressed):\n")
ORDINARY = ("I am 34, a software engineer in Pune, and take home Rs 1,20,000 a month. Rent is Rs 25,000, "
            "groceries about Rs 12,000, and I send my parents ₹10,000. From now on I want to save the bonus. "
            "My father wants me to act as guarantor for his loan; should I? ") * 6
FUNCTIONS: dict[str, Callable[[str], object]] = {
    "summary check": lambda text: check_summary(text, headings=HEADINGS, names=("FinCoach",)),
    "quoting (sent_text)": lambda text: quote_copies(text, HEADINGS), "redaction": redact, "reading": read,
    "forget's match": lambda text: mentions(text, "98765 43210"),
    "audit": lambda text: audit_summary(text, [{"role": "user", "content": "I earn Rs 1,20,000 a month."}]),
}


def cpu(work: Callable[[], object], repeat: int = 1) -> float:
    """The least CPU seconds of ``repeat`` runs of ``work``."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        work()
        best = min(best, time.process_time() - start)
    return best


def turn_cost() -> float:
    """CPU seconds of one turn (a user and an assistant message, the request made) with every defence on."""
    memory = SummaryMemory(prompt("fincoach_system"), lambda messages, existing: ORDINARY[:600],
                           defences=Defences(placement="data", pinned_rules=("Never suggest equity.",),
                                             summary_check="report", redact=True))
    start = time.process_time()
    for _ in range(20):
        memory.add_message("user", ORDINARY[:700])
        memory.get_messages_for_api()
        memory.add_message("assistant", ORDINARY[:700])
    return (time.process_time() - start) / 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=200_000, help="characters of each worst-case input")
    size = parser.parse_args().size
    text = ORDINARY[:1500]
    print(f"each defence on an ordinary {len(text):,}-character text (least of 50 runs):")
    for name, function in FUNCTIONS.items():
        print(f"  {name:20} {cpu(lambda: function(text), 50) * 1000:6.3f} ms")
    print(f"a whole turn with every defence on (two 700-character messages, data placement, pinned rule, check, "
          f"redaction; the summariser answers at once): {turn_cost() * 1000:.2f} ms")
    baseline = cpu(lambda: re.findall(r"\d", "1" * size))
    inputs = {shape: (shape * (size // len(shape) + 1))[:size] for shape in SHAPES}
    inputs["mixed"] = "".join(random.Random(25).choices(SHAPES, k=size // 4))[:size]
    print(f"worst case at {size:,} characters (baseline re.findall(r'\\d') over as many digits: {baseline:.3f} s):")
    for name, function in FUNCTIONS.items():
        times = {shape: cpu(lambda text=text: function(text)) for shape, text in inputs.items()}
        shape = max(times, key=times.__getitem__)
        print(f"  {name:20} {times[shape]:6.3f} s ({times[shape] / baseline:5.1f}x baseline) on {shape!r}")


if __name__ == "__main__":
    main()
