"""A memory's saved state: ``save(memory, path)`` writes it; ``load(path, summarise)`` checks it field by field (a bad
file raises ``StateError`` naming the field). A state holds content and ``identity``, never defences (the caller's).
With a signing key set, a state is bound to the person it belongs to: ``save`` needs ``identity=``."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, get_type_hints

from helpers.base import signing
from helpers.base.json_limits import JSONRefused, load_limited
from helpers.memory.defences import Defences
from helpers.memory.registry import KINDS, kind_named
from helpers.memory.rolling import RollingMemory
from helpers.memory.types import FoldEvent, Message, SettingError, StateError, Summariser, check_text
from helpers.base.reading import shows_nothing

STATE_FORMAT_VERSION = 3  # 3: the identity field, and defences only noted (2: defences restored; 1: by class)
MAX_STATE_BYTES = 16 * 2**20  # the largest state file loaded (10,000 turns of benchmarks/: 5.6 MB)
_OR_NULL = type(None)
FIELDS: dict[str, type | tuple[type, ...]] = {  # a saved state's fields, in the order they are checked, and types
    "kind": str, "settings": dict, "defences": (dict, _OR_NULL), "identity": (str, _OR_NULL), "system_prompt": str,
    "archive": list, "verbatim_start": int, "summary": (str, _OR_NULL), "fold_events": list}
_EVENT_TYPES = get_type_hints(FoldEvent)  # each fold event field's type: int, bool or tuple[str, ...]
_EVENT_TURNS = ("first_turn", "last_turn", "messages_folded")  # at least 1; the other counts at least 0
_FORMAT_1_DEFENCES = ("placement", "pinned_rules", "summary_check", "redact")  # format 1 kept them in the settings


def defence_settings(defences: Defences | None) -> dict[str, Any] | None:
    """The one saved form of a memory's defences: those switched on, or None (``Defences()`` saves as None)."""
    return (defences.settings() or None) if defences is not None else None


def _describe(settings: dict[str, Any] | None) -> str:
    values = (f"{name}={tuple(value) if isinstance(value, list) else value!r}"
              for name, value in (settings or {}).items())
    return f"Defences({', '.join(values)})" if settings else "no defences"


def _identity(identity: Any) -> str | None:
    if identity is not None and (not isinstance(identity, str) or not identity.strip()):
        raise SettingError("identity", identity, f"identity names whose memory this is (e.g. a user id): a non-empty "
                           f"text, got {identity!r:.60}")
    return identity


def to_dict(memory: RollingMemory, *, identity: str | None = None) -> dict[str, Any]:
    """Everything a memory holds, as JSON-ready data (no summariser; the defences only as a note for ``load``)."""
    return {
        "format": STATE_FORMAT_VERSION, "kind": memory.KIND.name, "identity": _identity(identity),
        "settings": memory.settings(), "defences": defence_settings(memory.defences),  # type: ignore[arg-type]
        "system_prompt": memory.system_prompt, "summary": memory.summary,
        "archive": [{"role": m.role, "content": m.content, "tokens": m.tokens} for m in memory.messages],
        "verbatim_start": memory.verbatim_start, "fold_events": [event._asdict() for event in memory.fold_events]}


def save(memory: RollingMemory, path: str | Path, *, identity: str | None = None) -> Path:
    """Write the state as UTF-8 JSON, atomically; with a signing key, signed and bound to ``identity`` (required
    then), which ``load`` must name."""
    if identity is None and signing.signing_key() is not None:
        raise SettingError("identity", None, f"{signing.KEY_ENV} is set, so a saved state is bound to the person it "
                           "belongs to: save(memory, path, identity='asha') with their user id, and load it with "
                           "load(path, summarise, identity='asha'); another user's file is then refused")
    text = json.dumps(to_dict(memory, identity=identity), ensure_ascii=False, indent=1)
    return signing.write_signed(path, text.encode("utf-8"))


