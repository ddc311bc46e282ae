"""The exercise checker gives three distinct, deterministic verdicts."""
from helpers.display.exercise import CORRECT, NOT_DONE, WRONG, feedback, judge


def test_an_untouched_answer_is_not_done():
    assert judge("1", ..., 3, right="yes", hint="h").status == NOT_DONE
    assert judge("1", None, 3, right="yes", hint="h").status == NOT_DONE


def test_a_right_answer_is_correct_and_a_wrong_one_says_what_was_wrong(capsys):
    assert feedback("2", 3, 3, right="three calls", hint="count again").status == CORRECT
    wrong = feedback("2", 4, 3, right="three calls", hint="count again", explain=lambda a: f"you said {a} calls")
    assert wrong.status == WRONG and "you said 4 calls" in str(wrong) and "count again" in str(wrong)
    printed = capsys.readouterr().out.splitlines()
    assert printed == ["[exercise 2] correct: three calls", str(wrong)]
