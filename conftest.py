"""Test-wide settings: notebooks and tests run with no key and no network, deterministically."""
import os

# Force the offline stand-in for every notebook kernel nbval starts (kernels inherit this
# environment) and for any test that does not choose a mode itself. Keys are removed so that
# no test can reach a real endpoint by accident.
os.environ["LLM_MODE"] = "offline"
for _key in ("GROQ_API_KEY", "OPENAI_API_KEY", "LLM_API_KEY", "LLM_BASE_URL", "LLM_MODEL", "LLM_PROVIDER",
             "LLM_TIMEOUT", "LLM_REASONING_EFFORT", "LLM_RECORDINGS_DIR"):
    os.environ.pop(_key, None)
os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
