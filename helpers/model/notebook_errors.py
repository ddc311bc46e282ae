"""SDK errors raised by a notebook's own ``client.chat.completions.create(...)``, shown as the project's
errors are: what happened and what to do first (attempts, ``LLM_TIMEOUT``, ``Retry-After``, the server's
words with every secret scrubbed), then a two-line traceback; ``%tb`` in the next cell prints the whole one.

``connect()`` registers each client it makes; inside IPython an ``openai.APIError`` is explained by the
client whose base URL the failed request went to. Outside IPython nothing changes.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from types import TracebackType
from typing import Any

import openai

from helpers.base.errors import short_traceback
from helpers.model.secrets import public_url

_explainers: dict[str, Callable[[BaseException], str]] = {}  # public base URL -> that client's explain()


def explain_in_notebooks(base_url: str, explain: Callable[[BaseException], str]) -> None:
    """In an IPython kernel, show SDK errors of requests to ``base_url`` with ``explain``'s message first."""
    key = public_url(base_url).rstrip("/")
    _explainers.pop(key, None)
    _explainers[key] = explain  # the latest client for a URL explains its errors; the latest overall is the default
    shell = _ipython()
    if shell is not None:
        shell.set_custom_exc((openai.APIError,), _show)


def _ipython() -> Any:
    module = sys.modules.get("IPython")  # only a running kernel has imported it; never import it here
    return module.get_ipython() if module is not None else None


def _explainer_for(error: BaseException) -> Callable[[BaseException], str] | None:
    request = getattr(error, "request", None)
    url = public_url(str(request.url)) if request is not None else ""
    for key in reversed(list(_explainers)):
        if url.startswith(key + "/") or url == key:
            return _explainers[key]
    return next(reversed(_explainers.values()), None)


def _show(shell: Any, etype: type[BaseException], value: BaseException, tb: TracebackType | None,
          tb_offset: int | None = None) -> list[str]:
    """IPython's custom exception handler: the explanation first, two more lines, ``%tb`` still works."""
    shell._get_exc_info((etype, value, tb))  # sets sys.last_* so that %tb prints the whole traceback
    explain = _explainer_for(value)
    lines = short_traceback(etype.__name__, explain(value) if explain else str(value), tb)
    shell._showtraceback(etype, value, lines)
    return lines
