"""Interrupt the project's code the way the notebook's stop button does: ``KeyboardInterrupt`` at a chosen call."""
from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from typing import Any

from helpers.base.paths import REPO_ROOT

PROJECT_CODE = str(REPO_ROOT / "helpers")


class InterruptAtCall:
    """While active, raise ``KeyboardInterrupt`` at the start of the ``at``-th Python call made in the
    project's code or in one of ``also`` (functions, e.g. a test's summariser); ``at=None`` only counts
    the calls, and ``names`` lists the functions called, in order. Generators are left out: resuming one is
    not a call, and one closed when it is collected would swallow the interrupt."""

    def __init__(self, at: int | None, also: tuple[Callable[..., Any], ...] = ()) -> None:
        self.at, self.calls, self.raised, self.names = at, 0, False, []
        self._files = (PROJECT_CODE, *(function.__code__.co_filename for function in also))

    def _trace(self, frame: Any, event: str, arg: Any) -> None:
        code = frame.f_code
        if (event == "call" and not self.raised and code.co_filename.startswith(self._files)
                and not code.co_flags & inspect.CO_GENERATOR):
            self.calls += 1
            self.names.append(code.co_name)
            if self.calls == self.at:
                self.raised = True
                raise KeyboardInterrupt(f"interrupted at call {self.at} ({code.co_name})")

    def __enter__(self) -> InterruptAtCall:
        self._previous = sys.gettrace()
        sys.settrace(self._trace)
        return self

    def __exit__(self, *exc: object) -> bool:
        sys.settrace(self._previous)
        return False

