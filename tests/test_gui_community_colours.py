"""A community keeps its colour: on the real corpus in the running app, coloured by community, three bursts of
five agents' writes (an entity and its relations each, through another connection to the same file, as the MCP
server writes; four about an entity and its neighbour, one linking two groups) leave at least 95 % of the
entities drawn before with the colour they had, in the global map, the focus view and a search's view; and
every entity has the same colour in all three views."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pytest

from limbic.core.embedding.base import HashingEmbedder
from limbic.core.models import EntityInput, ObservationInput, RelationInput
from limbic.core.service import MemoryService
from limbic.core.service.graph_arrays import neighbours
from limbic.core.store.backend import open_database
from limbic.gui.app import LimbicApp

pytestmark = pytest.mark.gui
QUERY = "render pipeline"
KEPT = 0.95  # of the entities drawn before the writes, the share that must keep its colour in each view


@pytest.fixture
def limbic(qtbot, tmp_path, corpus_db):
    path = tmp_path / "memory.db"
    path.write_bytes(corpus_db.read_bytes())
    app = LimbicApp(path, embedder=HashingEmbedder(), mcp=False, seed=False, watch_interval=0.05)
    with qtbot.waitSignal(app.ready, timeout=20_000):
        app.start()
    qtbot.waitUntil(lambda: app.graph_view.arrays is not None, timeout=20_000)
    app.window.resize(1366, 768)
    app.graph_view.set_colouring("community")
    yield app
    app.window.close()
    app.shutdown()


def drawn_colours(qtbot, app: LimbicApp, view_name: str) -> dict[str, tuple[int, int, int]]:
    """``{name: rgb}`` of every entity drawn in ``view_name``: "global", "focus" (nothing searched) or "search"
    (the focus view of a search for :data:`QUERY`), once drawn with the communities of the arrays read last."""
    view, controller = app.graph_view, app.controller
    if view_name == "search":
        with qtbot.waitSignal(controller.search_finished, timeout=20_000):
            controller.search(QUERY, 10)
    elif controller.results:
        with qtbot.waitSignal(controller.search_finished, timeout=20_000):
            controller.search("", 10)
    view.set_mode("global" if view_name == "global" else "focus")

    def ready() -> bool:
        found = view.global_map.groups(view.arrays)
        if found is None or view.colouring != "community" or view.canvas.animating:
            return False
        shown = view.shown_names()
        if view_name == "global":
            return len(shown) == len(view.arrays)
        hits = [r.name for r in controller.results]
        return bool(shown) and (view_name == "focus" or set(hits) <= set(shown))

    qtbot.waitUntil(ready, timeout=30_000)
    qtbot.wait(300)  # the last redraw (it reads the communities at once)
    return {name: view.colour_of(name) for name in view.shown_names()}


def agent_burst(qtbot, app: LimbicApp, burst: int, pairs: list[tuple[str, str]]) -> list[str]:
    """Five agents' writes, each an entity with an observation and then its relations to two entities: the
    first four about an entity and one of its neighbours, the fifth linking two entities of different groups."""
    agent = MemoryService(open_database(app.db_path), HashingEmbedder(), origin="mcp:alice")
    names = []
    try:
        for k in range(5):
            name = f"Agent finding {burst}.{k}"
            first, second = pairs[5 * burst + k]
            if k == 4:
                second = pairs[(5 * burst + 7) % len(pairs)][0]
            agent.entities.create_entities([EntityInput(name, "finding", (ObservationInput(f"about {first} and {second}"),))],
                                  origin="mcp:alice")
            agent.relations.create_relations([RelationInput(name, first, "about"), RelationInput(name, second, "relates_to")],
                                   origin="mcp:alice")
            names.append(name)
    finally:
        agent.close()
    qtbot.waitUntil(lambda: set(names) <= set(app.graph_view.arrays.names), timeout=20_000)
    return names


def kept_share(before: dict[str, tuple], after: dict[str, tuple]) -> float:
    both = [name for name in before if name in after]
    return sum(before[name] == after[name] for name in both) / len(both)


def test_three_bursts_of_agent_writes_keep_community_colours_in_every_view(qtbot, limbic):
    views = ("global", "focus", "search")
    before = {name: drawn_colours(qtbot, limbic, name) for name in views}
    everywhere = before["global"]
    for name in ("focus", "search"):  # the same community, the same colour, whatever the view
        assert before[name] and all(everywhere[n] == rgb for n, rgb in before[name].items())
    assert len(set(everywhere.values())) >= 8  # many communities coloured, not one colour for all
    arrays = limbic.graph_view.arrays
    rng = np.random.default_rng(3)
    linked = np.flatnonzero(arrays.degree > 0)
    pairs = []
    for row in rng.permutation(linked)[:15].tolist():
        around = neighbours(arrays, np.array([row]), depth=1)
        pairs.append((arrays.names[row], arrays.names[int(rng.choice(around[around != row]))]))
    shares = []
    for burst in range(3):
        written = agent_burst(qtbot, limbic, burst, pairs)
        after = {name: drawn_colours(qtbot, limbic, name) for name in views}
        assert set(written) <= set(after["global"])
        for name in ("focus", "search"):
            assert all(after["global"][n] == rgb for n, rgb in after[name].items())
        shares.append({name: kept_share(before[name], after[name]) for name in views})
    print("colours kept after each burst:", shares)
    assert all(share[name] >= KEPT for share in shares for name in views), shares
