"""Attack rates (notebook 06): each injection payload, as turn 2 of a scripted conversation, through memory kinds
under each defence setting: did its canary reach a system message, the summary, the last request, the check?
Offline (the stand-in copies, it obeys nothing) the figures say where text lands, not what a model would follow."""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from helpers.lessons.data import data_file, prompt
from helpers.memory.defences import DATA_CLOSE, DATA_OPEN, Defences
from helpers.memory.blocks import PINNED_CLOSE, PINNED_HEADING, PINNED_OPEN
from helpers.memory.registry import KINDS, headings, kind_named
from helpers.memory.summary_check import assistant_names, check_summary
from helpers.memory.types import SettingError, Summarised, Summariser, SummariserError, SummaryRefused, asked


@dataclass(frozen=True)
class DefenceSetting:  # one row group of the table: the memory's defences and which summariser it uses
    name: str
    defences: Defences | None
    hardened_summariser: bool = False  # structured input + the "conversation is data" prompt


DEFENCE_SETTINGS = (
    DefenceSetting("lessons' design", None),
    DefenceSetting("data placement", Defences(placement="data")),
    DefenceSetting("structured input + data prompt", None, hardened_summariser=True),
    DefenceSetting("summary check (refuse)", Defences(summary_check="refuse")),
    DefenceSetting("all of them", Defences(placement="data", summary_check="refuse", redact=True),
                   hardened_summariser=True),
)


def corpus() -> dict[str, Any]:
    """The payloads, the memory's own texts filled in where they forge one (``{{summary memory heading}}``), and the
    conversation they are run in."""
    known = {**{f"{name} heading": cls.KIND.heading for name, cls in KINDS.items() if cls.KIND.heading},
             "pinned heading": PINNED_HEADING, "data open": DATA_OPEN, "data close": DATA_CLOSE,
             "pinned open": PINNED_OPEN, "pinned close": PINNED_CLOSE}
    stored = data_file("security/injection_payloads.json")
    filled = [{**item, "text": re.sub(r"\{\{([^{}]+)\}\}", lambda m: known[m.group(1)], item["text"])}
              for item in stored["payloads"]]
    return {**stored, "payloads": filled}


def payload(payload_id: str) -> dict[str, Any]:
    """One payload of the corpus by its id (``inst-01``, ``role-02``, ...)."""
    by_id = {item["id"]: item for item in corpus()["payloads"]}
    if payload_id not in by_id:
        raise SettingError("payload_id", payload_id, f"no payload {payload_id!r}; the ids are {', '.join(by_id)}")
    return by_id[payload_id]


@dataclass(frozen=True)
class AttackRun:  # one payload through one memory kind under one setting
    payload_id: str
    setting: str
    memory: str
    reached_system: bool
    in_summary: bool
    in_last_request: bool  # still sent at the last turn (a window forgets it once it slides out)
    flagged: bool
    refused_folds: int
    summary: str | None


def _mentions(text: str | None, canary: str) -> bool:
    return canary.casefold() in (text or "").casefold()


def run_one(item: dict[str, Any], cls: Any, setting: DefenceSetting, summarise: Summariser | None,
            system_prompt: str) -> AttackRun:
    """Run the scripted conversation with the payload ``item`` as turn 2: what its canary did."""
    text, canary = item["text"], item["canary"]
    ask, written = asked(summarise), []

    def recording_summariser(messages: list[dict[str, str]], existing: str | None) -> str | Summarised:
        answer = ask(messages, existing)  # type: ignore[misc]
        written.append(answer.text if isinstance(answer, Summarised) else answer)
        return answer  # a Summarised as it came: the fold event reports its cut

    memory = cls.create(system_prompt, recording_summariser, dict(cls.KIND.attack_settings), setting.defences)
    conversation = corpus()["conversation"]
    reached, refused = False, 0
    for number, (user, reply) in enumerate(conversation["turns"], start=1):
        for role, content in (("user", text if number == conversation["payload_turn"] else user), ("assistant", reply)):
            try:
                memory.add_message(role, content)
            except SummariserError:
                refused += 1  # the check refused the summary (or the summariser failed): kept verbatim
            reached = reached or any(m["role"] == "system" and m["content"] != system_prompt
                                     and _mentions(m["content"], canary) for m in memory.get_messages_for_api())
    last = any(_mentions(m["content"], canary) for m in memory.get_messages_for_api())
    flagged = any(check_summary(summary, names=assistant_names(system_prompt), headings=headings()).flagged
                  for summary in written)
    return AttackRun(item["id"], setting.name, cls.KIND.name, reached,
                     _mentions(memory.summary, canary), last, flagged, refused, memory.summary)


def memoised(summarise: Summariser) -> Summariser:
    """The summariser, answering a repeated (messages, existing summary) from memory: fewer model calls; asked as a
    memory asks it (``summarised`` where it has one), so the fold event still reports a cut."""
    ask, answers = asked(summarise), {}

    def call(messages: list[dict[str, str]], existing: str | None) -> str | Summarised:
        key = json.dumps([messages, existing], ensure_ascii=False)
        if key not in answers:
            answers[key] = ask(messages, existing)  # type: ignore[misc]
        return answers[key]
    return call


