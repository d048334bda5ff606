"""What the node colours of the graph view say: the entity type, or the community in the visible graph.

Real memory files have hundreds of entity types, most used once or twice: colouring by type then paints
nearly everything grey. :func:`communities` finds groups of densely linked entities in the drawn graph
(python-igraph's Leiden algorithm, modularity), starting from the groups drawn before so that a write
reshapes them only where it must, and :func:`community_colours` keeps each group's colour across
changes: new groups are matched to the old colours by overlap (largest overlap first); only a genuinely
new group takes a new colour. ``auto`` colours by type when the palette's types cover most of the drawn
nodes (:data:`TYPE_COVERAGE`), else by community. Two more colourings come from the service
(:mod:`limbic.core.service.provenance`): :func:`by_origin` (*Who wrote it*) and :func:`by_fade` (*What fades
next*). Colour codes index :data:`limbic.gui.graph.style.PALETTE`; a code past it is grey.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from limbic.gui.graph import style

MODES = (("Colour: auto", "auto"), ("Colour: type", "type"), ("Colour: community", "community"),
         ("Colour: who wrote it", "origin"), ("Colour: what fades next", "fades"))
FADE_CODES = {"expires": 5, "forgotten": 7}  # vermilion: an observation expires; violet: proposed for forgetting
TYPE_COVERAGE = 0.6      # auto: colour by type when the coloured types cover this share of the drawn nodes
MIN_COMMUNITY = 3        # smaller groups (and lone nodes) stay grey
GREY = len(style.PALETTE)
_RNG = random.Random()   # igraph's random numbers, seeded before each run: the same graph, the same groups


@dataclass(frozen=True, slots=True)
class Colouring:
    """Per drawn node a colour ``codes`` ``(N,) int64``, the ``mode`` used ("type", "community", "origin" or
    "fades"), and the legend: ``title``, ``(rgb, text)`` ``entries`` and the colour code of each entry
    (``entry_codes``: the nodes a click on it highlights)."""

    codes: np.ndarray
    mode: str
    title: str
    entries: tuple[tuple[tuple[int, int, int], str], ...]
    entry_codes: tuple[int, ...] = ()


def communities(n: int, edges: np.ndarray, initial: np.ndarray | None = None) -> np.ndarray:
    """``(n,) int64`` community of each node of the graph with ``(M, 2)`` ``edges`` (Leiden, modularity, seeded).

    ``initial`` ``(n,) int64`` (the groups drawn before; new nodes each alone) starts the search there, so a
    small change of the graph moves only the nodes it concerns."""
    import igraph

    if n == 0:
        return np.zeros(0, dtype=np.int64)
    graph = igraph.Graph(n=n, edges=np.asarray(edges, dtype=np.int64).reshape(-1, 2).tolist(), directed=False)
    graph.simplify()
    _RNG.seed(7)
    igraph.set_random_number_generator(_RNG)
    start = None if initial is None else np.unique(np.asarray(initial), return_inverse=True)[1].ravel().tolist()
    found = graph.community_leiden(objective_function="modularity", n_iterations=-1, initial_membership=start)
    return np.asarray(found.membership, dtype=np.int64)


def initial_membership(ids: np.ndarray, previous: dict[int, int], grouped_below: int = GREY) -> np.ndarray | None:
    """``(n,) int64`` starting groups for :func:`communities` from the groups found before (``previous``: entity
    id → group, e.g. the colour code drawn): a node of a group below ``grouped_below`` starts in it, any other
    node alone; ``None`` when there was nothing before."""
    if not previous:
        return None
    codes = np.array([previous.get(int(i), -1) for i in np.asarray(ids).tolist()], dtype=np.int64)
    alone = (codes < 0) | (codes >= grouped_below)
    codes[alone] = max(int(codes.max(initial=0)), grouped_below) + 1 + np.arange(int(alone.sum()))
    return codes


def community_colours(membership: np.ndarray, ids: np.ndarray, previous: dict[int, int]) -> np.ndarray:
    """``(n,) int64`` colour codes of communities of at least :data:`MIN_COMMUNITY` nodes (the largest
    :data:`~limbic.gui.graph.style.PALETTE` many; the rest grey).

    Colours stay with their groups (``previous``: entity id → code drawn before): every (group, old colour)
    pair is scored by how many members the group shares with that colour's nodes, and pairs are matched
    greedily, largest overlap first, each group and each colour once; a group keeps its old colour when
    at least half of its members had it, or it holds most of that colour's nodes. Groups left over (genuinely
    new ones) take the free colours, largest first."""
    membership = np.asarray(membership, dtype=np.int64)
    codes = np.full(len(membership), GREY, dtype=np.int64)
    groups, sizes = np.unique(membership, return_counts=True)
    ranked = [int(g) for g in groups[np.argsort(-sizes, kind="stable")] if sizes[groups == g][0] >= MIN_COMMUNITY]
    ranked = ranked[: len(style.PALETTE)]
    before = np.array([previous.get(int(i), GREY) for i in np.asarray(ids).tolist()], dtype=np.int64)
    colour_sizes = np.bincount(before[before < GREY], minlength=GREY)
    pairs = []
    for group in ranked:
        members = membership == group
        old, counts = np.unique(before[members & (before < GREY)], return_counts=True)
        for colour, count in zip(old.tolist(), counts.tolist(), strict=True):
            if 2 * count >= int(members.sum()) or 2 * count > int(colour_sizes[colour]):
                pairs.append((count, -group, colour))
    taken: dict[int, int] = {}
    used: set[int] = set()
    for _count, negative_group, colour in sorted(pairs, reverse=True):
        if -negative_group not in taken and colour not in used:
            taken[-negative_group] = colour
            used.add(colour)
    free = [c for c in range(len(style.PALETTE)) if c not in used]
    for group in ranked:
        colour = taken.get(group)
        if colour is None:
            if not free:
                continue
            colour = free.pop(0)
        codes[membership == group] = colour
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
            groups_shown.append((len(members), code, f"around {community_lead(names, priority, members)} "
                                                     f"({len(members):,})"))
    groups_shown.sort(key=lambda group: -group[0])
    entries = [(style.type_colour(code), text) for _, code, text in groups_shown]
    entry_codes = [code for _, code, _ in groups_shown]
    rest = int((codes == GREY).sum())
    if rest:
        entries.append((style.OTHER_COLOUR, f"small groups, lone nodes ({rest:,})"))
        entry_codes.append(GREY)
    groups = len(np.unique(membership))
    return Colouring(codes, "community", f"Colour = community ({groups:,} in view, Leiden)", tuple(entries),
                     tuple(entry_codes))


def community_lead(names: Sequence[str], priority: np.ndarray, members: np.ndarray) -> str:
    """The name a group goes by: its most salient member's."""
    return names[int(members[np.argmax(priority[members])])]


