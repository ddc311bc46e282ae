"""Time of the audit and redaction patterns on adversarial input: a megabyte of runs of digits, dots, dashes,
signs and the like, the shapes that made a pattern rescan a run from each of its characters (``"1." * 20000``
once took 17 s in ``audit_summary``). Prints figures; asserts nothing.

Each figure is CPU time for one megabyte, beside the time of the plainest pattern there is (``re.findall(r"\\d")``
over a megabyte of digits) on the same machine, so that a loaded machine can be read for what it is. A pattern
that is linear stays a small multiple of that baseline at every size; a quadratic one grows with the size
(``--size`` changes it: double it and a linear figure doubles, a quadratic one quadruples).

    python benchmarks/pattern_time.py [--size 1000000]
"""
from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable

from helpers.base.redaction import redact
from helpers.measure.audit import audit_summary

SHAPES = {"1.": "1.", "digits": "1", "1 ": "1 ", "1,": "1,", "1-": "1-", "a@": "a@", "rs 1 ": "rs 1 ", "+1 ": "+1 ",
          "no ": "no ", "₹1-": "₹1-", "0 1": "0 1", "a.": "a.", "Devanagari digits": "९८७६५ "}
ARCHIVE = [{"role": "user", "content": "My take-home pay is Rs 1,20,000 a month."}]


def cpu_seconds(work: Callable[[], object]) -> float:
    start = time.process_time()
    work()
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000, help="characters of each input (default 1,000,000)")
    size = parser.parse_args().size
    baseline = cpu_seconds(lambda: re.findall(r"\d", "1" * size))
    print(f"baseline: re.findall(r'\\d') over {size:,} digits takes {baseline:.2f} s CPU on this machine")
    print(f"{'input':20} {'audit_summary':>14} {'redact':>10}   (s CPU for {size:,} characters; x baseline)")
    worst = {"audit_summary": 0.0, "redact": 0.0}
    for name, unit in SHAPES.items():
        text = (unit * (size // len(unit) + 1))[:size]
        audit = cpu_seconds(lambda: audit_summary(text, ARCHIVE))
        hidden = cpu_seconds(lambda: redact(text))
        worst = {"audit_summary": max(worst["audit_summary"], audit), "redact": max(worst["redact"], hidden)}
        print(f"{name!r:20} {audit:8.2f} ({audit / baseline:3.0f}x) {hidden:6.2f} ({hidden / baseline:3.0f}x)")
    print("worst: " + ", ".join(f"{name} {seconds:.2f} s ({seconds / baseline:.0f}x baseline)"
                                for name, seconds in worst.items()))


if __name__ == "__main__":
    main()
