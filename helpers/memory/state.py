"""A memory's saved state: ``save(memory, path)`` writes it, ``load(path, summarise)`` checks it field by field
before trusting it, and gives back a memory of the kind the file names.

A file that is damaged, edited or inconsistent raises ``StateError`` naming the field, never a raw
``KeyError`` or ``TypeError``. With ``MEMORY_SIGNING_KEY`` set the file is signed on save and its
signature checked on load (``helpers.base.signing``). Files of format 1 (saved before the memory kinds
were registered) still load: their fields are read as they were written then.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from helpers.base import signing
from helpers.memory.defences import Defences
from helpers.memory.placement import shows_nothing
from helpers.memory.registry import KINDS, kind_named
from helpers.memory.rolling import RollingMemory
from helpers.memory.types import FoldEvent, SettingError, StateError, Summariser
from helpers.memory.validation import check_count, check_text

STATE_FORMAT_VERSION = 2
_DEFENCE_NAMES = tuple(f.name for f in dataclasses.fields(Defences))


def to_dict(memory: RollingMemory) -> dict[str, Any]:
    """Everything a memory holds, as JSON-ready data (the summariser itself is not saved)."""
    return {
        "format": STATE_FORMAT_VERSION,
        "kind": memory.KIND.name,
        "settings": memory.settings(),
        "defences": memory.defences.settings() if memory.defences is not None else None,
        "system_prompt": memory.system_prompt,
        "summary": memory.summary,
        "archive": [{"role": m.role, "content": m.content, "tokens": m.tokens} for m in memory._archive],
        "verbatim_start": memory._verbatim_start,
        "fold_events": [dataclasses.asdict(event) for event in memory.fold_events],
    }


def save(memory: RollingMemory, path: str | Path) -> Path:
    """Write the state as UTF-8 JSON, atomically (a failure leaves the previous save whole), signed when a
    signing key is configured (the state and its signature are written together)."""
    text = json.dumps(to_dict(memory), ensure_ascii=False, indent=1)
    return signing.write_signed(path, text.encode("utf-8"))


def load(path: str | Path, summarise: Summariser | None, *, kind: str | type | None = None) -> RollingMemory:
    """Read a state written by ``save``; ``kind`` (a name or class), if given, is the kind it must be.

    A missing, damaged, edited or inconsistent file raises an error naming what is wrong.
    """
    path = Path(path)
    if not path.is_file():  # said first: a missing file is not a missing signature
        raise FileNotFoundError(f"there is no saved memory state at {path}: save(memory, path) writes one")
    raw = signing.read_verified(path)  # the bytes checked are the bytes parsed (refuses an edited signed file)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise StateError("file", f"{path} is not a saved memory state (not UTF-8 JSON: {error})") from None
    memory = from_dict(data, summarise)
    if kind is not None:
        wanted = kind if isinstance(kind, str) else kind.KIND.name  # type: ignore[union-attr]
        if memory.KIND.name != wanted:
            raise StateError("kind", f"{path} holds a {memory.KIND.name} state, not a {wanted}: load it without "
                             "kind=, or pick the file saved by a memory of that kind")
    return memory


def from_dict(data: Any, summarise: Summariser | None) -> RollingMemory:
    """Rebuild a memory from ``to_dict`` data, checking every field and how they fit together."""
    if not isinstance(data, dict):
        raise StateError("file", f"a saved state is an object, got {type(data).__name__}")
    data = _upgraded(data)
    cls = _kind_class(data)
    settings = _field(data, "settings", dict)
    defences_data = _field(data, "defences", (dict, type(None)))
    try:
        defences = Defences.from_settings(defences_data) if defences_data else None
    except SettingError as error:
        raise StateError(f"defences.{error.setting}", f"defences.{error.setting}: {error}") from None
    system_prompt = _field(data, "system_prompt", str)
    try:
        memory = cls.create(system_prompt, summarise, settings, defences)
    except TypeError as error:  # an unknown or missing setting
        raise StateError("settings", f"settings: {error}") from None
    except SettingError as error:
        raise StateError(f"settings.{error.setting}", f"settings.{error.setting}: {error}") from None
    _load_archive(memory, _field(data, "archive", list))
    _load_verbatim_and_summary(memory, data)
    memory.check_loaded()
    memory.fold_events = [_fold_event(index, saved) for index, saved in enumerate(_field(data, "fold_events", list))]
    _check_fold_events(memory)
    return memory


def _upgraded(data: dict[str, Any]) -> dict[str, Any]:
    """Format-1 data read as format 2: the kind by class name, the defences out of the settings, the counters
    (now derived from the fold events) checked against them, ``fold_pending`` dropped (it is derived too)."""
    version = data.get("format")
    if version == STATE_FORMAT_VERSION and not isinstance(version, bool):
        return data
    if version != 1 or isinstance(version, bool):
        raise StateError("format", f"this state has format {version!r}; this version of the project reads formats 1 "
                         f"and {STATE_FORMAT_VERSION}. Save it again with the project version that wrote it, or "
                         "start a new memory")
    by_class = {cls.__name__: name for name, cls in KINDS.items()}
    if data.get("kind") not in by_class:
        raise StateError("kind", f"this format-1 state was saved by {data.get('kind')!r}, which is not a known "
                         f"memory class ({', '.join(by_class)})")
    settings = dict(_field(data, "settings", dict))
    defences = {name: settings.pop(name) for name in _DEFENCE_NAMES if name in settings}
    counters = _field(data, "counters", dict)
    events = _field(data, "fold_events", list)
    for name, value in counters.items():
        if value != len(events) or isinstance(value, bool):
            raise StateError(f"counters.{name}", f"counters.{name} is {value!r} but fold_events holds {len(events)} "
                             "folds; each fold adds one")
    upgraded = {key: value for key, value in data.items() if key not in ("counters", "fold_pending")}
    return {**upgraded, "format": STATE_FORMAT_VERSION, "kind": by_class[data["kind"]], "settings": settings,
            "defences": defences or None}


def _kind_class(data: dict[str, Any]) -> type[RollingMemory]:
    try:
        return kind_named(_field(data, "kind", str))
    except SettingError as error:
        raise StateError("kind", f"kind: {error}") from None


def _load_archive(memory: RollingMemory, archive: list[Any]) -> None:
    for index, saved in enumerate(archive):
        where = f"archive[{index}]"
        if not isinstance(saved, dict) or set(saved) != {"role", "content", "tokens"}:
            raise StateError(where, f"{where} must be an object with exactly role, content and tokens, got "
                             f"{saved!r:.80}")
        try:
            message = memory._new_message(saved["role"], saved["content"])
        except ValueError as error:
            raise StateError(where, f"{where}: {error}") from None
        if message.tokens != saved["tokens"] or isinstance(saved["tokens"], bool):
            raise StateError(f"{where}.tokens", f"{where}.tokens: the message counts {message.tokens} tokens, not "
                             f"the {saved['tokens']!r} saved; the file was edited or made with another tokenizer")
        memory._append(message)


def _load_verbatim_and_summary(memory: RollingMemory, data: dict[str, Any]) -> None:
    start = _field(data, "verbatim_start", int)
    if not (0 <= start <= len(memory._archive) and start % 2 == 0):
        raise StateError("verbatim_start", f"verbatim_start {start} must be an even index within the archive "
                         f"(0 to {len(memory._archive)}): only whole turns are folded")
    summary = _field(data, "summary", (str, type(None)))
    if summary is not None:
        if shows_nothing(summary):  # as the fold refuses it
            raise StateError("summary", "summary: an empty summary is never stored; use null for no summary")
        try:
            check_text("summary", summary)
        except ValueError as error:
            raise StateError("summary", str(error)) from None
    memory._verbatim_start = start
    memory._verbatim_tokens = sum(m.tokens for m in memory._archive[start:])
    memory._set_summary(summary)


def _check_fold_events(memory: RollingMemory) -> None:
    """The fold events must tell the archive's story: consecutive whole turns, from turn 1 to verbatim_start."""
    next_turn, previous_summary_tokens = 1, 0
    for index, event in enumerate(memory.fold_events):
        where = f"fold_events[{index}]"
        first, last = 2 * (event.first_turn - 1), 2 * event.last_turn
        if event.first_turn != next_turn or event.last_turn < event.first_turn:
            raise StateError(where, f"{where} folds turns {event.first_turn} to {event.last_turn}, but the next fold "
                             f"must start at turn {next_turn}")
        if event.messages_folded != last - first:
            raise StateError(f"{where}.messages_folded", f"{where}.messages_folded is {event.messages_folded}, but "
                             f"turns {event.first_turn} to {event.last_turn} are {last - first} messages")
        if last > len(memory._archive) or event.message_tokens != sum(m.tokens for m in memory._archive[first:last]):
            raise StateError(f"{where}.message_tokens", f"{where}.message_tokens ({event.message_tokens}) does not "
                             f"match the archive's turns {event.first_turn} to {event.last_turn}")
        if event.old_summary_tokens != previous_summary_tokens:
            raise StateError(f"{where}.old_summary_tokens", f"{where}.old_summary_tokens is "
                             f"{event.old_summary_tokens}, but the fold before left a summary of "
                             f"{previous_summary_tokens} tokens")
        next_turn, previous_summary_tokens = event.last_turn + 1, event.summary_tokens
    if 2 * (next_turn - 1) != memory._verbatim_start:
        raise StateError("fold_events", f"fold_events end at turn {next_turn - 1} but verbatim_start "
                         f"{memory._verbatim_start} says turns 1 to {memory._verbatim_start // 2} were folded")
    if previous_summary_tokens != memory.summary_tokens:
        raise StateError("fold_events", f"the last fold event made a summary of {previous_summary_tokens} tokens, "
                         f"but the summary counts {memory.summary_tokens}")


