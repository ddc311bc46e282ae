"""Every exercise check against lists of answers: the wrong ones by kind of mistake (off by one, wrong comparison,
wrong unit, wrong type, changes its input, hangs, calls the summariser too often, misses an edge, right on the
lesson's data only) are told "not yet", a known slip by its name; the right ones in unusual styles (recursion,
generators, NumPy types, the page's own rule) pass. Most wrong answers are a worked answer with one text change."""
from __future__ import annotations

import math
import re
from unittest import mock

import numpy as np
import pytest

from helpers.base.tokens import count_tokens, encoding, filler_text
from helpers.grading import calls, overflows, rule_check, runner, summary_cap
from helpers.grading.runner import CORRECT, NOT_DONE, WRONG, forget_failures
from helpers.grading.window import grade_window_memory
from helpers.measure.drift import rule_strength
from helpers.memory.stubs import turn_range_stub
from helpers.memory.summary_buffer import SummaryBufferMemory
from tests.notebook_core_support import load_core


@pytest.fixture(autouse=True)
def fresh_kernel():
    forget_failures()


def mutant(source: str, *changes: tuple[str, str], namespace: dict | None = None):
    """The function or class ``source`` defines, after each (old, new) text change (each must occur)."""
    for old, new in changes:
        assert old in source, old
        source = source.replace(old, new)
    namespace = {"re": re, "math": math, "np": np, "count_tokens": count_tokens, **(namespace or {})}
    exec(source, namespace)
    return namespace[re.search(r"(?:def|class) (\w+)", source).group(1)]


def assert_verdicts(grade, right, wrong):
    """Each right answer passes; each wrong one is "not yet", named (None: no name) and gives no formula away."""
    for answer in right:
        assert grade(answer).status == CORRECT, (answer, grade(answer))
    for kind, (answer, mistake) in wrong.items():
        with mock.patch.object(runner, "SECONDS", 0.2 if kind == "hangs" else runner.SECONDS):  # 2 s by default
            verdict = grade(answer)
        assert (verdict.status, verdict.mistake) == (WRONG, mistake), (kind, verdict)
        assert verdict.hint and not re.search(r"//|>=|<=|\blen\(|\bmin\(|\.lower\(\)|\+=|\[-", verdict.hint), kind


def test_an_answer_not_written_yet_is_not_done():
    def todo(*args):
        raise NotImplementedError
    for grade in (calls.grade_calls_formula, rule_check.grade_rule_check, overflows.grade_overflows_at,
                  summary_cap.grade_summary_cap):
        assert grade(todo).status == grade(lambda *args: ...).status == NOT_DONE, grade


# ----- 1.1 --------------------------------------------------------------------------------------------------
CALLS = "def calls(t, n, k):\n    return 0 if t < n else 1 + (t - n) // (n - k)\n"


def calls_recursive(t, n, k):
    return 0 if t < n else 1 + calls_recursive(t - (n - k), n, k)


def calls_generator(t, n, k):
    return sum(1 for turn in range(n, t + 1) if (turn - n) % (n - k) == 0)


