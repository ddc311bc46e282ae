"""Running code someone else wrote (a student's exercise answer) with a bound on time and on calls.

A ``while`` loop that never ends, or a summariser called again and again, must come back as a message
the exercise check can print, not as a kernel a student has to interrupt. ``run_bounded`` stops a call
that runs past its time: a watchdog thread raises ``TimedOut`` inside it (CPython's per-thread
asynchronous exception, so it works on every platform and in a notebook's kernel). ``limit_calls``
wraps a function so that a call past the limit raises ``TooManyCalls``. Both derive from
``BaseException``, so a student's ``except Exception:`` cannot swallow them.
"""
from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class Stopped(BaseException):
    """The code under check was stopped before it finished."""


class TimedOut(Stopped):
    """It was still running after ``seconds``."""

    def __init__(self, seconds: float = 0.0) -> None:
        super().__init__(f"still running after {seconds:g} seconds")
        self.seconds = seconds


class TooManyCalls(Stopped):
    """It called a function more often than the limit allows."""

    def __init__(self, what: str = "", limit: int = 0) -> None:
        super().__init__(f"called {what} more than {limit} times")
        self.what, self.limit = what, limit


def _raise_in(thread_id: int, error: type[BaseException]) -> None:
    """Ask CPython to raise ``error`` in the thread ``thread_id`` at its next bytecode."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(error))


def _drop_pending(error: type[BaseException]) -> None:
    """Let a stop sent to this thread and not yet delivered arrive here, where it is dropped. (Cancelling it
    with ``PyThreadState_SetAsyncExc(thread, NULL)`` instead leaves CPython 3.11's eval breaker set for good:
    from then on a traced call, under a debugger or coverage, never returns.)"""
    try:
        for _ in range(100):  # a pending asynchronous exception is raised at the loop's first jump back
            pass
    except error:
        pass


def run_bounded(function: Callable[..., T], *args: Any, seconds: float = 2.0, **kwargs: Any) -> T:
    """``function(*args, **kwargs)``, or ``TimedOut`` if it has not returned after ``seconds``."""
    caller = threading.get_ident()
    finished = threading.Event()
    lock = threading.Lock()
    state = {"running": True, "fired": False}

    def watchdog() -> None:
        if finished.wait(seconds):
            return
        with lock:
            if state["running"]:
                state["fired"] = True
                _raise_in(caller, TimedOut)

    guard = threading.Thread(target=watchdog, name="exercise-watchdog", daemon=True)
    guard.start()
    try:
        try:
            return function(*args, **kwargs)
        finally:
            with lock:
                state["running"] = False
            finished.set()
            if state["fired"]:
                _drop_pending(TimedOut)  # if the stop was not delivered yet, it must not arrive later
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
