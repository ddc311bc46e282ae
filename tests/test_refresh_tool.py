"""tools/refresh_notebooks.py (issue 18): the cell timeout is a flag with a default fit for a slow server, a run
in another mode than offline leaves the stored outputs alone unless asked, and after a record run the tool says
how to see each new or changed recording (git diff shows nothing for a file git does not track)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from helpers.base.paths import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "tools"))
import refresh_notebooks as tool  # noqa: E402  (a script, imported from its folder)


@pytest.fixture
def calls(monkeypatch, tmp_path):
    """The tool's main() with notebooks that are not executed: each call's (path, timeout, store) is kept."""
    made: list[tuple[str, int, bool]] = []
    monkeypatch.setattr(tool, "refresh", lambda path, timeout, store: made.append((path.name, timeout, store)) or 0.0)
    monkeypatch.setenv("LLM_RECORDINGS_DIR", str(tmp_path / "recordings"))
    monkeypatch.setenv("LLM_MODE", "offline")
    return made


@pytest.mark.parametrize("argv, timeout, store", [
    (["02"], 600, True),
    (["--mode", "replay", "02"], 600, False),
    (["--mode", "record", "02"], 7200, False),
    (["--mode", "record", "--store-outputs", "--cell-timeout", "9000", "02"], 9000, True),
])
def test_only_an_offline_run_stores_outputs_unless_asked_and_live_cells_get_longer(calls, capsys, argv, timeout, store):
    assert tool.main(argv) == 0
    assert calls == [("02_summary_memory_run.ipynb", timeout, store)]
    printed = capsys.readouterr().out
    assert ("stored outputs left as they were" in printed) is (not store)


def test_a_cell_timeout_must_be_positive(calls):
    with pytest.raises(SystemExit):
        tool.main(["--cell-timeout", "0", "02"])


def git(folder, *args):
    subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"})


def test_a_new_recording_is_shown_with_git_add_n_and_a_changed_one_with_git_diff(tmp_path):
    git(tmp_path, "init", "-q")
    old = tmp_path / "05_summary_buffer_run.json"
    old.write_text("{}", encoding="utf-8")
    git(tmp_path, "add", old.name)
    git(tmp_path, "commit", "-qm", "recorded")
    untouched = tmp_path / "03_drift_measurement.json"
    untouched.write_text("{}", encoding="utf-8")
    before = tool.recordings_state(tmp_path)
    old.write_text('{"exchanges": []}', encoding="utf-8")
    new = tmp_path / "02_summary_memory_run.json"
    new.write_text("{}", encoding="utf-8")
    lines = tool.recording_lines(before, tool.recordings_state(tmp_path))
    assert len(lines) == 2  # the untouched file is not mentioned
    assert lines[0].startswith(f"new recording {new}: git does not track it yet, so git diff shows nothing")
    assert f"git add -N {new} && git diff {new}" in lines[0]
    assert lines[1] == f"changed recording {old}: see what changed with  git diff {old}"