def load(path: str | Path, summarise: Summariser | None, *, defences: Defences | None = None,
         identity: str | None = None, kind: type | None = None,
         on_note: Callable[[str], None] | None = print) -> RollingMemory:
    """Read a state written by ``save`` (refused over ``MAX_STATE_BYTES`` before it is read), with the caller's
    ``defences`` (others in the file are noted to ``on_note``); ``identity`` and ``kind`` must be the file's."""
    path = Path(path)
    if not path.is_file():  # said first: a missing file is not a missing signature
        raise FileNotFoundError(f"there is no saved memory state at {path.name}: save(memory, path) writes one")
    identity, what = _identity(identity), f"{path.name} (a saved memory state)"
    try:
        raw = signing.read_verified(path, max_bytes=MAX_STATE_BYTES, setting="helpers.memory.state.MAX_STATE_BYTES")
        data = _upgraded(load_limited(raw, what=what, max_bytes=MAX_STATE_BYTES), path.name)
    except JSONRefused as error:
        raise StateError(error.field, str(error)) from None
    if (saved := _field(data, "identity")) != identity:
        whose = f"the memory of identity {saved!r}" if saved is not None else "saved with no identity"
        raise StateError("identity", f"{path.name} is {whose}, not of {identity!r}; it was not loaded (a state loads "
                         "only for the identity it was saved for: pass that identity= to load(), or, for a file saved "
                         "with none that you trust, load it with no identity= and save it again with identity=)")
    memory = from_dict(data, summarise, defences=defences)
    if kind is not None and memory.KIND.name != kind.KIND.name:  # type: ignore[attr-defined]
        raise StateError("kind", f"{path.name} holds a {memory.KIND.name} state, not a {kind.KIND.name}: load it "
                         "without kind=, or pick the file saved by a memory of that kind")
    if data["defences"] != defence_settings(defences) and on_note is not None:
        on_note(f"note: {path.name} was saved by a memory with {_describe(data['defences'])}; it is loaded with "
                f"{_describe(defence_settings(defences))}, the defences passed to load() (a saved state never sets "
                "them)")
    return memory


def _checked(field: str, make: Callable[[], Any], by_setting: bool = False) -> Any:
    """``make()``, a setting or type error in it raised as the ``StateError`` of ``field`` (or ``field.setting``)."""
    try:
        return make()
    except (TypeError, ValueError) as error:
        name = f"{field}.{error.setting}" if by_setting and isinstance(error, SettingError) else field
        raise StateError(name, str(error) if str(error).startswith(name) else f"{name}: {error}") from None


def from_dict(data: Any, summarise: Summariser | None, *, defences: Defences | None = None) -> RollingMemory:
    """Rebuild a memory from ``to_dict`` data, every field and their fit checked, with the caller's ``defences``."""
    data = _upgraded(data)
    saved = {name: _field(data, name) for name in FIELDS}
    cls = _checked("kind", lambda: kind_named(saved["kind"]))
    _checked("defences", lambda: Defences.from_settings(saved["defences"] or {}), by_setting=True)
    memory = _checked("settings", lambda: cls.create(saved["system_prompt"], summarise, saved["settings"], defences),
                      by_setting=True)  # an unknown, missing or bad setting
    messages = [_message(memory, index, item) for index, item in enumerate(saved["archive"])]
    start, summary = saved["verbatim_start"], saved["summary"]
    if not 0 <= start <= len(messages) or start % 2:
        raise StateError("verbatim_start", f"verbatim_start {start} must be an even index within the archive "
                         f"(0 to {len(messages)}): only whole turns are folded")
    if summary is not None:  # checked before it is counted, as a fold checks it
        _checked("summary", lambda: check_text("summary", summary, getattr(memory, "max_summary_chars", None),
                                               "max_summary_chars"))
        if shows_nothing(summary):
            raise StateError("summary", "summary: an empty summary is never stored; use null for no summary")
    events = _fold_events(saved["fold_events"], messages, start)
    memory.replace_history(messages, start, summary, events, defences)  # a new memory, not yet handed out
    memory.check_loaded()
    if events and events[-1].summary_tokens != memory.summary_tokens:  # a summary edited by hand (notebook 06)
        raise StateError("fold_events", f"the last fold event made a summary of {events[-1].summary_tokens} tokens, "
                         f"but the summary counts {memory.summary_tokens}")
    return memory


def _upgraded(data: Any, name: str = "the file") -> dict[str, Any]:
    """Older data read as format 3: format 1 (kind by class name, defences in the settings) via 2 (no identity)."""
    if not isinstance(data, dict):
        raise StateError("file", f"{name} is not a saved memory state: it holds a JSON {type(data).__name__}, "
                         "not an object")
    version = data.get("format")
    if version not in (1, 2, STATE_FORMAT_VERSION) or isinstance(version, bool):
        raise StateError("format", f"this state has format {version!r:.40}; this version of the project reads "
                         f"formats 1 to {STATE_FORMAT_VERSION}. Save it again with the project version that wrote "
                         "it, or start a new memory")
    if version == STATE_FORMAT_VERSION:
        return data
    if "identity" in data:
        raise StateError("identity", f"a format-{version} state has no identity field; this one was edited")
    if version == 1:
        data = _from_format_1(data)
    return {**data, "format": STATE_FORMAT_VERSION, "identity": None}


