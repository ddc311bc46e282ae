"""Writing files that hold state so that a failure never leaves one half-written or empty."""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def lone_surrogate_at(text: str) -> int | None:
    """The index of the first lone surrogate in ``text`` (half an emoji, from JSON like ``"\\ud83d"``), or None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return error.start
    return None


def write_files_atomic(files: list[tuple[Path, bytes]]) -> None:
    """Replace files that belong together (a state and its signature): each is written and fsynced to a temporary
    file first, then all are moved into place, so a failure while writing (a full disk) leaves the old ones."""
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
