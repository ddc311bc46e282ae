"""Lesson 3's exercise checks, tried on lists of right answers (written in different styles) and of wrong ones
(the mistakes a student makes): every right one passes, every wrong one fails, a known slip by its name, and
no message gives the formula or the algorithm; a hang or a runaway loop becomes a verdict."""
from __future__ import annotations

import math
import re

import pytest

from helpers.grading import calls, rule_check, window
from helpers.grading.calls import check_calls_formula, grade_calls_formula
from helpers.grading.rule_check import (
    EQUITY_MENTIONS,
    EQUITY_PREFERENCES,
    EQUITY_RULES,
    OTHER_FACTS,
    OTHER_RULES,
    RULE_WORDS,
    check_rule_check,
    grade_rule_check,
    states_rule,
)
from helpers.grading.runner import CORRECT, NOT_DONE, WRONG, forget_failures
from helpers.grading.window import check_window_memory, grade_window_memory
from helpers.measure.drift import rule_strength
from helpers.memory.schedule import summary_schedule
from tests.notebook_core_support import load_core
from tests.test_exercise import assert_teaches


@pytest.fixture(autouse=True)
def fresh_kernel():
    forget_failures()


def todo(*_):
    raise NotImplementedError


def assert_named(grade, answer, mistake, words=""):
    """The check says "not yet" to a wrong answer, names its mistake (None: a slip it has no name for), says what
    is wrong in ``words``, and gives no formula away."""
    verdict = grade(answer)
    assert verdict.status == WRONG and verdict.mistake == mistake and words in verdict.message, verdict
    assert_teaches(verdict)
    return verdict


# ----- 1.1 -------------------------------------------------------------------------------------------

def calls_formula(t, n, k):
    return 0 if t < n else 1 + (t - n) // (n - k)


def calls_loop(t, n, k):
    held, calls = 0, 0
    for _ in range(t):
        held += 1
        if held >= n:
            calls, held = calls + 1, k
    return calls


def calls_ceil_plus_one(t, n, k):
    return max(0, math.ceil((t - n + 1) / (n - k)))


