"""What the node colours of the graph view say: the entity type, or the community in the visible graph.

Real memory files have hundreds of entity types, most used once or twice: colouring by type then paints
nearly everything grey. :func:`communities` finds groups of densely linked entities in the drawn graph
(python-igraph's Leiden algorithm, modularity), and :func:`community_colours` gives the largest groups
the palette colours, keeping a group's colour while it changes (by its members' previous colours).
``auto`` colours by type when the palette's types cover most of the drawn nodes (:data:`TYPE_COVERAGE`),
else by community. Colour codes index :data:`limbic.gui.graph.style.PALETTE`; a code past it is grey.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from limbic.gui.graph import style

MODES = (("Colour: auto", "auto"), ("Colour: type", "type"), ("Colour: community", "community"))
TYPE_COVERAGE = 0.6      # auto: colour by type when the coloured types cover this share of the drawn nodes
MIN_COMMUNITY = 3        # smaller groups (and lone nodes) stay grey
GREY = len(style.PALETTE)
_RNG = random.Random()   # igraph's random numbers, seeded before each run: the same graph, the same groups


@dataclass(frozen=True, slots=True)
class Colouring:
    """Per drawn node a colour ``codes`` ``(N,) int64``, the ``mode`` used ("type" or "community"), and the
    legend: ``title`` and ``(rgb, text)`` ``entries``."""

    codes: np.ndarray
    mode: str
    title: str
    entries: tuple[tuple[tuple[int, int, int], str], ...]


def communities(n: int, edges: np.ndarray) -> np.ndarray:
    """``(n,) int64`` community of each node of the graph with ``(M, 2)`` ``edges`` (Leiden, modularity)."""
    import igraph

    if n == 0:
        return np.zeros(0, dtype=np.int64)
    graph = igraph.Graph(n=n, edges=np.asarray(edges, dtype=np.int64).reshape(-1, 2).tolist(), directed=False)
    graph.simplify()
    _RNG.seed(7)
    igraph.set_random_number_generator(_RNG)
    found = graph.community_leiden(objective_function="modularity", n_iterations=-1)
    return np.asarray(found.membership, dtype=np.int64)


def community_colours(membership: np.ndarray, ids: np.ndarray, previous: dict[int, int]) -> np.ndarray:
    """``(n,) int64`` colour codes: the largest communities (at least :data:`MIN_COMMUNITY` nodes) get palette
    colours, each the colour most of its members had before (``previous``: entity id → code) when free."""
    codes = np.full(len(membership), GREY, dtype=np.int64)
    groups, sizes = np.unique(membership, return_counts=True)
    free = list(range(len(style.PALETTE)))
    for group in groups[np.argsort(-sizes, kind="stable")]:
        members = np.flatnonzero(membership == group)
        if len(members) < MIN_COMMUNITY or not free:
            break
        before = [previous.get(int(i), GREY) for i in ids[members].tolist()]
        counts = sorted(((before.count(c), -c) for c in set(before) if c in free), reverse=True)
        colour = -counts[0][1] if counts else free[0]
        free.remove(colour)
        codes[members] = colour
    return codes


def colour_nodes(mode: str, type_codes: np.ndarray, type_names: Sequence[str], names: Sequence[str],
                 priority: np.ndarray, membership: np.ndarray | None, ids: np.ndarray,
                 previous: dict[int, int]) -> Colouring:
    """The colouring of the drawn nodes for ``mode`` ("auto", "type" or "community").

    ``type_codes`` index ``type_names`` (ranked by frequency in the whole graph); ``priority`` ranks the
    nodes (the most salient names a community in the legend); ``membership`` comes from
    :func:`communities` (``None``: not computed, then colour by type)."""
    type_codes = np.asarray(type_codes, dtype=np.int64)
    coloured = type_codes < GREY
    if mode == "type" or membership is None or (mode == "auto" and (not len(type_codes)
                                                                  or coloured.mean() >= TYPE_COVERAGE)):
        return _by_type(type_codes, type_names)
    codes = community_colours(membership, ids, previous)
    groups_shown = []
    for code in range(GREY):
        members = np.flatnonzero(codes == code)
        if len(members):
            lead = names[int(members[np.argmax(priority[members])])]
            groups_shown.append((len(members), style.type_colour(code), f"around {lead} ({len(members):,})"))
    groups_shown.sort(key=lambda group: -group[0])
    entries = [(rgb, text) for _, rgb, text in groups_shown]
    rest = int((codes == GREY).sum())
    if rest:
        entries.append((style.OTHER_COLOUR, f"small groups, lone nodes ({rest:,})"))
    groups = len(np.unique(membership))
    return Colouring(codes, "community", f"Colour = community ({groups:,} in view, Leiden)", tuple(entries))


def _by_type(type_codes: np.ndarray, type_names: Sequence[str]) -> Colouring:
    codes = np.minimum(type_codes, GREY)
    present, counts = np.unique(codes, return_counts=True)
    entries = [(style.type_colour(int(c)), f"{type_names[int(c)]} ({int(k):,})")
               for c, k in sorted(zip(present.tolist(), counts.tolist(), strict=True), key=lambda p: -p[1])
               if c < GREY]
    other = type_codes[type_codes >= GREY]
    if len(other):
        entries.append((style.OTHER_COLOUR, f"{len(np.unique(other)):,} other types ({len(other):,})"))
    return Colouring(codes, "type", "Colour = entity type", tuple(entries))
