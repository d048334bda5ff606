"""The hand-labelled pairs of observations from real agent memory (tests/fixtures/duplicate_pairs_corpus.jsonl, and
tests/fixtures/duplicate_pairs_blind.jsonl labelled blind) and how the duplicate finder is scored on them (docs/curation.md "Calibration").

Each pair's two texts are stored as observations of their entities (real names and types, so the vectors are
those the finder meets: ``"<entity name>: <content>"``); the finder is run once over all of them, as on a
memory. A pair counts as *proposed* when both of its observations are members of one duplicate cluster (more
specific pairs, shared facts and anything else are not proposed as duplicates); it is a true duplicate when its
label is ``duplicate``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "duplicate_pairs_corpus.jsonl"
BLIND = FIXTURE.with_name("duplicate_pairs_blind.jsonl")
"""Pairs sampled from other memory files and labelled by a person who had not read the rules."""
LABELS = ("duplicate", "specific", "shared", "different")


def load_pairs(path: Path = FIXTURE) -> list[dict]:
    """The labelled pairs of ``path`` (default: the fixture; any file of its format: one JSON object a line with
    ``text_a``, ``text_b``, ``entity_a``, ``entity_b``, ``label`` and optionally ``type_a``, ``type_b``), in file
    order. Raises ValueError naming the first line that lacks a field or has an unknown label."""
    pairs = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        pair = json.loads(line)
        missing = [k for k in ("text_a", "text_b", "entity_a", "entity_b", "label") if not pair.get(k)]
        if missing or pair["label"] not in LABELS:
            raise ValueError(f"{path}:{number}: " + (f"no {', '.join(missing)}" if missing else
                                                      f"label {pair['label']!r} is not one of {', '.join(LABELS)}"))
        pairs.append(pair)
    return pairs


def store_pairs(service, pairs: list[dict]) -> dict[tuple[str, str], int]:
    """Write every pair's texts as observations of their entities (one ``create_entities`` call), wait for the
    vectors; returns ``{(entity name, text): observation id}``."""
    from limbic.core.models import EntityInput, ObservationInput

    texts: dict[str, list[str]] = {}
    kinds: dict[str, str] = {}
    for pair in pairs:
        for side in "ab":
            name, text = pair[f"entity_{side}"], pair[f"text_{side}"]
            kinds.setdefault(name, pair.get(f"type_{side}") or "thing")
            found = texts.setdefault(name, [])
            if text not in found:
                found.append(text)
    service.entities.create_entities([EntityInput(name, kinds[name], tuple(ObservationInput(t) for t in found))
                             for name, found in texts.items()])
    service.search.wait_for_vectors()
    return {(e.name, o.content): o.id for e in service.entities.read_graph().entities for o in e.observations}


@dataclass(frozen=True)
class Score:
    """Proposed duplicate pairs against the labels: true positives, false positives, false negatives, and the
    texts of the false positives and of the duplicates missed."""

    threshold: float
    tp: int
    fp: int
    fn: int
    false_positives: tuple[str, ...]
    missed: tuple[str, ...] = ()

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    def to_dict(self) -> dict:
        return {"threshold": self.threshold, "precision": round(self.precision, 3), "recall": round(self.recall, 3),
                "tp": self.tp, "fp": self.fp, "fn": self.fn}


def score(service, pairs: list[dict], ids: dict[tuple[str, str], int], threshold: float | None = None) -> Score:
    """Run the finder over the stored pairs at ``threshold`` (default: the finder's) and score it."""
    report = service.curation.find_duplicate_observations(threshold=threshold, limit=100_000)
    cluster_of: dict[int, int] = {}
    for number, cluster in enumerate(report.clusters):
        if cluster.relation == "duplicate":
            for member in cluster.members:
                cluster_of[member.id] = number
    tp = fp = fn = 0
    wrong, missed = [], []
    for pair in pairs:
        a, b = ids[(pair["entity_a"], pair["text_a"])], ids[(pair["entity_b"], pair["text_b"])]
        proposed = a in cluster_of and cluster_of.get(a) == cluster_of.get(b)
        duplicate = pair["label"] == "duplicate"
        tp += proposed and duplicate
        fp += proposed and not duplicate
        fn += duplicate and not proposed
        if proposed != duplicate:
            (wrong if proposed else missed).append(f"{pair['text_a'][:60]} / {pair['text_b'][:60]}")
    return Score(report.threshold, tp, fp, fn, tuple(wrong), tuple(missed))
