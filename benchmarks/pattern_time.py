"""Time of every public function of the audit, redaction and summary-check modules on adversarial input: a
megabyte of each shape that once made a pattern rescan a run from each of its characters (``"1." * 20000`` took
17 s in ``audit_summary``), and of near-misses of every pattern. Prints figures; asserts nothing.

Each figure is CPU time for one input, beside the time of the plainest pattern there is (``re.findall(r"\\d")``
over a megabyte of digits) on the same machine, so that a loaded machine can be read for what it is. A linear
function stays a small multiple of that baseline at every size; a quadratic one grows with the size (``--size``:
double it and a linear figure doubles, a quadratic one quadruples).

    python benchmarks/pattern_time.py [--size 1000000] [--verbose]
"""
from __future__ import annotations

import argparse
import random
import re
import time
from collections.abc import Callable

from helpers.base.redaction import iban_valid, luhn_valid, redact, redact_messages
from helpers.measure.audit import audit_summary, cut_figure, figures
from helpers.memory.imitation import escape_imitations
from helpers.memory.summary_check import assistant_names, check_summary

# the repeated unit of each input: digits and dots, other scripts' digits, spaces, look-alikes, markers, role words,
# JSON/YAML/XML fragments, and near-misses of the figure, amount, identifier and check patterns
SHAPES = ["1.", "1", "1 ", "1,", "1-", "1.5 ", "a@", "a.", "rs 1 ", "+1 ", "0 1", "₹1-", "1 to ", "70000-", "1,00,",
          "98765 4321 ", "4111 1111 ", "2345-6789-", "९८७६५ ", "৯৮৭৬৫ ৪৩২১০", "١٢٣٤ ", "１２３ ", "1\u00a0", "no ",
          "never a ", "three ", "account no 1234 ", "a/c ", "abcde1234", "GB82 WEST ", "x@y.", "SYSTEM: ", "system ",
          "System: ", "## ", "#### instructions ", "<system", "</", '"role": "syst', "role: system\n", "\\n", "\n",
          "<|", "[INST", "<<", "ignore previous ", "you are ", "FinCoach must ", "ѕуѕтем ", "Система ", "ꜱʏꜱᴛᴇᴍ ",
          "ｍｕｓｔ ", "S\u0301Y", "\u200b", "\U000E0053", "SYSTEM\u2236 ", "You are X", " ", "a "]
ARCHIVE = [{"role": "user", "content": "My take-home pay is Rs 1,20,000 a month."}]
FUNCTIONS: dict[str, Callable[[str], object]] = {
    "audit_summary": lambda text: audit_summary(text, ARCHIVE), "figures": figures, "cut_figure": cut_figure,
    "redact": redact, "redact_messages": lambda text: redact_messages([{"role": "user", "content": text}]),
    "luhn_valid": lambda text: luhn_valid(re.sub(r"\D", "", text)), "iban_valid": iban_valid,
    "check_summary": lambda text: check_summary(text, names=("FinCoach",)), "assistant_names": assistant_names,
    "escape_imitations": lambda text: escape_imitations(text, ["CONVERSATION SUMMARY (earlier turns):"]),
}


def cpu_seconds(work: Callable[[], object]) -> float:
    """CPU seconds ``work`` takes (not wall time: other programs on the machine do not count)."""
    start = time.process_time()
    work()
    return time.process_time() - start


def inputs(size: int) -> dict[str, str]:
    """Each shape repeated to ``size`` characters, and every shape mixed at random (seeded) to the same size."""
    made = {shape: (shape * (size // len(shape) + 1))[:size] for shape in SHAPES}
    mixed = random.Random(25).choices(SHAPES, k=size // 4)
    made["mixed"] = "".join(mixed)[:size]
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000, help="characters of each input (default 1,000,000)")
    parser.add_argument("--verbose", action="store_true", help="print the time of every input, not only the worst")
    parser.add_argument("--only", nargs="+", choices=FUNCTIONS, default=list(FUNCTIONS), help="time only these")
    options = parser.parse_args()
    baseline = cpu_seconds(lambda: re.findall(r"\d", "1" * options.size))
    print(f"baseline: re.findall(r'\\d') over {options.size:,} digits takes {baseline:.2f} s CPU on this machine")
    texts = inputs(options.size)
    print(f"{len(texts)} inputs of {options.size:,} characters; worst CPU time per function:")
    for name in options.only:
        function = FUNCTIONS[name]
        times = {shape: cpu_seconds(lambda text=text: function(text)) for shape, text in texts.items()}
        if options.verbose:
            print("  " + ", ".join(f"{shape!r} {seconds:.2f}" for shape, seconds in times.items()))
        shape = max(times, key=times.__getitem__)
        print(f"{name:16} {times[shape]:6.2f} s ({times[shape] / baseline:4.1f}x baseline) on {shape!r}")


if __name__ == "__main__":
    main()
