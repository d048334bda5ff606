"""Dates named in the query (docs/scoring.md "Dates named in the query"): which dates a query names, how
far each memory was written from them, and how the default ranks with it.

Real SQLite files through ``MemoryService`` with the deterministic hashing embedder (no model files).
"""

from __future__ import annotations

import json
import struct
import zlib
from datetime import UTC, datetime

import numpy as np
import pytest

from limbic.core.cli.main import main as cli_main
from limbic.core.embedding.base import HashingEmbedder
from limbic.core.learning import codec
from limbic.core.mcp.server import build_server
from limbic.core.models import EntityInput, ObservationInput
from limbic.core.search.dates import distance_days, query_dates
from limbic.core.search.presets import preset
from limbic.core.search.scoring import explain
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database
from limbic.gui.search.inspector import describe
from tests._mcp_helpers import outcome, portal_client

DAY = 86400.0


def _utc(year: int, month: int, day: int) -> float:
    return datetime(year, month, day, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(("query", "first_day", "days"), [
    ("what happened on 2023-05-08", (2023, 5, 8), 1),
    ("What did Maria plan on the evening of 7 July, 2023?", (2023, 7, 7), 1),
    ("notes from May 8th 2023", (2023, 5, 8), 1),
    ("the 3rd of March, 2025 retro", (2025, 3, 3), 1),
    ("what did we decide on March 3, 2025", (2025, 3, 3), 1),
    ("the release of Sept. 3, 2021", (2021, 9, 3), 1),
    ("what changed in December 2023", (2023, 12, 1), 31),
    ("what changed in feb 2024", (2024, 2, 1), 29),
    ("the 31 February 2023 entry", (2023, 2, 1), 28),  # an impossible day is read as its month
])
def test_a_day_or_a_month_with_its_year_is_read(query, first_day, days):
    ((start, end),) = query_dates(query)
    assert start == _utc(*first_day) and end - start == days * DAY


@pytest.mark.parametrize("query", [
    "what did we decide about the cache", "port 2023 is taken", "version 2.0.2023 of the tool", "in 2023",
    "what did we do on March 3", "what happened yesterday", "the 1990s music",
])
def test_a_bare_year_a_day_without_year_and_relative_dates_are_not_read(query):
    assert query_dates(query) == ()


def test_every_date_of_a_range_is_read_once():
    spans = query_dates("between 11 August 2023 and August 15, 2023")
    assert sorted(spans) == [(_utc(2023, 8, 11), _utc(2023, 8, 12)), (_utc(2023, 8, 15), _utc(2023, 8, 16))]


def test_distance_is_zero_inside_and_counts_days_to_the_nearest_write_time():
    spans = ((_utc(2023, 5, 8), _utc(2023, 5, 9)),)
    times = [[_utc(2023, 5, 8) + 3600], [_utc(2023, 5, 1), _utc(2023, 5, 11)], [_utc(2023, 5, 9)]]
    assert distance_days(spans, times).tolist() == [0.0, 2.0, 0.0]
    assert np.isnan(distance_days((), times)).all()


def _memory(path) -> MemoryService:
    """The same weekly stand-up written on three days, and a project that got a note on one of them."""
    svc = MemoryService(open_database(path), HashingEmbedder(), origin="cli")
    svc.entities.create_entities([
        EntityInput(f"standup {day}", "meeting",
                    (ObservationInput(f"weekly stand-up: the team discussed the cache rollout ({day})",
                                      created_at=_utc(2024, 3, day)),),
                    created_at=_utc(2024, 3, day), updated_at=_utc(2024, 3, day))
        for day in (4, 11, 18)
    ])
    svc.entities.create_entities([EntityInput("Project Atlas", "project", (
        ObservationInput("Atlas is the internal search service", created_at=_utc(2023, 1, 9)),),
        created_at=_utc(2023, 1, 9), updated_at=_utc(2023, 1, 9))])
    svc.entities.add_observations([("Project Atlas", [ObservationInput("Atlas switched its cache to Redis",
                                                              created_at=_utc(2024, 3, 11))])])
    return svc


@pytest.fixture
def memory(tmp_path):
    svc = _memory(tmp_path / "memory.db")
    yield svc
    svc.close()


def test_the_memory_written_on_the_named_day_ranks_first(memory):
    for day, suffix in ((4, "th"), (11, "th"), (18, "th")):
        query = f"what did the stand-up discuss on March {day}{suffix}, 2024"
        ranked = [r.name for r in memory.search.query(query, 3, preset("default"), record=False).results]
        assert ranked[0] == f"standup {day}", (query, ranked)
    plain = memory.search.query("what did the stand-up discuss", 4, preset("default"), record=False).candidate_set
    assert np.isnan(plain.date_distance).all()


def test_the_date_multiplies_relevance_and_the_seed_ignores_it(memory):
    query = "stand-up on 18 March 2024"
    outcome = memory.search.query(query, 3, preset("default"), record=False)
    cs = outcome.candidate_set
    days = dict(zip(cs.names, cs.date_distance.tolist(), strict=True))
    assert (days["standup 18"], days["standup 11"], days["standup 4"]) == (0.0, 7.0, 14.0)
    params = preset("default")
    for i, name in enumerate(cs.names):
        shown = explain(cs, params, i)
        closeness = np.exp(-shown["date_distance"] / params.date_tolerance_days)
        assert shown["date_match"] == pytest.approx(closeness)
        assert shown["base"] == pytest.approx(shown["in_context"] * (1 + params.date_weight * closeness)), name
    seed = memory.search.query(query, 3, preset("seed"), record=False)
    assert preset("seed").date_weight == 0.0
    assert all(explain(seed.candidate_set, preset("seed"), i)["base"] == explain(
        seed.candidate_set, preset("seed"), i)["in_context"] for i in range(len(seed.candidate_set)))


def test_an_observation_written_on_the_day_dates_an_older_entity(memory):
    cs = memory.search.query("cache on 11 March 2024", 5, preset("default"), record=False).candidate_set
    days = dict(zip(cs.names, cs.date_distance.tolist(), strict=True))
    assert days["Project Atlas"] == 0.0  # created in 2023, noted on the day
    memory.entities.delete_observations([("Project Atlas", ["Atlas switched its cache to Redis"])])
    cs = memory.search.query("Atlas on 11 March 2024", 5, preset("default"), record=False).candidate_set
    days = dict(zip(cs.names, cs.date_distance.tolist(), strict=True))
    assert days["Project Atlas"] > 400  # only its 2023 writes are left


def test_the_search_log_keeps_the_distances_and_older_logs_read_as_no_date(memory):
    cs = memory.search.query("stand-up on 11 March 2024", 3, preset("default"), record=False).candidate_set
    restored = codec.unpack(codec.pack(cs))
    assert np.array_equal(restored.date_distance, cs.date_distance, equal_nan=True)
    raw = zlib.decompress(codec.pack(cs))
    version, length = struct.unpack_from("<BI", raw)
    header = json.loads(raw[5:5 + length])
    arrays, offset, kept = [], 5 + length, []
    for spec in header["arrays"]:  # drop the field, as a set logged before it existed
        size = int(np.prod(spec["shape"])) * np.dtype(spec["dtype"]).itemsize
        if spec["name"] != "date_distance":
            arrays.append(spec)
            kept.append(raw[offset:offset + size])
        offset += size
    header["arrays"] = arrays
    body = json.dumps(header, separators=(",", ":")).encode()
    older = codec.unpack(zlib.compress(struct.pack("<BI", version, len(body)) + body + b"".join(kept)))
    assert np.isnan(older.date_distance).all() and len(older.date_distance) == len(cs)


def test_the_inspector_writes_the_date_factor_out(memory):
    cs = memory.search.query("stand-up on 11 March 2024", 3, preset("default"), record=False).candidate_set
    index = cs.names.index("standup 11")
    lines = describe(cs, preset("default"), index).lines
    dated = [line for line in lines if "the query names a date" in line]
    assert len(dated) == 1 and "× (1 + 0.3 × 1.0000)" in dated[0]
    assert any(line.startswith("in context = own") for line in lines)
    undated = describe(memory.search.query("stand-up", 3, preset("default"), record=False).candidate_set,
                       preset("default"), 0).lines
    assert not any("names a date" in line for line in undated)


def test_the_search_says_which_dates_it_read(memory, capsys):
    assert memory.search.query("stand-up on 18 March 2024 and in March 2024", 3, record=False).dates == (
        "2024-03-18", "2024-03")
    assert memory.search.query("stand-up", 3, record=False).dates == ()
    with portal_client(build_server(memory)) as (portal, client):
        dated = outcome(portal.call(client.call_tool, "search_semantic", {"query": "stand-up on March 11, 2024"}))
        plain = outcome(portal.call(client.call_tool, "search_semantic", {"query": "stand-up"}))
    assert not dated["error"] and dated["structured"]["dates"] == ["2024-03-11"]
    assert dated["structured"]["results"][0]["name"] == "standup 11" and dated["text"]["dates"] == ["2024-03-11"]
    assert "dates" not in plain["structured"]
    path = memory.database.path
    assert cli_main(["--db", str(path), "search", "stand-up", "on", "2024-03-04"]) == 0
    assert "· dates 2024-03-04 ·" in capsys.readouterr().out