def origin_colours(counts: dict[str, int], kept: dict[str, int]) -> dict[str, int]:
    """A colour code per origin: those in ``kept`` (colours given before) keep theirs; the others, most writes
    first, take the free palette colours (grey past it). Returns the updated mapping."""
    out = dict(kept)
    free = [c for c in range(len(style.PALETTE)) if c not in out.values()]
    for origin in sorted(counts, key=lambda o: (-counts[o], o)):
        if origin not in out:
            out[origin] = free.pop(0) if free else GREY
    return out


def origin_label(origin: str) -> str:
    """An origin as people read it: the token's name for ``mcp:NAME``, the origin itself otherwise."""
    return origin[4:] + " (token)" if origin.startswith("mcp:") else origin


def by_origin(origins: Sequence[str | None], colours: dict[str, int], counts: dict[str, int]) -> Colouring:
    """*Who wrote it*: each drawn node in the colour of the origin of its last write (``origins``; ``None``:
    not in the log, grey). Legend rows: one per origin with its drawn nodes and all its writes."""
    codes = np.array([GREY if o is None else colours.get(o, GREY) for o in origins], dtype=np.int64)
    drawn: dict[str, int] = {}
    for origin in origins:
        if origin is not None:
            drawn[origin] = drawn.get(origin, 0) + 1
    shown = sorted(drawn, key=lambda o: (-drawn[o], o))
    entries = [(style.type_colour(colours.get(o, GREY)),
                f"{origin_label(o)} ({drawn[o]:,}) · {counts.get(o, 0):,} writes") for o in shown]
    return Colouring(codes, "origin", "Colour = who wrote it last (click: its writes)", tuple(entries),
                     tuple(colours.get(o, GREY) for o in shown))


def by_fade(kinds: Sequence[str | None], days: float, until: str) -> Colouring:
    """*What fades next*: drawn nodes that fade within ``days`` (by the day ``until``, ``YYYY-MM-DD``) in the colour
    of how (``kinds``: "expires", "forgotten" or ``None``: nothing due, grey)."""
    codes = np.array([GREY if k is None else FADE_CODES[k] for k in kinds], dtype=np.int64)
    entries, entry_codes = [], []
    for kind, text in (("expires", "an observation expires"), ("forgotten", "proposed for forgetting")):
        count = sum(1 for k in kinds if k == kind)
        entries.append((style.type_colour(FADE_CODES[kind]), f"{text} ({count:,})"))
        entry_codes.append(FADE_CODES[kind])
    entries.append((style.OTHER_COLOUR, f"nothing due ({sum(1 for k in kinds if k is None):,})"))
    entry_codes.append(GREY)
    return Colouring(codes, "fades", f"What fades by {until} (within {days:g} days)", tuple(entries),
                     tuple(entry_codes))


def _by_type(type_codes: np.ndarray, type_names: Sequence[str]) -> Colouring:
    codes = np.minimum(type_codes, GREY)
    present, counts = np.unique(codes, return_counts=True)
    entries = [(style.type_colour(int(c)), f"{type_names[int(c)]} ({int(k):,})")
               for c, k in sorted(zip(present.tolist(), counts.tolist(), strict=True), key=lambda p: -p[1])
               if c < GREY]
    other = type_codes[type_codes >= GREY]
    if len(other):
        entries.append((style.OTHER_COLOUR, f"{len(np.unique(other)):,} other types ({len(other):,})"))
    entry_codes = [int(c) for c, _ in sorted(zip(present.tolist(), counts.tolist(), strict=True), key=lambda p: -p[1])
                   if c < GREY] + ([GREY] if len(other) else [])
    return Colouring(codes, "type", "Colour = entity type", tuple(entries), tuple(entry_codes))
