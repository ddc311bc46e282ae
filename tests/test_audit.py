"""The audit finds what a summary states that no user message said."""
from helpers.display.lines import audit_report
from helpers.lessons.data import lesson3, lesson4, published_run
from helpers.measure.audit import audit_summary, figures
from helpers.display.lines import claim_line

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
    assert "an assistant reply said it" in claim_line(claim)


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


# ----- bounded time on adversarial input (issue 25 item 6) -------------------------------------------

def test_cut_figure_reads_a_long_run_of_digits_and_dots_a_bounded_number_of_times(monkeypatch):
    """The cut-figure pattern is tried at a few places at the tail, never once per digit (which made
    ``"1." * 20000`` take 17 s): counted, not timed."""
    from helpers.measure import audit

    class Counting:
        def __init__(self, pattern):
            self.pattern, self.calls = pattern, 0

        def match(self, *args):
            self.calls += 1
            return self.pattern.match(*args)

        def search(self, *args):
            self.calls += 10**9  # a search restarts at every position: never used
            return self.pattern.search(*args)

    counting = Counting(audit._CUT_FIGURE)
    monkeypatch.setattr(audit, "_CUT_FIGURE", counting)
    for text, expected in (("1." * 20000, None), ("1." * 20000 + "5", "1." * 20000 + "5"),
                           ("earns ₹1,20,", "₹1,20,"), ("earns rs.5", "rs.5"), ("no figure", None)):
        counting.calls = 0
        assert audit.cut_figure(text) == expected
        assert counting.calls <= audit._CURRENCY_ROOM + 1


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="1234567890 ,.-\u2013₹rsRSinrk%lakhcrore to ab\u0967\u0968", max_size=40))
def test_the_distinct_figures_an_audit_reads_are_the_figures_once_each(text):
    """The one-pass gathering of figure texts finds what the match-by-match reading finds, each once."""
    from helpers.measure.audit import figures

    every = figures(text)
    first = {}
    for figure in every:
        first.setdefault(figure.text, figure)
    assert figures(text, distinct=True) == list(first.values())
