"""Notebook 07's measurement with a model: live over real HTTP against the loopback OpenAI-compatible server
(which serves the stand-in), and recorded then replayed. Every request is answered by the server, the billed
prompt tokens stand beside the counted ones, and the probes at a checkpoint fill the graded table."""
from __future__ import annotations

import pytest

from helpers.lessons.data import prompt
from helpers.measure.ledger import load_ledger
from helpers.measure.transcript import grade_probes, load_transcript, probe_request, replay
from helpers.memory.registry import kind_named
from helpers.model.summarisers import summariser_for
from tests.support.loopback import connect_to

pytestmark = pytest.mark.usefixtures("model_env")
TURNS = 20  # the first checkpoint


def measured(access, kind):
    cls = kind_named(kind)
    memory = cls.create(prompt("fincoach_system"), summariser_for(access, kind) if cls.KIND.heading else None, {})

    def respond(request, turn):
        response = access.client.chat.completions.create(**access.request_options(request, max_tokens=1024))
        return response.choices[0].message.content or "", response.usage.prompt_tokens

    return replay(memory, load_transcript(), load_ledger(), kind, turns=TURNS, respond=respond)


def probe(access, run):
    response = access.client.chat.completions.create(**access.request_options(probe_request(run, TURNS), max_tokens=400))
    return grade_probes(run.ledger, response.choices[0].message.content or "")


def test_a_live_run_is_billed_beside_counted_and_its_probes_are_graded(server):
    access = connect_to(server)
    run = measured(access, "summary memory")
    billed = [turn.bill.billed_request for turn in run.turns]
    assert None not in billed and len(billed) == TURNS
    assert billed == [turn.bill.request_tokens for turn in run.turns]  # this server bills what o200k_base counts
    assert all(call.billed_prompt is not None for turn in run.turns for call in turn.bill.calls)
    assert run.bill.billed_total is not None and run.bill.summariser_calls >= 1
    grades = probe(access, run)
    assert set(grades) == {p.fact for p in run.ledger.probes}
    assert set(grades.values()) <= {"kept", "missing", "contradicted", "followed", "resisted"}
    assert server.chat_requests[-1]["body"]["messages"][-1]["content"].startswith("Before we go on")


def test_a_recorded_run_replays_to_the_same_measures(server):
    recorded = measured(connect_to(server, "record", recording="07_strategies_side_by_side"), "sliding window")
    replayed = measured(connect_to(server, "replay", recording="07_strategies_side_by_side"), "sliding window")
    assert [t.statuses for t in replayed.turns] == [t.statuses for t in recorded.turns]
    assert replayed.bill.total == recorded.bill.total
