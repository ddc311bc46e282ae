"""A student's code run with a bound on time (``run_bounded``) and on calls (``limit_calls``), so a runaway loop
comes back as a message, not a kernel to interrupt. The stops are ``BaseException``s: ``except Exception:``
cannot swallow them; the time bound is a CPython asynchronous exception, so it works in any kernel."""
from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


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
    """``function(*args, **kwargs)``, or ``TimedOut`` if it has not returned after ``seconds``."""
    caller = threading.get_ident()
    finished, lock, fired = threading.Event(), threading.Lock(), []

    def watchdog() -> None:
        if not finished.wait(seconds):
            with lock:
                if not finished.is_set():
                    fired.append(True)
                    # CPython raises it in the caller's thread at its next bytecode
                    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(caller), ctypes.py_object(TimedOut))

    threading.Thread(target=watchdog, name="exercise-watchdog", daemon=True).start()
    try:
        try:
            return function(*args, **kwargs)
        finally:
            with lock:
                finished.set()
            if fired:
                # a stop not yet delivered must not arrive later: it arrives in this loop and is dropped (cancelling
                # it with SetAsyncExc(NULL) instead leaves CPython 3.11's eval breaker set for good)
                try:
                    for _ in range(100):
                        pass
                except TimedOut:
                    pass
                raise TimedOut(seconds)
    except TimedOut:
        raise TimedOut(seconds) from None


def limit_calls(function: Callable[..., T], limit: int, what: str) -> Callable[..., T]:
    """``function`` that raises ``TooManyCalls`` on call number ``limit + 1``; ``.calls`` counts the calls made."""
    def counted(*args: Any, **kwargs: Any) -> T:
        counted.calls += 1  # type: ignore[attr-defined]
        if counted.calls > limit:  # type: ignore[attr-defined]
            raise TooManyCalls(what, limit)
        return function(*args, **kwargs)

    counted.calls = 0  # type: ignore[attr-defined]
    return counted
