"""Writing files that hold state so that a failure never leaves one half-written or empty.

Callers encode their text first (so text that cannot be stored fails before any file is touched);
each file is written to a temporary file in the same folder, flushed, fsynced and moved over the old one.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def lone_surrogate_at(text: str) -> int | None:
    """The index of the first lone surrogate in ``text`` (half of a character such as an emoji), or None.

    Such text cannot be written as UTF-8; it comes from escaped JSON like ``"\\ud83d"``.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return error.start
    return None


def write_files_atomic(files: list[tuple[Path, bytes]]) -> None:
    """Replace several files that belong together (a state and its signature): every one is written to a
    temporary file, flushed and fsynced first, and only then are they all moved into place, so a failure
    while writing (a full disk) leaves every old file as it was."""
    temporaries: list[tuple[str, Path]] = []
    try:
        for path, data in files:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
            temporaries.append((temporary, path))
            with os.fdopen(handle, "wb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
        for temporary, path in temporaries:
            os.replace(temporary, path)
    except BaseException:
        for temporary, _ in temporaries:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        raise
