"""One list of secret variable names (issue 15): a provider added in one place has its key used by connect(),
scrubbed from messages and recordings, and removed from the tests' environment."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from helpers.base.paths import REPO_ROOT
from helpers.model import settings
from helpers.model.connect import MissingKey, ModelUnavailable, connect
from helpers.model.recordings import recording_path
from helpers.model.secrets import configured_secrets, scrub_text
from helpers.model.settings import Provider
from tests.support.errors import assert_fields
from tests.support.mock_api import Scripted, ok, status

NEW_KEY = "nk-" + "a-short-new-provider-key"  # no known key shape: only the list can scrub it

pytestmark = pytest.mark.usefixtures("model_env")


@pytest.fixture
def new_provider(monkeypatch):
    """A provider added to the one table, and nowhere else."""
    monkeypatch.setitem(settings.PROVIDERS, "newco", Provider("NewCo", "https://api.newco.invalid/v1", "NEWCO_API_KEY",
                                                              "newco-small"))
    return "NEWCO_API_KEY"


def test_a_provider_added_to_the_table_is_a_secret_everywhere(new_provider, monkeypatch):
    assert new_provider in settings.secret_variables() and new_provider in settings.model_variables()
    monkeypatch.setenv(new_provider, NEW_KEY)
    assert NEW_KEY in configured_secrets()
    assert scrub_text(f"the key {NEW_KEY} leaked", configured_secrets()) == "the key [REDACTED] leaked"


def test_connect_uses_the_new_providers_key_and_scrubs_it_from_errors_and_recordings(new_provider, monkeypatch):
    monkeypatch.setenv(new_provider, NEW_KEY)
    echo = Scripted(ok(f"you sent {NEW_KEY}"), status(500, f"bad key {NEW_KEY}"))
    access = connect("record", provider="newco", transport=echo.transport(), recording="run", load_env=False,
                     quiet=True, max_retries=0)
    assert access.model == "newco-small"
    access.complete([{"role": "user", "content": f"my key is {NEW_KEY}"}], max_tokens=5)
    assert echo.requests[0].headers["authorization"] == f"Bearer {NEW_KEY}"  # the key it was given was used...
    stored = recording_path("run").read_text(encoding="utf-8")
    assert NEW_KEY not in stored and json.loads(stored)["exchanges"]  # ...and never stored
    with pytest.raises(ModelUnavailable) as raised:
        access.complete([{"role": "user", "content": "again"}], max_tokens=5)
    assert NEW_KEY not in str(raised.value)
    monkeypatch.delenv(new_provider)
    with pytest.raises(MissingKey) as missing:
        connect("live", provider="newco", load_env=False, quiet=True)
    assert_fields(missing.value, reason="missing key", setting=new_provider)


def test_the_tests_environment_is_cleaned_of_every_model_variable():
    """The root conftest removes each variable of the one list before any test or notebook kernel starts."""
    leaked = {name: "set-by-the-developer" for name in settings.model_variables()}
    script = ("import os, runpy; runpy.run_path('conftest.py'); "
              "print(sorted(n for n in os.environ if n in %r and n != 'LLM_MODE'), os.environ['LLM_MODE'])"
              % (list(leaked),))
    out = subprocess.run([sys.executable, "-c", script], cwd=REPO_ROOT, env={**os.environ, **leaked},
                         capture_output=True, text=True, check=True).stdout
    assert out.split() == ["[]", "offline"]


def test_env_example_names_every_variable_model_access_reads():
    example = (REPO_ROOT / ".env.example").read_text(encoding="utf-8")
    assert [name for name in settings.model_variables() if f"{name}=" not in example] == []
