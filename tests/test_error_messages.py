"""Messages say the right thing: the summariser's wrong return types, what "nothing was lost" means,
whole sentences, and no configured secret in any explanation (issue 9)."""
from __future__ import annotations

import pytest

from helpers.memory.summary import SummaryMemory
from helpers.memory.summary_buffer import SummaryBufferMemory
from helpers.memory.types import SummariserError
from helpers.model.connect import ContextOverflow, ModelUnavailable, connect
from helpers.model.errors import Reason
from helpers.model.explain import explain_error
from helpers.base.text import duration
from tests.support.mock_api import Scripted, status

SYSTEM = "You are a test assistant."

pytestmark = pytest.mark.usefixtures("model_env")


@pytest.mark.parametrize("value, kind", [(None, "NoneType"), (42, "int"), (b"bytes", "bytes"), (["a"], "list")])
def test_a_summariser_returning_something_other_than_text_is_named_as_such(value, kind):
    memory = SummaryMemory(SYSTEM, lambda messages, existing: value, max_turns_before_summary=2, turns_to_keep_verbatim=1)
    memory.add_message("user", "turn 1")
    memory.add_message("assistant", "reply 1")
    memory.add_message("user", "turn 2")
    with pytest.raises(SummariserError) as raised:
        memory.add_message("assistant", "reply 2")
    assert raised.value.problem == "not text" and raised.value.kept_role == "assistant" and raised.value.will_retry
    assert f"the summariser returned {kind} " in str(raised.value)  # the message names what came back


@pytest.mark.parametrize("cls", [SummaryMemory, SummaryBufferMemory])
def test_nothing_was_lost_says_the_message_was_added_to_the_archive_in_whole_sentences(cls):
    def broken(messages, existing):
        raise ConnectionError("network down")

    memory = (cls(SYSTEM, broken, max_turns_before_summary=2, turns_to_keep_verbatim=1) if cls is SummaryMemory else
              cls(SYSTEM, broken, max_buffer_tokens=10, messages_to_compress_on_overflow=2))
    with pytest.raises(SummariserError) as raised:
        for text in ("a long first question " * 3, "a long reply " * 3, "another question " * 3, "reply " * 9):
            memory.add_message("user" if len(memory.archive) % 2 == 0 else "assistant", text)
    message = str(raised.value)
    assert "network down. Nothing was lost" in message
    assert "added to the archive" in message and "archive are unchanged" not in message
    assert message.endswith("go on.")


def test_no_configured_secret_reaches_an_explanation_whatever_its_length(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x9")
    monkeypatch.setenv("LLM_API_KEY", "tiny")
    handler = Scripted(status(500, "bad key tiny, sk-x9 and gsk_GROQKEYGROQKEYGROQKEY0123"))
    access = connect("live", api_key="gsk_GROQKEYGROQKEYGROQKEY0123", transport=handler.transport(),
                     load_env=False, quiet=True, max_retries=0)
    with pytest.raises(ModelUnavailable) as raised:
        access.complete([{"role": "user", "content": "hi"}], max_tokens=5)
    message = str(raised.value)
    assert "tiny" not in message and "sk-x9" not in message and "GROQKEY" not in message
    assert "bad key [REDACTED], [REDACTED] and [REDACTED]" in message  # the server's words, each secret replaced


@pytest.mark.parametrize("answer, reason", [(status(500, "busy"), Reason.SERVER_ERROR),
                                            (status(401, "Invalid API Key"), Reason.REJECTED_KEY),
                                            (status(418, "teapot"), Reason.HTTP_ERROR)])
def test_explaining_an_error_the_project_already_explained_says_it_once(answer, reason):
    access = connect("live", api_key="k", transport=Scripted(answer).transport(), load_env=False, quiet=True,
                     max_retries=0)
    with pytest.raises(ModelUnavailable) as raised:
        access.complete([{"role": "user", "content": "hi"}], max_tokens=5)
    assert raised.value.reason is reason
    once = str(raised.value)
    assert explain_error(raised.value, access) == once == explain_error(raised.value, access)  # no text doubled
    assert " or or " not in once and ".." not in once
    wrapped = SummariserError(f"the summariser raised ModelUnavailable while folding 2 messages: {once}")
    assert explain_error(wrapped, access) == str(wrapped)  # the memory's own explanation, not a second one around it


def test_a_context_overflow_is_not_told_to_run_again_and_a_wait_of_one_second_is_singular():
    overflow = status(400, "This model's maximum context length is 512 tokens. However, you requested 1566 tokens "
                      "(542 in the messages, 1024 in the completion).")
    access = connect("live", api_key="k", transport=Scripted(overflow).transport(), load_env=False, quiet=True,
                     max_retries=0)
    with pytest.raises(ContextOverflow) as raised:
        access.complete([{"role": "user", "content": "hi"}], max_tokens=5)
    assert raised.value.reason is Reason.CONTEXT_OVERFLOW and raised.value.retry_can_help is False
    assert "run again" not in str(raised.value).lower() and "Nothing was stored" not in str(raised.value)
    assert duration(1) == "1 second" and duration(30) == "30 seconds"