def test_calls_check():
    right = [mutant(CALLS), calls_recursive, calls_generator, lambda t, n, k: np.int64(max(0, (t - k) // (n - k))),
             lambda t, n, k: len(range(n, t + 1, n - k)), lambda t, n, k: int(max(0, math.floor((t - k) / (n - k))))]
    wrong = {
        "off by one: no call at the threshold": (mutant(CALLS, ("t < n", "t <= n")),
            "misses the call at the threshold"),
        "off by one: first call missing": (mutant(CALLS, ("1 + ", "")), "misses the first call"),
        "wrong rounding": (mutant(CALLS, ("(t - n) // (n - k)", "math.ceil((t - n) / (n - k))")), "rounds up"),
        "edge: no guard": (mutant(CALLS, ("0 if t < n else ", "")), "counts calls before the threshold"),
        "wrong unit: every threshold": (lambda t, n, k: t // n, "one call every threshold turns"),
        "wrong unit: a gap of keep": (mutant(CALLS, ("// (n - k)", "// k")), "a gap of keep turns"),
        "off by one: gap one too long": (mutant(CALLS, ("(n - k)", "(n - k + 1)")), None),
        "right on the lesson's data only": (lambda t, n, k: {(10, 4, 2): 4, (20, 5, 2): 6}.get((t, n, k), 3), None),
        "wrong type: float": (mutant(CALLS, ("//", "/")), "wrong type"),
        "wrong type: a whole float": (lambda t, n, k: float(max(0, (t - k) // (n - k))), "wrong type"),
        "wrong type: prints": (lambda t, n, k: print(4), "wrong type"),
        "wrong type: bool": (lambda t, n, k: t >= n, "wrong type"),
        "hangs": (mutant("def calls(t, n, k):\n    while t < n:\n        pass\n    return 1"), "never ends"),
    }
    assert_verdicts(calls.grade_calls_formula, right, wrong)


# ----- 2.1 --------------------------------------------------------------------------------------------------
WINDOW = """class WindowMemory(SummaryMemory):
    def add_message(self, role, content):
        message = {"role": role, "content": content}
        self.recent_turns.append(message)
        self.archive.append(message)
        if role == "assistant" and len(self.recent_turns) // 2 >= self.max_turns_before_summary:
            self.recent_turns = self.recent_turns[-2 * self.turns_to_keep_verbatim:]
"""


def test_window_check():
    notebook = load_core("02_summary_memory_run.ipynb")

    def window(*changes):
        return mutant(WINDOW, *changes, namespace=notebook)
    cut = "self.recent_turns = self.recent_turns[-2 * self.turns_to_keep_verbatim:]"
    right = [window(), window((cut, "del self.recent_turns[:-2 * self.turns_to_keep_verbatim]")),
             window((cut, "while len(self.recent_turns) > 2 * self.turns_to_keep_verbatim: self.recent_turns.pop(0)")),
             window(('role == "assistant" and ', ""))]
    wrong = {
        "wrong unit: keeps messages": (window(("-2 * self", "-self")), "keeps messages, not turns"),
        "wrong end: keeps the oldest": (window(("[-2 * self.turns_to_keep_verbatim:]",
                                                "[:2 * self.turns_to_keep_verbatim]")), "keeps the oldest turns"),
        "wrong comparison": (window((">=", ">")), "waits one turn too long"),
        "wrong unit: counts messages": (window((" // 2 >=", " >=")), "counts messages as turns"),
        "edge: drops every turn": (window((cut, "self.recent_turns = []")), "drops every turn"),
        "off by one: a turn too many": (
            window(("-2 * self.turns_to_keep_verbatim:", "-2 * self.turns_to_keep_verbatim - 2:")),
                                        None),
        "mutates: drops from the archive": (window(("self.archive.append(message)", "pass")), "drops from the archive"),
        "calls the summariser": (window((cut, "summarise_turns(self.recent_turns)")), "summarises"),
        "keeps a summary": (window((cut, cut + "; self.current_summary = 'dropped'")), "writes a summary"),
        "hangs": (window((cut, "while len(self.recent_turns) > 2: self.recent_turns[1:]")), "never ends"),
    }
    assert_verdicts(grade_window_memory, right, wrong)
    assert notebook["summarise_turns"].__module__ != "helpers.base.bounded"  # the notebook's summariser put back


# ----- 3.1 --------------------------------------------------------------------------------------------------
RULE = """def rule_kept(summary):
    for sentence in re.split(r"(?<=[.!?])\\s+", summary):
        if "equit" in sentence.lower() and any(word in sentence.lower() for word in RULE_WORDS):
            return True
    return False
"""


def rule(*changes):
    return mutant(RULE, *changes, namespace={"RULE_WORDS": rule_check.RULE_WORDS})


def test_rule_check():
    words, about = "any(word in sentence.lower() for word in RULE_WORDS)", '"equit" in sentence.lower()'
    right = [rule(), rule(('re.split(r"(?<=[.!?])\\s+", summary)', 're.findall(r"[^.!?]+", summary)')),
             lambda s: np.bool_(any("equit" in x and any(w in x for w in rule_check.RULE_WORDS)
                                    for x in s.lower().replace("!", ".").replace("?", ".").split("."))),
             rule((about, 're.search(r"\\bequit(y|ies)\\b", sentence, re.I)'))]
    wrong = {
        "the keyword check": (lambda s: "equit" in s.lower(), "the keyword check"),
        "edge: rule words anywhere": (rule(('re.split(r"(?<=[.!?])\\s+", summary)', "[summary]")),
                                      "rule words anywhere"),
        "case": (rule(("sentence.lower()", "sentence")), "upper and lower case"),
        "plural: 'equity'": (rule(('"equit" in', '"equity" in')), "'equity' misses 'equities'"),
        "plural: a word-boundary pattern": (rule((about, 're.search(r"\\bequity\\b", sentence.lower())')),
                                            "'equity' misses 'equities'"),
        "exact split": (rule((about, 'any(w in ("equity", "equities") for w in sentence.lower().split())')),
                        "equity only as a whole word"),
        "rule words by a word-boundary pattern": (
            rule((words, 're.search(r"\\b(never|rule|allergic|must not|no equity)\\b", sentence.lower())')),
            "rule words only as whole words"),
        "an unrelated word added": (rule(("RULE_WORDS)", "RULE_WORDS + ('fund',))")), "a word that is not a rule word"),
        "a negation added": (rule(("RULE_WORDS)", "RULE_WORDS + ('not', 'no'))")), "a word that is not a rule word"),
        "a preference word added": (rule(("RULE_WORDS)", "RULE_WORDS + ('wary',))")), "a word that is not a rule word"),
        "only '.' ends a sentence": (rule(('re.split(r"(?<=[.!?])\\s+", summary)', "summary.split('.')")),
                                     "only '.' ends a sentence"),
        "the first sentence about equity only": (
            rule(("return True", "return True\n        if 'equit' in sentence.lower(): return False")),
            "the first sentence about equity only"),
        "wrong type: a match": (rule(("return True", "return re.search('equit', sentence)")), "wrong type"),
        "wrong type: no return": (lambda s: None, "wrong type"),
    }
    assert_verdicts(rule_check.grade_rule_check, right, wrong)


def test_rule_check_agrees_with_the_drift_measure():
    """What exercise 3.1 calls a rule is what notebook 03's measure calls one, on every case and every pool."""
    assert all(rule_check.states_rule(s) == (rule_strength(s)[0] == "rule") for s in rule_check.CASES)
    assert {rule_strength(s)[0] for s in rule_check.EQUITY_RULES} == {"rule"}
    assert "rule" not in {rule_strength(s)[0] for s in rule_check.EQUITY_OTHER}
    assert {rule_strength(s)[0] for s in rule_check.OTHER_RULES + rule_check.OTHER_FACTS} == {"absent"}


# ----- 4.1 --------------------------------------------------------------------------------------------------
OVERFLOWS = """def overflows_at(sizes, budget, messages_to_compress=4):
    buffer, found = [], []
    for number, size in enumerate(sizes, start=1):
        if sum(buffer) + size > budget:
            whole = len(buffer) // 2 * 2
            n = min(messages_to_compress, whole)
            while n < whole and sum(buffer[n:]) + size > budget:
                n += 2
            if n:
                buffer = buffer[n:]
                found.append(number)
        buffer.append(size)
    return found
"""
LOOP, IF_N = "            while n < whole and sum(buffer[n:]) + size > budget:\n                n += 2\n", "if n:"


def overflows_recursive(sizes, budget, messages_to_compress=4, buffer=(), number=1):
    if not sizes:
        return []
    size, rest, n = sizes[0], sizes[1:], 0
    if sum(buffer) + size > budget:
        whole = len(buffer) // 2 * 2
        n = min(messages_to_compress, whole)
        while n < whole and sum(buffer[n:]) + size > budget:
            n += 2
    later = overflows_recursive(rest, budget, messages_to_compress, (*buffer[n:], size), number + 1)
    return [number] * (n > 0) + later


def test_overflow_check():
    solution = mutant(OVERFLOWS)
    right = [solution, overflows_recursive, mutant(OVERFLOWS, ("found.append(number)", "yield number"),
                                                   ("    return found\n", "")),
             lambda sizes, budget, m=4: np.array(solution(sizes, budget, m)),
             lambda sizes, budget, m=4: tuple(solution(list(sizes), budget, m)),
             mutant(OVERFLOWS, (LOOP, "")), mutant(OVERFLOWS, (LOOP, ""), (IF_N, "if True:"))]  # the page's rules
    wrong = {
        "wrong comparison": (mutant(OVERFLOWS, ("> budget", ">= budget")), "overflows on the budget"),
        "edge: counts a fold of nothing": (mutant(OVERFLOWS, (IF_N, "if True:")), "counts a fold of nothing"),
        "order: stores, then tests": (
            mutant(OVERFLOWS, ("        if sum(buffer) + size", "        buffer.append(size)\n        if sum(buffer)"),
                   ("+ size > budget:\n", "> budget:\n"), ("        buffer.append(size)\n    return", "    return")),
            "stores, then tests"),
        "forgets the message": (mutant(OVERFLOWS, ("+ size > budget", "> budget")),
                                "tests without the message"),
        "half turns": (mutant(OVERFLOWS, ("len(buffer) // 2 * 2", "len(buffer)"), ("n += 2", "n += 1")),
                       "folds a waiting question"),
        "folds everything": (mutant(OVERFLOWS, ("n = min(messages_to_compress, whole)", "n = whole")),
                             "folds every whole turn"),
        "the folded messages stay": (mutant(OVERFLOWS, ("buffer = buffer[n:]", "pass")), "the folded messages stay"),
        "ignores the argument": (mutant(OVERFLOWS, ("min(messages_to_compress,", "min(4,")),
            "messages_to_compress ignored"),
        "off by one: numbered from 0": (mutant(OVERFLOWS, ("start=1", "start=0")), "numbered from 0"),
        "wrong unit: turn numbers": (lambda s, b, m=4: [(n + 1) // 2 for n in solution(s, b, m)], "turn numbers"),
        "off by one: a step of one": (mutant(OVERFLOWS, ("n += 2", "n += 1")), None),
        "right on the lesson's data only": (lambda s, b, m=4: [6, 8, 10], None),
        "wrong type: a count": (lambda s, b, m=4: len(solution(s, b, m)), "wrong type"),
        "wrong type: a set": (lambda s, b, m=4: set(solution(s, b, m)), "wrong type"),
        "wrong type: floats": (lambda s, b, m=4: [float(n) for n in solution(s, b, m)], "wrong type"),
        "mutates its input": (mutant(OVERFLOWS, ("    return found", "    sizes.sort()\n    return found")),
                              "changes the caller's list"),
        "hangs": (mutant(OVERFLOWS, ("n += 2", "pass")), "never ends"),
        "raises": (lambda s, b, m=4: [s[len(s)]], "raises"),
    }
    assert_verdicts(overflows.grade_overflows_at, right, wrong)
    verdict = overflows.grade_overflows_at(right[-2])
    assert "the page's class" in verdict.message and "On the pasted bank statement" in verdict.message


def memory_overflows_at(case):
    """The messages whose storing made ``SummaryBufferMemory`` overflow (messages of the case's sizes)."""
    memory = SummaryBufferMemory("s", turn_range_stub, max_buffer_tokens=case.budget,
                                 messages_to_compress_on_overflow=case.compress)
    found = []
    for number, size in enumerate(case.sizes, start=1):
        before = memory.overflow_count
        memory.add_message("user" if number % 2 else "assistant", filler_text(size))
        found += [number] * (memory.overflow_count > before)
    return found


def test_the_overflow_rules_are_the_memorys_and_the_pages():
    """The notebook's rule is the memory's on every case; the page's analyse() gives the lesson's figures."""
    assert all(overflows.simulate(case) == memory_overflows_at(case) for case in overflows.CASES)
    by_about = {case.about: case for case in overflows.CASES if case.about}
    page = {about: len(overflows.PAGE_ANALYSE(case)) for about, case in by_about.items()}
    assert [page[a] for a in list(by_about)[:4]] == [3, 0, 9, 5]  # the lesson's table, both try-its
    assert overflows.PAGE_ANALYSE(by_about["the lesson's run in notebook 05, at 600 tokens"]) == [6, 8, 10]


# ----- 5.1 --------------------------------------------------------------------------------------------------
CAP = """def cap_summary(summary, summarise, max_summary_tokens):
    if max_summary_tokens is None or count_tokens(summary) <= max_summary_tokens:
        return summary
    shorter = summarise([], summary)
    if shorter and count_tokens(shorter) < count_tokens(summary):
        return shorter
    return summary
"""
SHORTER = "    shorter = summarise([], summary)\n"


def test_summary_cap_check():
    right = [mutant(CAP), mutant(CAP, ("summarise([], summary)", "summarise(messages=[], existing_summary=summary)")),
             lambda s, f, cap: s if cap is None or count_tokens(s) <= cap else min(
                 (t for t in (s, f([], s)) if t.strip()), key=lambda t: len(encoding().encode(t)))]
    wrong = {
        "changes the summary": (mutant(CAP, ("        return summary\n", "        return summary.strip()\n")),
                                "changes the summary"),
        "wrong unit: words": (mutant(CAP, ("count_tokens(summary) <= max", "len(summary.split()) <= max")),
            "counts words"),
        "wrong unit: characters": (mutant(CAP, ("count_tokens(summary) <= max", "len(summary) <= max")),
            "counts characters"),
        "wrong comparison": (mutant(CAP, ("<= max_summary_tokens", "< max_summary_tokens")), "at the cap is over"),
        "edge: 0 is no cap": (mutant(CAP, ("max_summary_tokens is None", "not max_summary_tokens")),
            "a cap of 0 is no cap"),
        "edge: None": (mutant(CAP, ("max_summary_tokens is None or ", "")), "forgets None"),
        "edge: keeps an empty text": (mutant(CAP, ("if shorter and", "if")), "keeps an empty summary"),
        "trusts the summariser": (
            mutant(CAP, ("if shorter and count_tokens(shorter) < count_tokens(summary):", "if shorter:")),
                                  "keeps the longer one"),
        "wrong unit: fewer characters": (
            mutant(CAP, ("count_tokens(shorter) < count_tokens(summary)", "len(shorter) < len(summary)")),
                                         "keeps fewer characters"),
        "keeps the long one": (mutant(CAP, ("        return shorter\n", "        return summary\n")),
            "keeps the long one"),
        "calls too often": (mutant(CAP, (SHORTER, "    shorter = summarise([], summarise([], summary))\n")),
            "too many calls"),
        "calls within the cap": (mutant(CAP, (SHORTER, ""), ("    if max", SHORTER + "    if max")), None),
        "calls it wrongly": (mutant(CAP, ("summarise([], summary)", "summarise(summary)")),
            "calls the summariser wrongly"),
        "cuts by hand": (mutant(CAP, (SHORTER, "    shorter = summary[:max_summary_tokens]\n")), None),
        "wrong type": (mutant(CAP, ("return shorter", "return summary, shorter")), "wrong type"),
        "no return": (lambda s, f, cap: print(s), "wrong type"),
        "hangs": (mutant(CAP, ("    shorter =", "    while True: pass\n    shorter =")), "never ends"),
    }
    assert_verdicts(summary_cap.grade_summary_cap, right, wrong)


@pytest.mark.parametrize("case", [c for c in summary_cap.CASES if c.summary == " ".join(c.summary.split())],
                         ids=lambda case: case.about)
def test_the_cap_rule_is_what_the_memory_keeps(case):
    def summarise(messages, existing):
        return case.summarise(messages, existing) if not messages else case.summary
    memory = SummaryBufferMemory("s", summarise, max_buffer_tokens=60, messages_to_compress_on_overflow=2,
                                 max_summary_tokens=1 if case.cap == 0 else case.cap)  # 0 refused: 1 is as good
    for role in ("user", "assistant", "user"):  # the third message overflows: one fold of the first turn
        memory.add_message(role, "x" + " x" * 29)
    assert memory.summary == summary_cap.cap(case)[0]


def test_the_hindi_summary_looks_shorter_and_costs_more_tokens():
    hindi, long = summary_cap.HINDI_SUMMARY, summary_cap.LONG_SUMMARY
    assert len(hindi) < len(long) and len(hindi.split()) < len(long.split())
    assert count_tokens(hindi) > count_tokens(long)
