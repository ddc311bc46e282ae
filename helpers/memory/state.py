"""A memory's saved state: what ``save()`` writes and ``load()`` checks field by field before trusting it.

The functions here read and write the memory's private fields on its behalf (``rolling.py`` calls
them from ``to_dict``, ``from_dict``, ``save`` and ``load``); a file that is damaged, edited or
inconsistent raises ``ValueError`` naming the field, never a raw ``KeyError`` or ``TypeError``.
"""
from __future__ import annotations

import dataclasses
import inspect
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypeVar

from helpers.base.tokens import count_tokens
from helpers.memory.types import FoldEvent, Summariser
from helpers.memory.validation import check_count, check_text

STATE_FORMAT_VERSION = 1
M = TypeVar("M")


def state_of(memory: Any) -> dict[str, Any]:
    """Everything a memory holds, as JSON-ready data (the summariser itself is not saved)."""
    return {
        "format": STATE_FORMAT_VERSION,
        "kind": type(memory).__name__,
        "settings": memory.settings(),
        "system_prompt": memory.system_prompt,
        "summary": memory._summary,
        "archive": [{"role": m.role, "content": m.content, "tokens": m.tokens} for m in memory._archive],
        "verbatim_start": memory._verbatim_start,
        "counters": {name: getattr(memory, name) for name in memory.COUNTERS},
        "fold_events": [asdict(event) for event in memory.fold_events],
        "fold_pending": memory._fold_pending,
    }


def from_state(cls: type[M], data: dict[str, Any], summarise: Summariser) -> M:
    """Rebuild a memory of class ``cls`` from ``state_of`` data, checking every field and how they fit together.

    Anything wrong raises ``ValueError`` naming the field; token counts are checked against the text.
    """
    _check_header(data, cls.__name__)
    memory = _from_settings(cls, data, summarise)
    _load_archive(memory, _field(data, "archive", list))
    _load_verbatim_and_summary(memory, data)
    _load_counters_and_events(memory, data)
    memory._check_loaded()
    memory._rebuild_request()
    return memory


def _from_settings(cls: type[M], data: dict[str, Any], summarise: Summariser) -> M:
    settings = _field(data, "settings", dict)
    system_prompt = _field(data, "system_prompt", str)
    try:
        return cls(system_prompt, summarise, **settings)
    except TypeError as error:  # an unknown or missing setting
        raise ValueError(f"settings: {error}; expected the keys {sorted(_setting_names(cls))}") from None
    except ValueError as error:
        raise ValueError(f"settings: {error}") from None


def _setting_names(cls: type) -> list[str]:
    return [name for name in inspect.signature(cls.__init__).parameters if name not in ("self", "system_prompt",
                                                                                          "summarise")]


def _load_archive(memory: Any, archive: list[Any]) -> None:
    for index, saved in enumerate(archive):
        where = f"archive[{index}]"
        if not isinstance(saved, dict) or set(saved) != {"role", "content", "tokens"}:
            raise ValueError(f"{where} must be an object with exactly role, content and tokens, got {saved!r:.80}")
        try:
            message = memory._new_message(saved["role"], saved["content"])
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from None
        if message.tokens != saved["tokens"] or isinstance(saved["tokens"], bool):
            raise ValueError(f"{where}.tokens: the message counts {message.tokens} tokens, not the "
                             f"{saved['tokens']!r} saved; the file was edited or made with another tokenizer")
        memory._archive.append(message)


def _load_verbatim_and_summary(memory: Any, data: dict[str, Any]) -> None:
    start = _field(data, "verbatim_start", int)
    if not (0 <= start <= len(memory._archive) and start % 2 == 0):
        raise ValueError(f"verbatim_start {start} must be an even index within the archive "
                         f"(0 to {len(memory._archive)}): only whole turns are folded")
    summary = _field(data, "summary", (str, type(None)))
    if summary is not None and not summary.strip():
        raise ValueError("summary: an empty summary is never stored; use null for no summary")
    if (summary is None) != (start == 0):
        raise ValueError(f"summary and verbatim_start disagree: summary is {'null' if summary is None else 'set'} "
                         f"but verbatim_start is {start}; messages before verbatim_start are sent only through "
                         "the summary, so there is a summary exactly when verbatim_start > 0")
    if summary is not None:
        check_text("summary", summary)
        memory._summary = summary
        memory._summary_tokens = count_tokens(summary)
        memory._summary_block_tokens = memory._block_tokens(summary, memory._summary_tokens)
    memory._verbatim_start = start
    memory._verbatim_tokens = sum(m.tokens for m in memory._archive[start:])


