"""What the node colours of the graph view say: the entity type, or the entity's community.

Real memory files have hundreds of entity types, most used once or twice: colouring by type then paints
nearly everything grey. :func:`find_communities` finds groups of densely linked entities in the whole graph
(python-igraph's Leiden algorithm, modularity; for a large graph in the layout's worker process, since igraph
holds the interpreter lock while it runs), starting from the groups found before so that a write
reshapes them only where it must, and :func:`community_colours` keeps each group's colour across such
changes: new groups are matched to the old ones by overlap (Jaccard index, each group at most once, the
assignment of largest total overlap: SciPy's Hungarian solver) and take their colours; a genuinely new group
takes a colour no group has. Every view colours an entity by its community in the whole graph, so the same community has the same
colour in the global map, the focus view and a search. ``auto`` colours by type when the palette's types
cover most of the drawn nodes (:data:`TYPE_COVERAGE`) and the drawing is small, else by community: from
:data:`COMMUNITY_NODES` drawn nodes (the size from which the global map is laid out one region per community,
:data:`limbic.gui.graph.layout.REGION_LAYOUT`) a dozen type colours scattered over the regions say nothing, while
the regions, coloured and named, are a map. Two more colourings come from the
service (:mod:`limbic.core.service.provenance`): :func:`by_origin` (*Who wrote it*) and :func:`by_fade` (*What
fades next*). Colour codes index :data:`limbic.gui.graph.style.PALETTE`; a code past it is grey.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from limbic.gui.graph import style
from limbic.gui.graph.layout import REGION_LAYOUT, communities

MODES = (("Colour: auto", "auto"), ("Colour: type", "type"), ("Colour: community", "community"),
         ("Colour: who wrote it", "origin"), ("Colour: what fades next", "fades"))
FADE_CODES = {"expires": 5, "forgotten": 7}  # vermilion: an observation expires; violet: proposed for forgetting
TYPE_COVERAGE = 0.6      # auto: colour by type when the coloured types cover this share of the drawn nodes
COMMUNITY_NODES = REGION_LAYOUT  # auto: colour by community from this many drawn nodes, whatever the types
MIN_COMMUNITY = 3        # smaller groups (and lone nodes) stay grey
MIN_JACCARD = 0.2        # overlap (Jaccard index) from which a new group is an old one and takes its colour
RECOLOUR_RATIO = 1.5     # a new group this many times as large as the smallest coloured one takes its colour
GREY = len(style.PALETTE)


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


def initial_membership(ids: np.ndarray, previous: dict[int, int], grouped_below: int = GREY) -> np.ndarray | None:
    """``(n,) int64`` starting groups for :func:`~limbic.gui.graph.layout.communities` from the groups found
    before (``previous``: entity id → group, e.g. the colour code drawn): a node of a group below
    ``grouped_below`` starts in it, any other node alone; ``None`` when there was nothing before."""
    if not previous:
        return None
    codes = np.array([previous.get(int(i), -1) for i in np.asarray(ids).tolist()], dtype=np.int64)
    alone = (codes < 0) | (codes >= grouped_below)
    codes[alone] = max(int(codes.max(initial=0)), grouped_below) + 1 + np.arange(int(alone.sum()))
    return codes


@dataclass(frozen=True, slots=True)
class Communities:
    """The communities of the whole graph: for each entity of ``ids`` ``(N,) int64`` (the graph arrays' order),
    its group in ``membership`` ``(N,) int64`` (Leiden's numbering) and the group's colour ``codes`` ``(N,) int64``
    (grey for small groups and lone nodes)."""

    ids: np.ndarray
    membership: np.ndarray
    codes: np.ndarray


def find_communities(ids: np.ndarray, edges: np.ndarray, before: Communities | None = None,
                     group: Callable[[int, np.ndarray, np.ndarray | None], np.ndarray] = communities) -> Communities:
    """Worker: the :class:`Communities` of the graph of ``ids`` ``(N,)`` and ``edges`` ``(M, 2)`` (rows into
    ``ids``). With ``before`` (the communities found last), the search starts from its groups (new entities each
    alone) and the groups keep their colours (:func:`community_colours`). ``group``: the Leiden run
    (:func:`~limbic.gui.graph.layout.communities`, or the layout engine's, which runs it in its process)."""
    ids = np.asarray(ids, dtype=np.int64)
    initial = None
    if before is not None and len(before.ids):
        initial = initial_membership(ids, dict(zip(before.ids.tolist(), before.membership.tolist(), strict=True)),
                                     grouped_below=int(before.membership.max(initial=0)) + 1)
    membership = group(len(ids), edges, initial)
    return Communities(ids, membership, community_colours(membership, ids, before))


def _eligible(membership: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(inverse (n,), sizes (G,), eligible groups largest first)`` of ``membership``: the groups of at least
    :data:`MIN_COMMUNITY` nodes (ties in Leiden's order)."""
    _, inverse, sizes = np.unique(membership, return_inverse=True, return_counts=True)
    eligible = np.flatnonzero(sizes >= MIN_COMMUNITY)
    return inverse.ravel(), sizes, eligible[np.argsort(-sizes[eligible], kind="stable")]


def community_colours(membership: np.ndarray, ids: np.ndarray, before: Communities | None = None) -> np.ndarray:
    """``(n,) int64`` colour codes of the groups of ``membership`` (entities ``ids``): groups of at least
    :data:`MIN_COMMUNITY` nodes get a palette colour while there is one, the rest grey.

    A group keeps the colour it had (``before``: the communities drawn until now). Each new group is scored
    against each old group of at least :data:`MIN_COMMUNITY` nodes by the Jaccard index of their members,
    |A ∩ B| / |A ∪ B| (entity ids); the pairing of largest total index, each group at most once, is solved as a
    linear assignment problem (the Hungarian method, ``scipy.optimize.linear_sum_assignment``), and a pair with
    an index of at least :data:`MIN_JACCARD` is the same community: the new group takes the old one's colour
    (grey stays grey). Groups left over are new: they take the colours no group has, largest group first,
    colours never drawn before first. When no colour is left, a new group (most of its members new, e.g. an
    imported file) at least :data:`RECOLOUR_RATIO` times as large as the smallest coloured group takes that
    group's colour, which turns grey: what was just imported is not all grey, yet groups of known entities do
    not trade colours as they merge and grow."""
    membership = np.asarray(membership, dtype=np.int64)
    ids = np.asarray(ids, dtype=np.int64)
    codes = np.full(len(membership), GREY, dtype=np.int64)
    if not len(membership):
        return codes
    inverse, sizes, eligible = _eligible(membership)
    taken: dict[int, int] = {}  # group → colour code (GREY: matched to a grey group)
    drawn_before: set[int] = set()
    fresh = sizes.copy()  # members of each group new since ``before``
    if before is not None and len(before.ids) and len(eligible):
        drawn_before = set(before.codes[before.codes < GREY].tolist())
        old_inverse, old_sizes, old_eligible = _eligible(before.membership)
        order = np.argsort(before.ids)
        where = np.minimum(np.searchsorted(before.ids, ids, sorter=order), len(before.ids) - 1)
        found = before.ids[order[where]] == ids
        fresh = np.bincount(inverse[~found], minlength=len(sizes))
        new_row = np.full(len(sizes), -1)
        new_row[eligible] = np.arange(len(eligible))
        old_row = np.full(len(old_sizes), -1)
        old_row[old_eligible] = np.arange(len(old_eligible))
        rows = new_row[inverse[found]]
        cols = old_row[old_inverse[order[where[found]]]]
        both = (rows >= 0) & (cols >= 0)
        pairs, shared = np.unique(np.stack([rows[both], cols[both]], axis=1), axis=0, return_counts=True)
        if len(pairs):
            jaccard = shared / (sizes[eligible[pairs[:, 0]]] + old_sizes[old_eligible[pairs[:, 1]]] - shared)
            keep = jaccard >= MIN_JACCARD
            pairs, jaccard = pairs[keep], jaccard[keep]
        if len(pairs):
            from scipy.optimize import linear_sum_assignment  # here: SciPy takes most of a second to import

            new_groups, r = np.unique(pairs[:, 0], return_inverse=True)
            old_groups, c = np.unique(pairs[:, 1], return_inverse=True)
            score = np.zeros((len(new_groups), len(old_groups)))
            score[r.ravel(), c.ravel()] = jaccard
            matched_rows, matched_cols = linear_sum_assignment(score, maximize=True)
            for i, j in zip(matched_rows.tolist(), matched_cols.tolist(), strict=True):
                if score[i, j] >= MIN_JACCARD:
                    old_group = old_eligible[old_groups[j]]
                    colour = int(before.codes[np.flatnonzero(old_inverse == old_group)[0]])
                    taken[int(eligible[new_groups[i]])] = colour
    used = {c for c in taken.values() if c < GREY}
    free = [c for c in range(GREY) if c not in used and c not in drawn_before] + \
           [c for c in range(GREY) if c not in used and c in drawn_before]
    for group in eligible.tolist():
        if group not in taken and free:
            taken[group] = free.pop(0)
    for group in eligible.tolist():  # the palette is full: a much larger new group takes the smallest one's colour
        if group in taken or 2 * fresh[group] < sizes[group]:
            continue
        coloured = [g for g, c in taken.items() if c < GREY]
        smallest = min(coloured, key=lambda g: (sizes[g], -g), default=None)
        if smallest is None or sizes[group] < RECOLOUR_RATIO * sizes[smallest]:
            break
        taken[group], taken[smallest] = taken[smallest], GREY
    for group, colour in taken.items():
        codes[inverse == group] = colour
    return codes


def colour_nodes(mode: str, type_codes: np.ndarray, type_names: Sequence[str],
                 groups: tuple[np.ndarray, np.ndarray] | None, leads: dict[int, str]) -> Colouring:
    """The colouring of the drawn nodes for ``mode`` ("auto", "type" or "community"; auto: see the module
    docstring).

    ``type_codes`` index ``type_names`` (ranked by frequency in the whole graph); ``groups`` is the drawn
    nodes' ``(membership, colour codes)`` from :class:`Communities` (``None``: not computed, then colour by
    type); ``leads`` names each community colour by its most salient member in the whole graph."""
    type_codes = np.asarray(type_codes, dtype=np.int64)
    coloured = type_codes < GREY
    if mode == "type" or groups is None or (mode == "auto" and len(type_codes) < COMMUNITY_NODES
                                            and (not len(type_codes) or coloured.mean() >= TYPE_COVERAGE)):
        return _by_type(type_codes, type_names)
    membership, codes = groups
    present, counts = np.unique(codes[codes < GREY], return_counts=True)
    shown = sorted(zip(counts.tolist(), present.tolist(), strict=True), key=lambda group: (-group[0], group[1]))
    entries = [(style.type_colour(code), f"around {leads.get(code, '?')} ({count:,})") for count, code in shown]
    entry_codes = [code for _, code in shown]
    rest = int((codes == GREY).sum())
    if rest:
        entries.append((style.OTHER_COLOUR, f"small groups, lone nodes ({rest:,})"))
        entry_codes.append(GREY)
    in_view = len(np.unique(membership))
    return Colouring(np.asarray(codes, dtype=np.int64), "community",
                     f"Colour = community ({in_view:,} in view, Leiden)", tuple(entries), tuple(entry_codes))


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
