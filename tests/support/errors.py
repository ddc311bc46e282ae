"""Assertions on the project's errors by their fields, not their wording."""
from __future__ import annotations

from typing import Any

from helpers.model.errors import ModelAccessError


def assert_fields(error: BaseException, **expected: Any) -> None:
    """``error`` is one of the project's model errors, its fields hold ``expected``, and its message names the
    setting it says to change (so the message and the fields cannot drift apart)."""
    assert isinstance(error, ModelAccessError), f"{type(error).__name__} is not a ModelAccessError: {error}"
    actual = {name: getattr(error, name) for name in expected}
    assert actual == expected, f"{actual} != {expected} in {error!r}"
    if error.setting:
        assert error.setting in str(error), f"the message does not name {error.setting}: {error}"