_MISSING = object()


def _field(data: dict[str, Any], name: str, kind: type | tuple[type, ...], default: Any = _MISSING) -> Any:
    """``data[name]`` if present and of type ``kind`` (a bool is never taken for an int); else ``StateError``."""
    if name not in data:
        if default is not _MISSING:
            return default
        raise StateError(name, f"the saved state has no {name!r} field")
    value = data[name]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = " or ".join("null" if k is type(None) else k.__name__ for k in kinds)
        raise StateError(name, f"{name} must be {names}, got {type(value).__name__} {value!r:.60}")
    return value


def _fold_event(index: int, saved: Any) -> FoldEvent:
    where = f"fold_events[{index}]"
    if not isinstance(saved, dict):
        raise StateError(where, f"{where} must be an object, got {type(saved).__name__}")
    fields = FoldEvent.__dataclass_fields__
    unknown = set(saved) - set(fields)
    missing = {name for name, f in fields.items() if f.default is dataclasses.MISSING} - set(saved)
    if unknown or missing:
        raise StateError(where, f"{where}: unknown fields {sorted(unknown)}, missing fields {sorted(missing)}")
    for name, value in saved.items():
        if name == "check":  # what the summary check found (notebook 06): a list of texts
            if not isinstance(value, (list, tuple)) or not all(isinstance(item, str) for item in value):
                raise StateError(f"{where}.check", f"{where}.check must be a list of texts, got {value!r:.60}")
        elif fields[name].type == "bool":
            if not isinstance(value, bool):
                raise StateError(f"{where}.{name}", f"{where}.{name} must be true or false, got {value!r}")
        else:
            try:
                check_count(f"{where}.{name}", value, 1 if name in ("first_turn", "last_turn", "messages_folded") else 0,
                            "counts in a fold event are whole numbers")
            except SettingError as error:
                raise StateError(f"{where}.{name}", str(error)) from None
    return FoldEvent(**{**saved, "check": tuple(saved.get("check", ()))})