def _load_counters_and_events(memory: Any, data: dict[str, Any]) -> None:
    counters = _field(data, "counters", dict)
    if set(counters) != set(memory.COUNTERS):
        raise ValueError(f"counters must hold exactly {', '.join(memory.COUNTERS)}, got {sorted(counters)}")
    for name in memory.COUNTERS:
        setattr(memory, name, check_count(f"counters.{name}", counters[name], 0, "a count of folds"))
    memory.fold_events = [_fold_event(index, saved) for index, saved in
                        enumerate(_field(data, "fold_events", list))]
    memory._fold_pending = _field(data, "fold_pending", bool, default=False)
    if memory.summary_count != len(memory.fold_events):
        raise ValueError(f"counters.summary_count is {memory.summary_count} but fold_events holds "
                         f"{len(memory.fold_events)} folds; each fold adds one of each")
    _check_fold_events(memory)


def _check_fold_events(memory: Any) -> None:
    """The fold events must tell the archive's story: consecutive whole turns, from turn 1 to verbatim_start."""
    next_turn, previous_summary_tokens = 1, 0
    for index, event in enumerate(memory.fold_events):
        where = f"fold_events[{index}]"
        first, last = 2 * (event.first_turn - 1), 2 * event.last_turn
        if event.first_turn != next_turn or event.last_turn < event.first_turn:
            raise ValueError(f"{where} folds turns {event.first_turn} to {event.last_turn}, but the next fold "
                             f"must start at turn {next_turn}")
        if event.messages_folded != last - first:
            raise ValueError(f"{where}.messages_folded is {event.messages_folded}, but turns {event.first_turn} "
                             f"to {event.last_turn} are {last - first} messages")
        if last > len(memory._archive) or event.message_tokens != sum(m.tokens for m in memory._archive[first:last]):
            raise ValueError(f"{where}.message_tokens ({event.message_tokens}) does not match the archive's "
                             f"turns {event.first_turn} to {event.last_turn}")
        if event.old_summary_tokens != previous_summary_tokens:
            raise ValueError(f"{where}.old_summary_tokens is {event.old_summary_tokens}, but the fold before "
                             f"left a summary of {previous_summary_tokens} tokens")
        next_turn, previous_summary_tokens = event.last_turn + 1, event.summary_tokens
    if 2 * (next_turn - 1) != memory._verbatim_start:
        raise ValueError(f"fold_events end at turn {next_turn - 1} but verbatim_start {memory._verbatim_start} "
                         f"says turns 1 to {memory._verbatim_start // 2} were folded")
    if memory.fold_events and previous_summary_tokens != memory._summary_tokens:
        raise ValueError(f"the last fold event made a summary of {previous_summary_tokens} tokens, but the "
                         f"summary counts {memory._summary_tokens}")


def read_state_file(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} is not a saved memory state (not UTF-8 JSON: {error})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} is not a saved memory state: it holds a {type(data).__name__}, not an object")
    return data


def _check_header(data: Any, kind: str) -> None:
    if not isinstance(data, dict):
        raise ValueError(f"a saved state is an object (dict), got {type(data).__name__}")
    if data.get("kind") != kind or data.get("format") != STATE_FORMAT_VERSION or isinstance(data.get("format"), bool):
        raise ValueError(f"this state was saved by {data.get('kind')!r} (format {data.get('format')!r}); "
                         f"load it with that class: {kind}.from_dict expects format {STATE_FORMAT_VERSION}")


_MISSING = object()


def _field(data: dict[str, Any], name: str, kind: type | tuple[type, ...], default: Any = _MISSING) -> Any:
    """``data[name]`` if present and of type ``kind`` (a bool is never taken for an int); else ``ValueError``."""
    if name not in data:
        if default is not _MISSING:
            return default
        raise ValueError(f"the saved state has no {name!r} field")
    value = data[name]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = " or ".join("null" if k is type(None) else k.__name__ for k in kinds)
        raise ValueError(f"{name} must be {names}, got {type(value).__name__} {value!r:.60}")
    return value


def _fold_event(index: int, saved: Any) -> FoldEvent:
    where = f"fold_events[{index}]"
    if not isinstance(saved, dict):
        raise ValueError(f"{where} must be an object, got {type(saved).__name__}")
    fields = FoldEvent.__dataclass_fields__
    unknown = set(saved) - set(fields)
    missing = {name for name, f in fields.items() if f.default is dataclasses.MISSING} - set(saved)
    if unknown or missing:
        raise ValueError(f"{where}: unknown fields {sorted(unknown)}, missing fields {sorted(missing)}")
    for name, value in saved.items():
        if name == "check":  # what the summary check found (notebook 06): a list of texts
            if not isinstance(value, (list, tuple)) or not all(isinstance(item, str) for item in value):
                raise ValueError(f"{where}.check must be a list of texts, got {value!r:.60}")
        elif fields[name].type == "bool":
            if not isinstance(value, bool):
                raise ValueError(f"{where}.{name} must be true or false, got {value!r}")
        else:
            check_count(f"{where}.{name}", value, 1 if name in ("first_turn", "last_turn", "messages_folded") else 0,
                        "counts in a fold event are whole numbers")
    return FoldEvent(**{**saved, "check": tuple(saved.get("check", ()))})
