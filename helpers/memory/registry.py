"""Every memory kind the project knows, where generic code (lines, charts, summarisers, the attack table, saved
states, the checks, the stand-in) finds them; a kind's module registers its class with ``@register``."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from helpers.memory.types import MemoryKind, SettingError

KINDS: dict[str, Any] = {}  # name -> the memory class (a ``RollingMemory`` subclass)


def headings() -> tuple[str, ...]:
    """The summary headings of every registered kind, as sent (a kind that never summarises has none)."""
    return tuple(dict.fromkeys(cls.KIND.heading for cls in KINDS.values() if cls.KIND.heading))


def register(cls: Any) -> Any:
    """Add a memory class to the registry under ``cls.KIND.name`` (returns the class, so it works as a decorator)."""
    kind = getattr(cls, "KIND", None)
    if not isinstance(kind, MemoryKind):
        raise SettingError("KIND", kind, f"{cls.__name__} needs a KIND = MemoryKind(...) class attribute to be "
                           "registered: its name, heading, fold tag and line formats")
    if KINDS.get(kind.name, cls) is not cls:
        raise SettingError("KIND.name", kind.name, f"a memory kind named {kind.name!r} is already registered "
                           f"({KINDS[kind.name].__name__}); give {cls.__name__} a name of its own")
    KINDS[kind.name] = cls
    return cls


@contextlib.contextmanager
def registered(cls: Any) -> Iterator[Any]:
    """Register ``cls`` for the length of a block (a test's toy kind), then remove it again."""
    try:
        yield register(cls)
    finally:
        KINDS.pop(cls.KIND.name, None)


def kind_named(name: str) -> Any:
    """The class registered as ``name``; a ``SettingError`` lists the names there are."""
    try:
        return KINDS[name]
    except KeyError:
        raise SettingError("kind", name, f"no memory kind named {name!r}; the kinds are "
                           f"{', '.join(map(repr, KINDS))}") from None