def _from_format_1(data: dict[str, Any]) -> dict[str, Any]:
    by_class = {cls.__name__: name for name, cls in KINDS.items()}
    if not isinstance(data.get("kind"), str) or data["kind"] not in by_class:
        raise StateError("kind", f"this format-1 state was saved by {data.get('kind')!r:.60}, which is not a known "
                         f"memory class ({', '.join(by_class)})")
    settings = dict(_field(data, "settings"))
    defences = {name: settings.pop(name) for name in _FORMAT_1_DEFENCES if name in settings}
    events = _field(data, "fold_events")
    for name, value in _field(data, "counters", dict).items():
        if value != len(events) or isinstance(value, bool):
            raise StateError(f"counters.{name}", f"counters.{name} is {value!r:.40} but fold_events holds "
                             f"{len(events)} folds; each fold adds one")
    upgraded = {key: value for key, value in data.items() if key not in ("counters", "fold_pending")}
    return {**upgraded, "kind": by_class[data["kind"]], "settings": settings, "defences": defences or None}


def _message(memory: RollingMemory, index: int, saved: Any) -> Message:
    """A saved message, checked as ``add_message`` checks one (its length first) and its token count recounted."""
    where = f"archive[{index}]"
    if not isinstance(saved, dict) or saved.keys() != {"role", "content", "tokens"}:
        raise StateError(where, f"{where} must be an object with exactly role, content and tokens, got "
                         f"{saved!r:.80}")
    message = _checked(where, lambda: memory.checked_message(saved["role"], saved["content"], index))
    if message.tokens != saved["tokens"] or isinstance(saved["tokens"], bool):
        raise StateError(f"{where}.tokens", f"{where}.tokens: the message counts {message.tokens} tokens, not "
                         f"the {saved['tokens']!r:.40} saved; the file was edited or made with another tokenizer")
    return message


def _field(data: dict[str, Any], name: str, kind: type | tuple[type, ...] | None = None) -> Any:
    """``data[name]`` if present and of type ``kind`` (default ``FIELDS[name]``; a bool is no int), else StateError."""
    if name not in data:
        raise StateError(name, f"the saved state has no {name!r} field")
    value, kinds = data[name], kind or FIELDS[name]
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = " or ".join("null" if k is _OR_NULL else k.__name__ for k in kinds)
        raise StateError(name, f"{name} must be {names}, got {type(value).__name__} {value!r:.60}")
    return value


def _fold_events(saved: list[Any], messages: list[Message], start: int) -> list[FoldEvent]:
    """The saved fold events, each field of its type (counts whole numbers, flags true or false, findings texts),
    telling the archive's story: consecutive whole turns from turn 1 to ``start``, each from the summary before it."""
    events: list[FoldEvent] = []
    for index, item in enumerate(saved):
        where = f"fold_events[{index}]"
        if not isinstance(item, dict) or not set(_EVENT_TYPES) - set(FoldEvent._field_defaults) <= item.keys() \
                <= _EVENT_TYPES.keys():
            raise StateError(where, f"{where} must be an object with the fields {', '.join(_EVENT_TYPES)}, got "
                             f"{item!r:.80}")
        for name, value in item.items():
            wanted, least = _EVENT_TYPES[name], int(name in _EVENT_TURNS)
            if not (isinstance(value, bool) if wanted is bool else type(value) is int and value >= least
                    if wanted is int else isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)):
                what = {bool: "true or false", int: f"a whole number of at least {least}"}.get(
                    wanted, "a list of texts (what the summary check found)")
                raise StateError(f"{where}.{name}", f"{where}.{name} must be {what}, got {value!r:.60}")
        event = FoldEvent(**{**item, "check": tuple(item.get("check", ()))})
        turn = events[-1].last_turn + 1 if events else 1
        first, last = 2 * (turn - 1), 2 * event.last_turn
        expected = {"first_turn": turn, "messages_folded": last - first,
                    "old_summary_tokens": events[-1].summary_tokens if events else 0,
                    "message_tokens": sum(m.tokens for m in messages[first:last]) if last <= len(messages) else -1}
        for name, value in expected.items():
            if getattr(event, name) != value:
                raise StateError(f"{where}.{name}", f"{where}.{name} is {getattr(event, name)}, but the archive and "
                                 f"the folds before it give {value}: fold events fold consecutive whole turns from "
                                 "turn 1, each from the summary before it")
        events.append(event)
    if 2 * (events[-1].last_turn if events else 0) != start:
        raise StateError("fold_events", f"fold_events end at turn {events[-1].last_turn if events else 0} but "
                         f"verbatim_start {start} says turns 1 to {start // 2} were folded")
    return events
