"""``MemoryService.entities.graph_arrays``: after a change only the touched entities are read again and patched
in, and the patched arrays equal a full read of the same database."""

from __future__ import annotations

import numpy as np
import pytest
from _widgets_helpers import build_small_graph

from limbic.core.models import EntityInput as E
from limbic.core.models import ObservationInput as O
from limbic.core.models import RelationInput as R
from limbic.core.service.graph_arrays import GraphArrays
from limbic.core.store import graph
from limbic.core.store.graph import FULL_RELOAD_SHARE


def _relations(arrays: GraphArrays) -> list[tuple[int, int, str]]:
    return sorted((int(arrays.ids[a]), int(arrays.ids[b]), t)
                  for (a, b), t in zip(arrays.edges.tolist(), arrays.edge_types, strict=True))


def _same(a: GraphArrays, b: GraphArrays) -> None:
    """Same entities in the same order, the same relations (in any order), the same change id."""
    for field in ("ids", "type_codes", "created_at", "access_count", "last_access", "degree"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)
    for field in ("names", "type_names", "statuses", "change_id"):
        assert getattr(a, field) == getattr(b, field), field
    assert _relations(a) == _relations(b)


def _touched_since(service, arrays: GraphArrays) -> frozenset[int] | None:
    conn = service.database.read()
    with conn:
        return graph.graph_rows_since(conn, arrays.change_id, len(arrays)).touched


@pytest.mark.parametrize("edit", [
    lambda s: s.entities.create_entities([E("Newcomer", "Person", (O("joined today"),))]),
    lambda s: s.relations.create_relations([R("Lonely", "Harbor", "visits")]),
    lambda s: s.relations.delete_relations([R("Harbor", "Python", "uses")]) or s.end_relation(R("Alice", "Harbor", "works_on")),
    lambda s: s.entities.rename_entity("Bob", "Robert"),
    lambda s: s.entities.set_status(["Harbor"], "paused"),
    lambda s: s.entities.delete_entities(["Python"]),
    lambda s: s.entities.merge_entities(["Alice"], "Bob"),
    lambda s: s.entities.upsert_entities([E("Lonely", "Tool")]),
])
def test_patched_arrays_equal_a_full_read(service, edit):
    build_small_graph(service)
    service.entities.create_entities([E(f"filler {i}", "Note") for i in range(30)])  # keep edits under the share
    before = service.entities.graph_arrays()
    edit(service)
    touched = _touched_since(service, before)
    assert touched is not None and 0 < len(touched) <= FULL_RELOAD_SHARE * len(before)
    patched = service.entities.graph_arrays(before)
    assert patched is not before
    _same(patched, service.entities.graph_arrays())


def test_unchanged_graph_returns_the_same_arrays_and_large_changes_read_everything(service):
    build_small_graph(service)
    before = service.entities.graph_arrays()
    assert service.entities.graph_arrays(before) is before
    service.search.save_scoring_params(service.search.scoring_params().replace(gamma=0.05))  # logged, touches no entity
    assert _touched_since(service, before) == frozenset()
    assert service.entities.graph_arrays(before).change_id == service.history.last_change_id()
    service.entities.create_entities([E(f"wave {i}", "Note") for i in range(len(before))])
    assert _touched_since(service, before) is None  # more than the share: the whole graph is read
    _same(service.entities.graph_arrays(before), service.entities.graph_arrays())