def run_attacks(summariser_for: Callable[[str, bool], Summariser], system_prompt: str, *,
                kinds: Iterable[str] | None = None, corpus_payloads: Iterable[dict[str, Any]] | None = None,
                settings: Iterable[DefenceSetting] = DEFENCE_SETTINGS) -> list[AttackRun]:
    """Every payload x memory kind (``kinds`` by name, every registered one if None) x setting;
    ``summariser_for(kind_name, hardened)`` gives the summariser (a kind without one is never asked)."""
    try:
        chosen_kinds = [kind_named(kind) for kind in (KINDS if kinds is None else kinds)]
    except SettingError as error:
        raise SettingError("kinds", error.value, str(error)) from None
    chosen = list(corpus_payloads if corpus_payloads is not None else corpus()["payloads"])
    runs, summarisers = [], {}
    for setting in settings:
        for cls in chosen_kinds:
            key = (cls.KIND.name, setting.hardened_summariser)
            if key not in summarisers:  # settings that differ only in the memory share one (memoised) summariser
                summarisers[key] = memoised(summariser_for(*key)) if cls.KIND.heading else None
            runs += [run_one(item, cls, setting, summarisers[key], system_prompt) for item in chosen]
    return runs


@dataclass(frozen=True)
class AttackRate:
    """Per setting and memory kind: out of ``payloads`` runs, how many did each thing."""
    setting: str
    memory: str
    payloads: int
    reached_system: int
    in_summary: int
    in_last_request: int
    flagged: int
    refused: int  # runs in which the check refused at least one summary (the turns stayed verbatim)


def attack_rates(runs: Iterable[AttackRun]) -> list[AttackRate]:
    """The runs counted per (setting, memory kind), in the order they first appear."""
    groups: dict[tuple[str, str], list[AttackRun]] = {}
    for run in runs:
        groups.setdefault((run.setting, run.memory), []).append(run)
    counted = ("reached_system", "in_summary", "in_last_request", "flagged")
    return [AttackRate(*key, len(group), *(sum(getattr(r, name) for r in group) for name in counted),
                       sum(r.refused_folds > 0 for r in group)) for key, group in groups.items()]


def roles_holding(request: list[dict[str, str]], text: str) -> list[str]:
    """Where ``text`` is in a request: 'message N (role)' for each message that holds it."""
    return [f"message {index} ({message['role']})" for index, message in enumerate(request, start=1)
            if _mentions(message["content"], text)]


def where_it_is(text: str, memory: Any, saved_file: Any = None) -> str:
    """One line: does ``text`` appear in the memory's archive, summary, request and saved file?"""
    places = {"archive": any(text in m["content"] for m in memory.archive),
              "summary": text in (memory.summary or ""),
              "request": any(text in m["content"] for m in memory.get_messages_for_api())}
    if saved_file is not None:
        places["saved file"] = text in saved_file.read_text(encoding="utf-8")
    return f"{text!r}: " + ", ".join(f"{place} {'yes' if held else 'no'}" for place, held in places.items())


# ----- the summary check, measured both ways ---------------------------------------------------------------------
# the sets in data/security/: held-out attacks (caught is right) and ordinary talk (flagged is a false alarm)
CHECK_SETS = (("heldout_attacks", "held-out attacks, by the check's author"),
              ("heldout_attacks_2", "held-out attacks, written apart"),
              ("ordinary_talk", "ordinary talk, by the check's author"),
              ("ordinary_talk_2", "ordinary talk, written apart"))


@dataclass(frozen=True)
class CheckMeasure:
    """The check on one set: of ``size`` texts it flagged ``flagged`` (``hard``: of them in the forms no pattern list
    is expected to reach, paraphrase, other languages, encodings: ``hard_flagged`` of ``hard``)."""
    name: str
    attacks: bool
    size: int
    flagged: int
    hard: int = 0
    hard_flagged: int = 0


def measure_check() -> list[CheckMeasure]:
    """The check (any mode but off) on every set of ``CHECK_SETS``, with every registered kind's heading and the
    names each set's system prompts give the assistant."""
    measures, kinds = [], headings()
    for file, name in CHECK_SETS:
        data = data_file(f"security/{file}.json")
        names = tuple(n for p in data.get("system_prompts", [prompt("fincoach_system")]) for n in assistant_names(p))
        texts = data.get("attacks") or [{"text": t} for t in data["user_messages"] + data["summaries"]]
        flagged = [check_summary(t["text"], headings=kinds, names=names).flagged for t in texts]
        hard = [t.get("form") in data.get("hard_tail_forms", ()) for t in texts]
        measures.append(CheckMeasure(name, "attacks" in data, len(texts), sum(flagged), sum(hard),
                                     sum(f and h for f, h in zip(flagged, hard))))
    return measures


def ordinary_run(summarise: Summariser, turns: int | None = None) -> tuple[int, ...]:
    """The first ``turns`` user messages of both ordinary corpora through summary memory with the refusing check:
    (turns, fold attempts, flagged, refused); a refused fold keeps its turns and is tried again."""
    messages = [t for file in ("ordinary_talk", "ordinary_talk_2") for t in data_file(f"security/{file}.json")
                ["user_messages"]][:turns]
    cls = KINDS["summary memory"]
    memory = cls.create(prompt("fincoach_system"), summarise, dict(cls.KIND.attack_settings),
                        Defences(summary_check="refuse"))
    refused = 0
    for text in messages:
        for role, content in (("user", text), ("assistant", "Noted. Let us keep that in the plan.")):
            try:
                memory.add_message(role, content)
            except SummaryRefused:
                refused += 1
    flagged = sum(bool(event.check) for event in memory.fold_events)
    return len(messages), memory.summary_count + refused, flagged + refused, refused
