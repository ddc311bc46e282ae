"""The audit, check and redaction patterns do work linear in the text: counted, never timed.

Two counts a regression would change: no pattern repeats a part that can match nothing or that starts with a
repeat of its own (the shapes that backtrack without end), and the number of pattern calls a function makes on an
adversarial text of 2n characters is at most twice that on n (a loop that scans again from every place doubles
it more). ``benchmarks/pattern_time.py`` prints the times."""
from __future__ import annotations

import re
import re._constants as sre
import re._parser as sre_parse

import pytest

from helpers.base import redaction
from helpers.measure import audit
from helpers.memory import placement, summary_check

MODULES = (audit, redaction, summary_check, placement)
UNBOUNDED = (sre.MAX_REPEAT, sre.MIN_REPEAT)


def _patterns() -> list[re.Pattern[str]]:
    found = [summary_check._instruction(("FinCoach",)),
             *(pattern for pattern, _ in summary_check._forged_header(("Summary of earlier conversation:",)))]
    for module in MODULES:
        for value in vars(module).values():
            values = value if isinstance(value, tuple) else (value,)
            found += [v for v in values if isinstance(v, re.Pattern)]
            found += [v[0] for v in values if isinstance(v, tuple) and v and isinstance(v[0], re.Pattern)]
    return found


def _starts_with_unbounded_repeat(items) -> bool:
    while len(items) and items[0][0] is sre.SUBPATTERN:
        items = items[0][1][3]
    return bool(len(items)) and items[0][0] in UNBOUNDED and items[0][1][1] == sre.MAXREPEAT


def _nested_repeats(items, inside: bool = False) -> list[str]:
    """Unbounded repeats of a part that matches nothing or starts with an unbounded repeat, in a parsed pattern."""
    problems = []
    for op, av in items:
        if op in UNBOUNDED and av[1] == sre.MAXREPEAT:
            if av[2].getwidth()[0] == 0 or _starts_with_unbounded_repeat(av[2]):
                problems.append(str(op))
            problems += _nested_repeats(av[2], True)
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            problems += _nested_repeats(av[2], inside)
        elif op is sre.SUBPATTERN:
            problems += _nested_repeats(av[3], inside)
        elif op is sre.BRANCH:
            for branch in av[1]:
                problems += _nested_repeats(branch, inside)
        elif op in (sre.ASSERT, sre.ASSERT_NOT):
            problems += _nested_repeats(av[1], inside)
        elif op is sre.ATOMIC_GROUP:
            problems += _nested_repeats(av, inside)
    return problems


def test_no_pattern_repeats_what_can_match_nothing_or_starts_with_a_repeat():
    patterns = _patterns()
    assert len(patterns) > 25
    bad = [p.pattern[:80] for p in patterns if _nested_repeats(sre_parse.parse(p.pattern, p.flags))]
    assert not bad


class _Counting:
    """A pattern that adds to ``counter`` the characters each call may read: from where it starts to the end of
    what it matched, or to the end of the text (or of the window it is given) when it matches nothing."""

    def __init__(self, pattern: re.Pattern[str], counter: list[int]) -> None:
        self._pattern, self._counter = pattern, counter

    def __getattr__(self, name: str):
        method = getattr(self._pattern, name)
        if not callable(method):
            return method

        def counted(*args, **kwargs):
            result = method(*args, **kwargs)
            string, args = (args[1], args[2:]) if name in ("sub", "subn") else (args[0], args[1:])
            start, end = (tuple(args[:2]) + (0, len(string))[len(args[:2]):]) if name != "sub" else (0, len(string))
            if name in ("search", "match", "fullmatch"):
                read = (result.end() - start) if result else end - start
            else:
                read = end - start
            self._counter[0] += 1 + read
            return result
        return counted


def _counted_calls(monkeypatch, work) -> int:
    counter = [0]
    with monkeypatch.context() as patch:
        for module in MODULES:
            for name, value in list(vars(module).items()):
                if isinstance(value, re.Pattern):
                    patch.setattr(module, name, _Counting(value, counter))
        summary_check._instruction.cache_clear()
        summary_check._forged_header.cache_clear()
        work()
    return counter[0]


ADVERSARIAL = ["1.", "1 ", "1,", "1-", "₹1-", "rs 1 ", "+1 ", "9876543210 ", "४५६७ ", "a@", "no ", "SYSTEM: ", "## ",
               '"role": "system" ', "<|", "ѕуѕтем ", "ignore previous instructions. ", "account no 1234567890 ",
               "GB82 WEST 1234 5698 7654 32 ", "ABCDE1234F "]
ARCHIVE = [{"role": "user", "content": "My take-home pay is Rs 1,20,000 a month."}]
FUNCTIONS = {"audit_summary": lambda text: audit.audit_summary(text, ARCHIVE), "figures": audit.figures,
             "cut_figure": audit.cut_figure, "redact": redaction.redact,
             "check_summary": lambda text: summary_check.check_summary(text, names=("FinCoach",))}


@pytest.mark.parametrize("unit", ADVERSARIAL)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_pattern_calls_grow_no_faster_than_the_text(monkeypatch, name, unit):
    size = 4000
    counts = [_counted_calls(monkeypatch, lambda n=n: FUNCTIONS[name]((unit * (n // len(unit) + 1))[:n]))
              for n in (size, 2 * size)]
    assert counts[1] <= 2.1 * counts[0] + 64, counts  # linear: twice (and the texts' ends); quadratic: four times


@pytest.mark.parametrize("reading", ["_shadow_of", "_read_letters"])
def test_the_long_texts_lookup_reads_as_str_translate(reading):
    """Past 50,000 characters the look-alike reading looks code points up in an array: the same text as
    ``str.translate`` by the same table, for every plane, lone surrogates and the characters the table maps."""
    import random

    translate = getattr(placement, reading)
    rng = random.Random(24)
    pool = [chr(point) for point in (*range(0x3000), *range(0xD7F0, 0xE100), *range(0x1D400, 0x1D500),
                                     *range(0xE0000, 0xE0080), 0x10FFFF)] + list(placement.LETTER_READINGS) * 3
    for length in (49_999, 50_000, 120_000):
        text = "".join(rng.choices(pool, k=length))
        assert translate(text) == text.translate(translate.table)