def calls_from_kept(t, n, k):
    return max(0, (t - k) // (n - k))


def calls_range_length(total_turns, max_turns_before_summary, turns_to_keep_verbatim):
    return len(range(max_turns_before_summary, total_turns + 1, max_turns_before_summary - turns_to_keep_verbatim))


def calls_while(t, n, k):
    calls, next_call = 0, n
    while next_call <= t:
        calls, next_call = calls + 1, next_call + n - k
    return calls


RIGHT_CALLS = [calls_formula, calls_loop, calls_ceil_plus_one, calls_from_kept, calls_range_length, calls_while]
WRONG_CALLS = {
    "rounds up": (lambda t, n, k: 0 if t < n else 1 + math.ceil((t - n) / (n - k)), "rounds up"),
    "no first call": (lambda t, n, k: 0 if t < n else (t - n) // (n - k), "misses the first call"),
    "no guard": (lambda t, n, k: 1 + (t - n) // (n - k), "counts calls before the threshold"),
    "every threshold": (lambda t, n, k: t // n, "one call every threshold turns"),
    "every gap": (lambda t, n, k: t // (n - k), "one call every gap from the start"),
    "off by one": (lambda t, n, k: 0 if t <= n else 1 + (t - n) // (n - k), "misses the call at the threshold"),
    "gap of keep": (lambda t, n, k: 0 if t < n else 1 + (t - n) // k, "a gap of keep turns"),
    "gap one too long": (lambda t, n, k: 0 if t < n else 1 + (t - n) // (n - k + 1), None),
    "keep plus one": (lambda t, n, k: max(0, (t - k - 1) // (n - k)), None),
    "max instead of guard": (lambda t, n, k: max(1, 1 + (t - n) // (n - k)), None),
    "loop that counts turns": (lambda t, n, k: sum(1 for turn in range(n, t + 1) if (turn - n) % (n - k) == 0) + 1,
                               None),
}


# Answers that count right but hand back something other than an int: the check must say so, not send the
# student to count the calls again.
WRONG_CALL_TYPES = {
    "prints instead of returning": (lambda t, n, k: print(calls_formula(t, n, k)), "did you forget `return`?"),
    "returns a text": (lambda t, n, k: f"{calls_formula(t, n, k)} calls", "'4 calls' for 10 turns"),
    "returns the turns of the calls": (lambda t, n, k: list(range(n, t + 1, n - k)), "not a number"),
    "true division": (lambda t, n, k: 0 if t < n else 1 + (t - n) / (n - k), "a float"),
    "a whole float": (lambda t, n, k: float(calls_formula(t, n, k)), "returned 4.0 for"),
    "a bool": (lambda t, n, k: calls_formula(t, n, k) > 0, "not a number"),
}


@pytest.mark.parametrize("name", WRONG_CALL_TYPES)
def test_a_calls_answer_that_is_not_an_int_is_told_so(name):
    answer, words = WRONG_CALL_TYPES[name]
    assert_named(grade_calls_formula, answer, "not an int", words)


@pytest.mark.parametrize("answer", RIGHT_CALLS, ids=lambda f: f.__name__)
def test_every_style_of_right_calls_answer_passes(answer):
    assert [answer(*case) for case in calls.CASES] == [summary_schedule(*case).calls for case in calls.CASES]
    assert check_calls_formula(answer).status == CORRECT


@pytest.mark.parametrize("name", WRONG_CALLS)
def test_each_wrong_calls_answer_fails_and_is_named(name):
    answer, mistake = WRONG_CALLS[name]
    verdict = assert_named(grade_calls_formula, answer, mistake, "The smallest: for ")
    smallest = min(case for case in calls.CASES if answer(*case) != calls.memory_calls(*case))
    assert f"for {calls.setting(smallest)}," in verdict.message  # the smallest case that shows it


@pytest.mark.parametrize("mistake", calls.MISTAKES, ids=lambda m: m.name)
def test_every_named_calls_mistake_is_named_as_itself(mistake):
    assert grade_calls_formula(mistake.rule).mistake == mistake.name


def test_the_calls_check_tries_every_small_setting_and_hundreds_in_all():
    small = {(t, n, k) for t in range(1, 9) for n in range(2, 6) for k in range(1, n)}
    assert small <= set(calls.CASES) and len(calls.CASES) >= 140


def test_calls_check_says_not_done_and_stops_a_loop_that_never_ends():
    assert check_calls_formula(todo).status == NOT_DONE

    def forgets_to_count(t, n, k):
        turn = 0
        while turn < t:  # turn never changes
            pass
    verdict = check_calls_formula(forgets_to_count)
    assert verdict.status == WRONG and "still running" in verdict.message


def test_calls_check_does_not_print_what_the_answer_prints(capsys):
    def chatty(t, n, k):
        print("thinking about", t, n, k)
        return calls_formula(t, n, k)
    assert check_calls_formula(chatty).status == CORRECT
    assert capsys.readouterr().out.strip().splitlines() == [str(check_calls_formula(chatty))]


# ----- 2.1 -------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def notebook():
    """Notebook 02's own cells (prompt, summarise_turns, SummaryMemory, chat), as a student's kernel has them."""
    return load_core("02_summary_memory_run.ipynb")


def window_class(notebook, body, base="SummaryMemory"):
    """A WindowMemory defined in the notebook's namespace, as a student's cell would define it."""
    source = f"class WindowMemory({base}):\n    def add_message(self, role, content):\n" + "".join(
        f"        {line}\n" for line in body.strip().splitlines())
    exec(source, notebook)
    return notebook["WindowMemory"]


APPEND = "message = {'role': role, 'content': content}\nself.recent_turns.append(message)\nself.archive.append(message)\n"
TRIGGER = "if role == 'assistant' and len(self.recent_turns) // 2 >= self.max_turns_before_summary:\n"
RIGHT_WINDOWS = {
    "slice": APPEND + TRIGGER + "    self.recent_turns = self.recent_turns[-2 * self.turns_to_keep_verbatim:]",
    "del": APPEND + TRIGGER + "    del self.recent_turns[:len(self.recent_turns) - 2 * self.turns_to_keep_verbatim]",
    "pop in a loop": APPEND + TRIGGER + "    while len(self.recent_turns) > 2 * self.turns_to_keep_verbatim:\n"
                                        "        self.recent_turns.pop(0)",
    "no role test (after a user message it never fires)": (
        APPEND + TRIGGER.replace("role == 'assistant' and ", "")
        + "    self.recent_turns = self.recent_turns[-2 * self.turns_to_keep_verbatim:]"),
    "drop when the next turn starts": (
        "if role == 'user' and len(self.recent_turns) // 2 >= self.max_turns_before_summary:\n"
        "    self.recent_turns = self.recent_turns[-2 * self.turns_to_keep_verbatim:]\n" + APPEND),
}
WRONG_WINDOWS = {
    "keeps messages, not turns": (APPEND + TRIGGER + "    self.recent_turns = self.recent_turns[-self.turns_to_keep_verbatim:]",
                                  "keeps messages, not turns"),
    "drops from the archive too": (APPEND + TRIGGER + "    self.recent_turns = self.recent_turns[-2 * self.turns_to_keep_verbatim:]\n"
                                   "    self.archive = self.archive[-2 * self.turns_to_keep_verbatim:]",
                                   "drops from the archive"),
    "summarises after all": ("super().add_message(role, content)", "summarises"),
    "keeps the summary": (APPEND + TRIGGER + "    self.current_summary = 'older turns dropped'\n"
                          "    self.recent_turns = self.recent_turns[-2 * self.turns_to_keep_verbatim:]",
                          "writes a summary"),
    "keeps the oldest": (APPEND + TRIGGER + "    self.recent_turns = self.recent_turns[:2 * self.turns_to_keep_verbatim]",
                         "keeps the oldest turns"),
    "waits one turn": (APPEND + TRIGGER.replace(">=", ">") + "    self.recent_turns = self.recent_turns[-2 * self.turns_to_keep_verbatim:]",
                       "waits one turn too long"),
    "counts messages as turns": (APPEND + TRIGGER.replace(" // 2", "")
                                 + "    self.recent_turns = self.recent_turns[-2 * self.turns_to_keep_verbatim:]",
                                 "counts messages as turns"),
    "drops every turn": (APPEND + TRIGGER + "    self.recent_turns = []", "drops every turn"),
    "keeps one turn too many": (APPEND + TRIGGER + "    self.recent_turns = self.recent_turns[-2 * self.turns_to_keep_verbatim - 2:]",
                                None),
    "forgets the archive": ("message = {'role': role, 'content': content}\nself.recent_turns.append(message)\n" + TRIGGER
                            + "    self.recent_turns = self.recent_turns[-2 * self.turns_to_keep_verbatim:]",
                            "drops from the archive"),
    "archive copies, not in order": (
        "message = {'role': role, 'content': content}\nself.recent_turns.append(message)\nself.archive.insert(0, message)\n"
        + TRIGGER + "    self.recent_turns = self.recent_turns[-2 * self.turns_to_keep_verbatim:]", "archive differs"),
    "loops forever": (APPEND + TRIGGER + "    while len(self.recent_turns) > 2 * self.turns_to_keep_verbatim:\n"
                                          "        self.recent_turns[1:]", "never ends"),
    "raises": (APPEND + "self.recent_turns = self.recent_turns[99]", "raises"),
}


@pytest.mark.parametrize("name", RIGHT_WINDOWS)
def test_every_style_of_right_window_passes(notebook, name):
    assert check_window_memory(window_class(notebook, RIGHT_WINDOWS[name])).status == CORRECT


@pytest.mark.parametrize("name", WRONG_WINDOWS)
def test_each_wrong_window_fails_and_is_named(notebook, name):
    body, mistake = WRONG_WINDOWS[name]
    assert_named(grade_window_memory, window_class(notebook, body), mistake)


@pytest.mark.parametrize("mistake", window.MISTAKES, ids=lambda m: m.name)
def test_every_named_window_mistake_is_told_apart_from_the_memory_and_named_as_itself(mistake):
    class Replays:  # a window whose requests are the mistake's, with the right archive and no summary
        def __init__(self, system_prompt, max_turns_before_summary, turns_to_keep_verbatim):
            self.setting, self.archive, self.current_summary = (max_turns_before_summary, turns_to_keep_verbatim), [], None

        def add_message(self, role, content):
            self.archive.append({"role": role, "content": content})

        def get_messages_for_api(self):
            return mistake.rule(*self.setting, (len(self.archive) + 1) // 2)[-1]

    differ = [case for case in window.CASES if mistake.rule(*case) != window.expected_window(*case).requests]
    assert differ and min(turns for _, _, turns in differ) <= 4, f"no small case tells {mistake.name!r} apart"
    assert grade_window_memory(Replays).mistake == mistake.name


def test_a_hanging_or_crashing_window_is_told_what_happened(notebook):
    hang = grade_window_memory(window_class(notebook, WRONG_WINDOWS["loops forever"][0]))
    assert "still running" in hang.message
    crash = grade_window_memory(window_class(notebook, WRONG_WINDOWS["raises"][0]))
    assert "raised IndexError" in crash.message


def test_window_check_says_not_done_and_never_calls_a_model(notebook):
    assert check_window_memory(window_class(notebook, "raise NotImplementedError")).status == NOT_DONE
    before = notebook["summarise_turns"]
    check_window_memory(window_class(notebook, "super().add_message(role, content)"))
    assert notebook["summarise_turns"] is before  # the check put the notebook's summariser back


def test_window_check_reports_a_class_that_cannot_be_made():
    class Broken:
        def __init__(self, *args, **kwargs):
            raise KeyError("oops")
    verdict = check_window_memory(Broken)
    assert verdict.status == WRONG and "KeyError" in verdict.message


# ----- 3.1 -------------------------------------------------------------------------------------------

def rule_by_split(summary):
    return any("equit" in s.lower() and any(w in s.lower() for w in RULE_WORDS)
               for s in re.split(r"(?<=[.!?])\s+", summary))


def rule_by_dots(summary):
    for sentence in summary.lower().replace("!", ".").replace("?", ".").split("."):
        if "equit" in sentence:
            for word in RULE_WORDS:
                if word in sentence:
                    return True
    return False


def rule_by_regex(summary):
    words = "|".join(map(re.escape, RULE_WORDS))
    return bool(re.search(rf"[^.!?]*equit[^.!?]*", summary, re.I)) and any(
        re.search(words, s, re.I) for s in re.findall(r"[^.!?]*equit[^.!?]*", summary, re.I))


def rule_with_a_flag(summary):
    found = False
    for sentence in re.split(r"[.!?]", summary):
        if "equit" in sentence.lower() and any(word in sentence.lower() for word in RULE_WORDS):
            found = True
    return found


def first_equity_sentence_only(summary):
    for sentence in re.split(r"(?<=[.!?])\s+", summary.lower()):
        if "equit" in sentence:
            return any(word in sentence for word in RULE_WORDS)
    return False


def every_equity_sentence(summary):
    about = [sentence for sentence in re.split(r"(?<=[.!?])\s+", summary.lower()) if "equit" in sentence]
    return bool(about) and all(any(word in sentence for word in RULE_WORDS) for sentence in about)


def rule_by_findall(summary):
    return any("equit" in s.lower() and any(w in s.lower() for w in RULE_WORDS)
               for s in re.findall(r"[^.!?]+[.!?]?", summary))


RIGHT_RULES = [rule_by_split, rule_by_dots, rule_by_regex, rule_with_a_flag, rule_by_findall]
WRONG_RULES = {
    "keyword only": (lambda s: "equit" in s.lower(), "the keyword check"),
    "anywhere": (lambda s: any(w in s.lower() for w in RULE_WORDS), "rule words anywhere"),
    "case": (lambda s: any(w in x for x in re.split(r"(?<=[.!?])\s+", s) if "equit" in x for w in RULE_WORDS),
             "upper and lower case"),
    "equity, not equit": (lambda s: any(w in x.lower() for x in re.split(r"(?<=[.!?])\s+", s)
                                        if "equity" in x.lower() for w in RULE_WORDS), "'equity' misses 'equities'"),
    "a negation word added": (lambda s: any("equit" in x and any(w in x for w in RULE_WORDS + ("not",))
                                            for x in re.split(r"(?<=[.!?])\s+", s.lower())), "a negation word added"),
    "'no' and 'not' added": (lambda s: any("equit" in x and any(w in x for w in RULE_WORDS + ("no", "not"))
                                           for x in re.split(r"(?<=[.!?])\s+", s.lower())),
                             "a negation word added ('no')"),
    "only 'never'": (lambda s: any("never" in x.lower() for x in s.split(". ") if "equit" in x.lower()), None),
    "only '.' ends a sentence": (lambda s: any("equit" in x and any(w in x for w in RULE_WORDS)
                                               for x in s.lower().split(".")), "only '.' ends a sentence"),
    "the first sentence about equity only": (first_equity_sentence_only, None),
    "every sentence about equity": (every_equity_sentence, None),
    "cuts at commas too": (lambda s: any("equit" in x and any(w in x for w in RULE_WORDS)
                                         for x in re.split(r"[.,!?]", s.lower())), None),
    "whole words only": (lambda s: any("equit" in x and any(w in x.split() for w in RULE_WORDS)
                                       for x in re.split(r"(?<=[.!?])\s+", s.lower())), None),
    "no return": (lambda s: None, "not a bool"),
    "a string": (lambda s: "rule", "not a bool"),
}


@pytest.mark.parametrize("answer", RIGHT_RULES, ids=lambda f: f.__name__)
def test_every_style_of_right_rule_check_passes(answer):
    assert check_rule_check(answer).status == CORRECT


@pytest.mark.parametrize("name", WRONG_RULES)
def test_each_wrong_rule_check_fails_and_is_named(name):
    answer, mistake = WRONG_RULES[name]
    assert_named(grade_rule_check, answer, mistake)


@pytest.mark.parametrize("mistake", rule_check.MISTAKES, ids=lambda m: m.name)
def test_every_named_rule_mistake_is_named_as_itself(mistake):
    assert grade_rule_check(lambda s: mistake.rule(s, rule_check.sentences)).mistake == mistake.name


def test_rule_check_says_not_done_and_tries_hundreds_of_summaries():
    assert check_rule_check(todo).status == NOT_DONE
    assert len(rule_check.CASES) >= 200 and rule_check.CASES == tuple(rule_check.cases())  # fixed seed


def test_the_exercises_rule_agrees_with_the_drift_measure_on_every_case():
    """What exercise 3.1 calls a rule is what notebook 03's measure calls one, on every case it tries."""
    for summary in rule_check.CASES:
        assert states_rule(summary) == (rule_strength(summary)[0] == "rule"), summary
    assert all(rule_strength(s)[0] == "rule" for s in EQUITY_RULES)
    assert all(rule_strength(s)[0] == "preference" for s in EQUITY_PREFERENCES)
    assert all(rule_strength(s)[0] == "mentioned" for s in EQUITY_MENTIONS)
    assert all(rule_strength(s)[0] == "absent" for s in OTHER_RULES + OTHER_FACTS)
    assert any(not states_rule(s) and any(w in s.lower() for w in RULE_WORDS) for s in rule_check.CASES)
