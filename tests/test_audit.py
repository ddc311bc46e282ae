"""The audit finds what a summary states that no user message said."""
from helpers.display.lines import audit_report
from helpers.lessons.data import lesson3, lesson4, published_run
from helpers.measure.audit import audit_summary, figures

LESSON3_USERS = [{"role": "user", "content": text} for text in lesson3()["summary_run"]["user_turns"]]
LESSON4_USERS = [{"role": "user", "content": text} for text in lesson4()["buffer_run"]["user_turns"]]


def test_the_lessons_summary_carries_the_models_own_amounts():
    claims = audit_summary(published_run(3)["summary_run"]["summary_after_turn_6"], LESSON3_USERS)
    flagged = {claim.text for claim in claims}
    assert {"₹30,000", "₹20,000", "₹15‑20 k", "30 %", "70 %"} <= flagged
    assert not flagged & {"₹1,20,000", "₹60,000", "₹50,000"}  # the user's own figures
    assert all(claim.kind == "figure" for claim in claims)


def test_no_debts_and_an_invented_corpus_are_flagged():
    summary = ("Chiru, 32, earns ₹1,20,000, has no debts and no other investments, and aims for a corpus "
               "of 4 to 5 crore rupees by 55; his FD matures in three months.")
    flagged = {(claim.kind, claim.text) for claim in audit_summary(summary, LESSON4_USERS)}
    assert flagged == {("negation", "no debts"), ("figure", "4 to 5 crore")}


def test_a_figure_only_a_reply_gave_is_attributed_to_the_reply():
    archive = [{"role": "user", "content": "I want to retire by 55."},
               {"role": "assistant", "content": "That gives you 23 years."}]
    (claim,) = audit_summary("He has 23 years to retire at 55.", archive)
    assert claim.text == "23" and claim.source == "assistant reply"
    assert "an assistant reply said it" in audit_report("He has 23 years to retire at 55.", archive)


def test_figures_read_indian_units_and_ranges():
    (lakh,) = figures("₹1.8 L")
    assert 180_000 in lakh.values
    (span,) = figures("₹15-20 k")
    assert span.numbers == (15, 20) and {15_000, 20_000} <= span.values
    assert [f.text for f in figures("one paragraph, three months")] == ["three"]


def test_report_counts_and_lists():
    text = audit_report("He has no debts.", LESSON4_USERS)
    assert text.splitlines()[0].endswith(": 1")
    assert "'no debts'" in text


def test_a_summary_cut_mid_figure_is_not_a_false_finding():
    """A summary cut at max_tokens can end inside a figure ("₹1,20,"): the fragment is not a claim."""
    users = [{"role": "user", "content": "My salary is ₹1,20,000 a month and I pay ₹25,000 rent."}]
    for cut in ("The user earns ₹1,20,", "The user earns ₹1,20", "The user pays ₹25,000 rent and earns ₹1,2"):
        assert audit_summary(cut, users) == [], cut
    # a figure that really ends the summary is still checked, and so is one before the cut
    assert [c.text for c in audit_summary("The user earns ₹90,000.", users)] == ["₹90,000"]
    assert [c.text for c in audit_summary("The user earns ₹90,000 and pays ₹2", users)] == ["₹90,000"]
    assert "cut" in audit_report("The user earns ₹1,20,", users)
