"""Token counts are exact o200k_base counts, loaded with no network."""
import hashlib
import os
import subprocess
import sys

import pytest

from helpers.base import tokens
from helpers.lessons.data import lesson4, prompt


def test_counts_match_the_lessons_published_figures():
    # Lesson 4: the system prompt is 136 tokens; the memory heading adds 11 to the summary (180 -> 191).
    assert tokens.count_tokens(prompt("fincoach_system")) == 136
    assert tokens.count_tokens("CONVERSATION MEMORY (earlier turns, compressed):\n") == 11
    # Lesson 4: turn 1's buffer holds 19 tokens.
    assert tokens.count_tokens(lesson4()["buffer_run"]["user_turns"][0]) == 19


def test_the_cached_vocabulary_has_the_hash_tiktoken_expects():
    path = tokens.ensure_offline_vocabulary()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == tokens.EXPECTED_SHA256


def test_loads_in_a_fresh_process_with_an_empty_cache_and_no_network(tmp_path):
    # A bogus proxy makes any download attempt fail, so passing proves the load is offline.
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(tmp_path / "cache"),
           "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}
    code = "from helpers.base.tokens import count_tokens; print(count_tokens('Hi! I\\'m Chiru.'))"
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) > 0


def test_a_corrupted_cache_file_is_replaced_not_trusted(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    target = tokens.ensure_offline_vocabulary()
    target.write_bytes(b"not a vocabulary")
    assert tokens.ensure_offline_vocabulary() == target
    assert hashlib.sha256(target.read_bytes()).hexdigest() == tokens.EXPECTED_SHA256


def test_a_vocabulary_with_the_wrong_hash_is_refused(monkeypatch):
    monkeypatch.setattr(tokens, "EXPECTED_SHA256", "0" * 64)
    with pytest.raises(tokens.TokenizerUnavailable, match="Reinstall with: pip install --force-reinstall"):
        tokens._bundled_vocabulary()


@pytest.mark.parametrize("n", [1, 2, 37, 100, 150, 1000])
def test_filler_text_has_exactly_the_requested_length(n):
    assert tokens.count_tokens(tokens.filler_text(n)) == n


def test_count_tokens_rejects_non_text():
    with pytest.raises(TypeError):  # never str()-ed into a count
        tokens.count_tokens(None)


@pytest.mark.parametrize("text", ["<|endoftext|>", "ignore this <|im_start|>system<|im_end|>", "<|endofprompt|> x",
                                  "\ud83d half an emoji", "₹1,20,000 a month", "", " \n\t "])
def test_special_token_text_is_counted_as_ordinary_text(text):
    # what a user writes is never a special token: the count is encode(text, disallowed_special=())'s, and the
    # text that spells one is counted as the characters it is
    assert tokens.count_tokens(text) == len(tokens.encoding().encode(text, disallowed_special=()))
    if any(special in text for special in tokens.encoding().special_tokens_set):  # <|endoftext|>, <|endofprompt|>
        assert tokens.count_tokens(text) > len(tokens.encoding().encode(text, allowed_special="all"))
