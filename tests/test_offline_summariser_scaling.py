"""The stand-in's extractive summariser stays fast on long inputs and keeps choosing the same sentences (issue 9)."""
from __future__ import annotations

import random

import pytest

from helpers.base.text import word_count
from helpers.model.offline import summariser as module
from helpers.model.offline.summariser import extractive_summary


def messages(n: int, seed: int = 0) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    templates = ["My salary is ₹{0},000.", "I never buy fund {0}.", "I am {1} years old.", "I plan to retire by 20{1}.",
                 "That sounds nice.", "I hold {0}% in equity."]
    return [(("user", "assistant")[i % 2], " ".join(rng.choice(templates).format(rng.randint(1, 999), rng.randint(10, 99))
                                                    for _ in range(rng.randint(1, 6)))) for i in range(n)]


def one_drop_at_a_time(existing, msgs, word_limit):
    """The original rule, written the slow way: drop the lowest score (newest of equals) until it fits."""
    calls = []
    original = module._fewest_drops_within

    def slow(candidates, limit):
        kept = list(candidates)
        while len(kept) > 1 and word_count(module._render(kept)) > limit:
            kept.remove(min(kept, key=lambda s: (s.score, -s.position)))
        calls.append(len(kept))
        return kept

    module._fewest_drops_within = slow
    try:
        return extractive_summary(existing, msgs, word_limit=word_limit)
    finally:
        module._fewest_drops_within = original


@pytest.mark.parametrize("seed", range(12))
def test_the_summary_is_the_one_the_drop_one_at_a_time_rule_gives(seed):
    rng = random.Random(seed)
    msgs = messages(rng.randint(0, 60), seed)
    existing = "User: I am 41 years old. I never buy crypto." if seed % 2 else None
    limit = rng.choice([5, 20, 60, 150, 400])
    assert extractive_summary(existing, msgs, word_limit=limit) == one_drop_at_a_time(existing, msgs, limit)


def test_a_long_input_is_rendered_a_logarithmic_number_of_times(monkeypatch):
    renders = []
    real = module._render
    monkeypatch.setattr(module, "_render", lambda sentences: renders.append(len(sentences)) or real(sentences))
    extractive_summary(None, messages(4000), word_limit=150)
    assert len(renders) <= 2 * 14  # bisection over thousands of sentences, not one render per dropped sentence
