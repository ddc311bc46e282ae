"""A student's code run with a bound on time (``run_bounded``) and on calls (``limit_calls``): a loop that never ends
comes back as a message, not a kernel to interrupt. The stops are ``BaseException``s, which the student's ``except
Exception:`` cannot swallow. The bound is a trace function (``sys.settrace``) checking a deadline at every
instruction of the student's own code, not a watchdog thread: JupyterLite cannot start threads, and a thread's
stop may arrive after the call has returned. A call into C that never returns is not stopped."""
from __future__ import annotations

import sys
import sysconfig
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
_LIBRARIES = (str(Path(__file__).parents[1]), *{sysconfig.get_paths()[key] for key in ("stdlib", "purelib", "platlib")})


class TimedOut(BaseException):
    """It was still running after ``seconds``."""
    def __init__(self, seconds: float) -> None:
        super().__init__(f"still running after {seconds:g} seconds")
        self.seconds = seconds


class TooManyCalls(BaseException):
    """It called ``what`` more often than ``limit`` allows."""
    def __init__(self, what: str, limit: int) -> None:
        super().__init__(f"called {what} more than {limit} times")
        self.what, self.limit = what, limit


def run_bounded(function: Callable[..., T], *args: Any, seconds: float = 2.0) -> T:
    """``function(*args)``, or ``TimedOut`` at its first instruction after ``seconds``. Every instruction, not every
    line (a loop on one line emits no new line); frames of helpers, the standard library and installed packages
    are traced at their calls only, so the cost falls on the student's code; a debugger's tracer is put back."""
    deadline = time.monotonic() + seconds

    def on_step(frame: Any, event: str, arg: Any) -> Any:
        if time.monotonic() > deadline:
            raise TimedOut(seconds)
        return on_step

    def on_call(frame: Any, event: str, arg: Any) -> Any:
        on_step(frame, event, arg)
        if frame.f_code.co_filename.startswith(_LIBRARIES):
            return None
        frame.f_trace_opcodes = True
        return on_step
    previous = sys.gettrace()
    sys.settrace(on_call)
    try:
        return function(*args)
    finally:
        sys.settrace(previous)


def limit_calls(function: Callable[..., T], limit: int, what: str) -> Callable[..., T]:
    """``function`` that raises ``TooManyCalls`` on call number ``limit + 1``; ``.calls`` counts the calls made."""
    def counted(*args: Any, **kwargs: Any) -> T:
        counted.calls += 1  # type: ignore[attr-defined]
        if counted.calls > limit:  # type: ignore[attr-defined]
            raise TooManyCalls(what, limit)
        return function(*args, **kwargs)
    counted.calls = 0  # type: ignore[attr-defined]
    return counted
