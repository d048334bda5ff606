"""Who wrote each memory and what fades next (core/service/provenance.py) on a real database: origins from the
change log, one origin's writes in order, TTL expiries and what would be proposed for forgetting within a
window (the service's forecast)."""

from __future__ import annotations

import time

import pytest
from _lifecycle_helpers import written_ago

from limbic.core.errors import ValidationError
from limbic.core.lifecycle.retention import RetentionParams
from limbic.core.models import EntityInput, ObservationInput, RelationInput
from limbic.core.search.decay import Decay
from limbic.core.service import provenance

DAY = 86_400.0


def test_origins_follow_the_change_log(service):
    service.entities.create_entities([EntityInput("Harbor", "Project", (ObservationInput("ingests buoy data"),))],
                            origin="mcp:alice")
    service.entities.create_entities([EntityInput("Redis", "Tool")], origin="mcp:bob")
    service.entities.create_entities([EntityInput("Lonely", "Concept")], origin="cli")
    service.entities.add_observations([("Harbor", [ObservationInput("uses Redis")])], origin="mcp:bob")
    service.relations.create_relations([RelationInput("Harbor", "Redis", "uses")], origin="gui")
    ids = {e.name: e.id for e in service.entities.read_graph().entities}
    found = provenance.write_origins(service)
    assert found.created[ids["Harbor"]] == "mcp:alice" and found.last[ids["Harbor"]] == "gui"
    assert found.created[ids["Redis"]] == "mcp:bob" and found.last[ids["Lonely"]] == "cli"
    assert found.counts["mcp:alice"] == 1 and found.counts["mcp:bob"] == 2
    writes = provenance.writes_by(service, "mcp:bob")
    assert [(w.op, w.names) for w in writes] == [("create_entities", ("Redis",)), ("add_observations", ("Harbor",))]
    assert writes[0].at <= writes[1].at
    with pytest.raises(ValidationError):
        provenance.writes_by(service, " ")


def test_what_fades_within_a_window(service):
    now = time.time()
    service.entities.create_entities([EntityInput("Old idea", "Note", (ObservationInput("written long ago"),),
                                         created_at=now - 5 * DAY)])
    written_ago(service, 5)
    service.entities.create_entities([
        EntityInput("Deploy key", "Secret", (ObservationInput("rotates soon", expires_at=now + 10 * DAY),
                                             ObservationInput("kept for a year", expires_at=now + 365 * DAY))),
        EntityInput("Fresh idea", "Note", (ObservationInput("written today"),)),
    ])
    # no grace period, the exponential decay: what was written today may fade as soon as its score says so
    service.lifecycle.save_retention_params(RetentionParams(half_life_hours=72.0, tau_forget=0.05, grace_days=0.0,
                                                            decay=Decay("exponential")))
    week = provenance.fading_next(service, 7, now=now)
    month = provenance.fading_next(service, 30, now=now)
    expiring = [f for f in month if f.kind == provenance.EXPIRES]
    assert [(f.name, f.detail) for f in expiring] == [("Deploy key", "rotates soon")]
    assert expiring[0].at == pytest.approx(now + 10 * DAY)
    assert not any(f.kind == provenance.EXPIRES for f in week)
    forgotten = {f.name: f for f in month if f.kind == provenance.FORGOTTEN}
    assert "Old idea" in forgotten  # 5 days old at a 3-day half-life: below 0.05 in about 8 more days
    retention = {r.name: r for r in service.lifecycle.retention(now=now)}
    assert forgotten["Old idea"].at == pytest.approx(now + retention["Old idea"].hours_until_forgotten * 3600)
    assert forgotten["Old idea"].detail == "never used since it was written 1 month ago"  # as at the end of the window
    assert [f.at for f in month] == sorted(f.at for f in month)
    service.lifecycle.set_pinned(["Old idea"], True)
    assert "Old idea" not in {f.name for f in provenance.fading_next(service, 30, now=now)}  # pinned: kept
    with pytest.raises(ValidationError):
        provenance.fading_next(service, -1)
