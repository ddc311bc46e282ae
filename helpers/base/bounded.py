"""A student's code run with a bound on time (``run_bounded``) and on calls (``limit_calls``), so a loop that
never ends comes back as a message, not a kernel to interrupt. The stops are ``BaseException``s: an
``except Exception:`` in the student's code cannot swallow them.

The time bound is a trace function (``sys.settrace``) that checks a deadline on every line the student's code
runs, one implementation everywhere. A watchdog thread cannot work where threads cannot start (JupyterLite's
Pyodide raises "can't start new thread"), and where it can it stops the code with an asynchronous exception that
may arrive after the call has returned. A trace function needs no thread, and the stop comes from the line that
ran past the deadline, never later. Its cost is paid only on the lines of the student's own code: frames of
``helpers``, the standard library and installed packages are not traced line by line (their calls still check
the deadline), so a check's right answers run a few times slower at most, far inside the bound. What neither
way can stop: one call into C that never returns (``time.sleep(10**9)``). A debugger's or coverage's trace
function is set aside for the call and put back after it."""
from __future__ import annotations

import sys
import sysconfig
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
_LIBRARIES = tuple({str(Path(__file__).parents[1])} | {sysconfig.get_paths()[name] for name in ("stdlib", "purelib",
                                                                                              "platlib")})


class TimedOut(BaseException):
    """It was still running after ``seconds``."""

    def __init__(self, seconds: float = 0.0) -> None:
        super().__init__(f"still running after {seconds:g} seconds")
        self.seconds = seconds


class TooManyCalls(BaseException):
    """It called a function more often than the limit allows."""

    def __init__(self, what: str = "", limit: int = 0) -> None:
        super().__init__(f"called {what} more than {limit} times")
        self.what, self.limit = what, limit


def run_bounded(function: Callable[..., T], *args: Any, seconds: float = 2.0, **kwargs: Any) -> T:
    """``function(*args, **kwargs)``, or ``TimedOut`` once it runs a line after ``seconds``."""
    deadline = time.monotonic() + seconds

    def on_line(frame: Any, event: str, arg: Any) -> Any:
        if time.monotonic() > deadline:
            raise TimedOut(seconds)  # raised at that line of the student's code (and tracing ends)
        return on_line

    def on_call(frame: Any, event: str, arg: Any) -> Any:
        on_line(frame, event, arg)
        if frame.f_code.co_filename.startswith(_LIBRARIES):
            return None
        frame.f_trace_opcodes = True  # every instruction: a loop written on one line emits no new line
        return on_line

    previous = sys.gettrace()
    sys.settrace(on_call)
    try:
        return function(*args, **kwargs)
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
