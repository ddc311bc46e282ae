"""Test-wide settings: notebooks and tests run with no key and no network, deterministically."""
import os

from helpers.model.settings import model_variables

# Force the offline stand-in for every notebook kernel nbval starts (kernels inherit this
# environment) and for any test that does not choose a mode itself. Every secret and setting
# model access reads is removed (the one list in helpers.model.settings), so that no test can
# reach a real endpoint by accident.
for _name in model_variables():
    os.environ.pop(_name, None)
os.environ["LLM_MODE"] = "offline"
os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
