"""A student's code run with a bound on time (``run_bounded``) and on calls (``limit_calls``), so a loop that never
ends comes back as a message, not a kernel to interrupt; the stops are ``BaseException``s, which an ``except
Exception:`` in the student's code cannot swallow.

One implementation everywhere: a trace function (``sys.settrace``) that checks a deadline on every instruction of
the student's own code. A watchdog thread cannot work where threads cannot start (JupyterLite's Pyodide raises
"can't start new thread"), and where it can, its asynchronous stop may arrive after the call has returned; a trace
function needs no thread and stops the code at the instruction that ran past the deadline, never later. Every
instruction, not every line: a loop written on one line emits no new line. The cost falls on the student's code
alone (frames of ``helpers``, the standard library and installed packages are not traced inside, only at their
calls): a tight loop runs some 25 times slower, a check's right answers still take well under a second. Neither
way stops one call into C that never returns (``time.sleep(10**9)``). A debugger's trace function is set aside
for the call and put back after it."""
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
    def __init__(self, seconds: float = 0.0) -> None:
        super().__init__(f"still running after {seconds:g} seconds")
        self.seconds = seconds

class TooManyCalls(BaseException):
    """It called a function more often than the limit allows."""
    def __init__(self, what: str = "", limit: int = 0) -> None:
        super().__init__(f"called {what} more than {limit} times")
        self.what, self.limit = what, limit

def run_bounded(function: Callable[..., T], *args: Any, seconds: float = 2.0, **kwargs: Any) -> T:
    """``function(*args, **kwargs)``, or ``TimedOut`` once it runs an instruction after ``seconds``."""
    deadline = time.monotonic() + seconds

    def on_step(frame: Any, event: str, arg: Any) -> Any:
        if time.monotonic() > deadline:
            raise TimedOut(seconds)  # raised in the student's code, at that instruction (and tracing ends)
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
