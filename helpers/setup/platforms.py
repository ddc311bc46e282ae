"""Where a notebook runs (for the set-up check) and, on Colab, keys from Colab's secrets: the first cell of every
notebook calls ``use_colab_secrets()`` there (``tools/platform_cells.py`` writes that cell)."""
from __future__ import annotations

import os
import sys

# What connect() reads from the environment (or .env) and a student may keep in Colab's secrets (the key icon).
COLAB_SECRETS = ("GROQ_API_KEY", "OPENAI_API_KEY", "LLM_API_KEY", "LLM_BASE_URL", "LLM_MODEL", "LLM_MODE")


def platform_name() -> str:
    """Colab, JupyterLite, Binder, JupyterHub, VS Code or local: what the kernel can tell (not the front end,
    except VS Code, which starts its kernels with VSCODE_PID set)."""
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
