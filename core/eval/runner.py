"""Ask a LoCoMo file's questions through the product's own search and score every variant.

Variants (all from ``MemoryService.search.query``):

- a preset name of :mod:`limbic.core.search.presets` (``default``, ``seed``): the product's ranking
  with those parameters;
- ``knn``, ``bm25``: the ``default`` search's candidate set ordered by its KNN rank or by its
  FTS5/BM25 rank alone (candidates the branch did not find are left out);
- ``rrf``: the same candidates by plain Reciprocal Rank Fusion of both branches (``rrf_k`` of the
  ``default`` preset; seed ``003``), no limbic factors; ties go to the better KNN, then FTS5 rank.

One search runs per distinct preset value per question; the other variants re-rank its candidate
set (pure, no SQL). Replays (``impressions``: every search records usage as any product search does;
``use``: after each question its evidence entities are also used, see :func:`use_evidence`) run each
distinct preset on its own copy of the conversation's database, asking the questions in file order
and waiting for the background signal writes between questions. ``knn``, ``bm25`` and ``rrf`` use no
usage signal, so they are read from the ``default`` preset's pass.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

from limbic.core.embedding.base import Embedder
from limbic.core.errors import ValidationError
from limbic.core.eval import scratch
from limbic.core.eval.locomo import (
    GRANULARITIES,
    Conversation,
    LocomoFile,
    Question,
    resolve_evidence,
    turn_holders,
)
from limbic.core.eval.metrics import QuestionScore, score_question
from limbic.core.search.candidates import CandidateSet
from limbic.core.search.params import ScoringParams
from limbic.core.search.presets import PRESETS
from limbic.core.service import MemoryService

BRANCH_VARIANTS = ("knn", "bm25", "rrf")
VARIANTS = ("default", "knn", "bm25", "rrf", "seed")
REPLAYS = ("none", "impressions", "use")
MIN_LIMIT = 10
REPLAY_ORIGIN = "mcp"


def known_variants() -> tuple[str, ...]:
    """Every variant name: the presets, then the branch variants."""
    return (*PRESETS, *BRANCH_VARIANTS)


@dataclass(frozen=True, slots=True)
class EvalOptions:
    """What to measure. ``limit``: results per search (≥ 10, so that R@10 is defined);
    ``questions``: only the first N questions of each conversation; ``conversations``: only these ids;
    ``rebuild``: ignore the cache; ``progress``: tqdm bars on stderr; ``server``: a ``postgresql://`` address
    whose backend answers the questions (each conversation copied there, :func:`scratch.open_copy`)."""

    granularity: str = "session"
    limit: int = 10
    variants: tuple[str, ...] = VARIANTS
    replay: str = "none"
    questions: int | None = None
    conversations: tuple[str, ...] | None = None
    rebuild: bool = False
    progress: bool = False
    server: str | None = None

    def __post_init__(self) -> None:
        if self.granularity not in GRANULARITIES:
            raise ValidationError(f"unknown granularity {self.granularity!r}; expected one of {', '.join(GRANULARITIES)}")
        if not MIN_LIMIT <= self.limit <= 1000:
            raise ValidationError(f"--limit must be between {MIN_LIMIT} and 1000 (R@10 needs 10 results), got {self.limit}")
        known = known_variants()
        unknown = [v for v in self.variants if v not in known]
        if unknown or not self.variants:
            raise ValidationError(f"unknown variant {', '.join(unknown) or '(none given)'}; expected some of {', '.join(known)}")
        if self.replay not in REPLAYS:
            raise ValidationError(f"unknown replay {self.replay!r}; expected one of {', '.join(REPLAYS)}")
        if self.questions is not None and self.questions < 1:
            raise ValidationError(f"--questions must be at least 1, got {self.questions}")


@dataclass(frozen=True, slots=True)
class SkippedQuestion:
    """A question left out because none of its evidence ids names a turn of its conversation."""

    conversation: str
    index: int
    evidence: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class EvalResult:
    """The outcome of :func:`run_locomo`.

    ``scores`` maps each variant to one :class:`QuestionScore` per asked question (file order);
    ``unresolved`` lists ``(conversation, question index, evidence id)`` of every id that names no turn;
    ``search_ms``: wall time per question and pass (searches plus re-ranks), milliseconds;
    ``modes``: how many searches ran in each search mode (``hybrid``, ``semantic``, ``fts_only``).
    """

    path: Path
    sha256: str
    options: EvalOptions
    model: str
    conversations: tuple[str, ...]
    scores: dict[str, list[QuestionScore]]
    skipped: tuple[SkippedQuestion, ...]
    unresolved: tuple[tuple[str, int, str], ...]
    scratch: scratch.ScratchSet
    search_ms: tuple[float, ...]
    modes: dict[str, int]
    seconds: float

    @property
    def asked(self) -> int:
        return len(next(iter(self.scores.values()), []))


@dataclass(frozen=True, slots=True)
class AskedQuestion:
    """A question to ask and the names of the entities holding its evidence turns."""

    question: Question
    relevant: frozenset[str]


@dataclass(slots=True)
class SearchPass:
    """One search per question with ``params``, scored for the preset variants ``presets`` and the
    branch variants ``branches`` (re-ranks of the same candidate set)."""

    params: ScoringParams
    presets: list[str]
    branches: list[str] = field(default_factory=list)


def plan_passes(variants: Sequence[str]) -> list[SearchPass]:
    """One pass per distinct preset value among ``variants``; branch variants ride on ``default``'s."""
    passes: dict[str, SearchPass] = {}
    for name in variants:
        params = PRESETS["default" if name in BRANCH_VARIANTS else name]
        one = passes.setdefault(params.to_json(), SearchPass(params, []))
        (one.branches if name in BRANCH_VARIANTS else one.presets).append(name)
    return list(passes.values())


def _by_branch(candidates: CandidateSet, branch_rank: np.ndarray, limit: int) -> list[str]:
    found = np.flatnonzero(branch_rank > 0)
    order = found[np.argsort(branch_rank[found], kind="stable")][:limit]
    return [candidates.names[i] for i in order.tolist()]


def _by_rrf(candidates: CandidateSet, rrf_k: float, limit: int) -> list[str]:
    knn = np.where(candidates.knn_rank > 0, candidates.knn_rank, np.iinfo(np.int64).max)
    fts = np.where(candidates.fts_rank > 0, candidates.fts_rank, np.iinfo(np.int64).max)
    order = np.lexsort((fts, knn, -candidates.rrf(rrf_k)))[:limit]
    return [candidates.names[i] for i in order.tolist()]


def branch_ranking(variant: str, candidates: CandidateSet, params: ScoringParams, limit: int) -> list[str]:
    """Entity names, best first, of a ``knn`` / ``bm25`` / ``rrf`` re-ranking of ``candidates``."""
    if variant == "knn":
        return _by_branch(candidates, candidates.knn_rank, limit)
    if variant == "bm25":
        return _by_branch(candidates, candidates.fts_rank, limit)
    if variant == "rrf":
        return _by_rrf(candidates, params.rrf_k, limit)
    raise ValidationError(f"unknown branch variant {variant!r}; expected one of {', '.join(BRANCH_VARIANTS)}")


def use_evidence(service: MemoryService, names: Sequence[str], search_id: int | None) -> None:
    """What an agent does with the memory that answered its question: it says so with ``mark_used``,
    naming the search (one access each, co-occurrence between them, feedback for that search)."""
    service.usage.mark_used(list(names), search_id=search_id, origin=REPLAY_ORIGIN)


def questions_to_ask(conversation: Conversation, granularity: str, first: int | None,
                     skipped: list[SkippedQuestion], unresolved: list[tuple[str, int, str]]) -> list[AskedQuestion]:
    """The first ``first`` (all when ``None``) questions with their relevant entities, in file order.

    Questions with no resolvable evidence go to ``skipped``; every unresolvable id to ``unresolved``.
    """
    holders = turn_holders(conversation, granularity)
    asked = []
    for question in conversation.questions[:first]:
        relevant, bad = resolve_evidence(question.evidence, holders)
        unresolved.extend((conversation.sample_id, question.index, b) for b in bad if b)
        if relevant:
            asked.append(AskedQuestion(question, relevant))
        else:
            skipped.append(SkippedQuestion(conversation.sample_id, question.index, question.evidence))
    return asked


def ask_questions(service: MemoryService, asked: Sequence[AskedQuestion], passes: Sequence[SearchPass],
                  options: EvalOptions, scores: dict[str, list[QuestionScore]], timings: list[float],
                  modes: dict[str, int], bar: tqdm | None = None) -> None:
    """Ask ``asked`` in order on ``service``, appending each variant's :class:`QuestionScore` to ``scores``.

    ``scores`` needs a list for every variant of ``passes``. With ``options.replay`` other than
    ``none`` the searches record usage and this waits for the signal writes after each question
    (``use`` also calls :func:`use_evidence`). Appends one wall time (ms) per question and pass to
    ``timings`` and counts search modes in ``modes``.
    """
    record = options.replay != "none"
    for item in asked:
        for one in passes:
            started = time.perf_counter()
            outcome = service.search.query(item.question.text, options.limit, one.params, record=record,
                                     origin=REPLAY_ORIGIN)
            rankings = {name: [r.name for r in outcome.results] for name in one.presets}
            for name in one.branches:
                rankings[name] = branch_ranking(name, outcome.candidate_set, one.params, options.limit)
            timings.append((time.perf_counter() - started) * 1000.0)
            modes[outcome.mode] = modes.get(outcome.mode, 0) + 1
            for name, ranked in rankings.items():
                scores[name].append(score_question(ranked, item.relevant, item.question.category_name))
            if record:
                service.usage.wait_for_signals()
                if options.replay == "use":
                    use_evidence(service, sorted(item.relevant), outcome.search_id)
        if bar is not None:
            bar.update(1)


def run_locomo(locomo: LocomoFile, options: EvalOptions, embedder: Embedder | None) -> EvalResult:
    """Build (or reuse) the scratch databases and score every variant of ``options`` on ``locomo``.

    Raises:
        ValidationError: an unknown conversation id in ``options.conversations``, or a turn that breaks
            the product's input limits.
    """
    started = time.perf_counter()
    conversations = list(locomo.conversations)
    if options.conversations:
        known = {c.sample_id for c in conversations}
        unknown = [c for c in options.conversations if c not in known]
        if unknown:
            raise ValidationError(f"unknown conversation {', '.join(unknown)}; the file has {', '.join(sorted(known))}")
        conversations = [c for c in conversations if c.sample_id in options.conversations]
    built = scratch.prepare(locomo.sha256, conversations, options.granularity, embedder,
                            rebuild=options.rebuild, progress=options.progress)
    skipped: list[SkippedQuestion] = []
    unresolved: list[tuple[str, int, str]] = []
    asked = {c.sample_id: questions_to_ask(c, options.granularity, options.questions, skipped, unresolved)
             for c in conversations}
    passes = plan_passes(options.variants)
    # Fresh: every pass shares one copy (nothing is recorded). Replay: each pass gets its own copy.
    schedule = [list(passes)] if options.replay == "none" else [[one] for one in passes]
    scores: dict[str, list[QuestionScore]] = {name: [] for name in options.variants}
    timings: list[float] = []
    modes: dict[str, int] = {}
    total = sum(len(a) for a in asked.values()) * len(schedule)
    with tqdm(total=total, desc=f"{options.granularity} questions", unit="q",
              disable=not options.progress, leave=False) as bar:
        for group in schedule:
            for conversation in conversations:
                with scratch.open_copy(built.databases[conversation.sample_id], embedder,
                                       server=options.server) as service:
                    ask_questions(service, asked[conversation.sample_id], group, options, scores, timings, modes, bar)
    return EvalResult(
        path=locomo.path, sha256=locomo.sha256, options=options, model=scratch.model_name(embedder),
        conversations=tuple(c.sample_id for c in conversations), scores=scores,
        skipped=tuple(skipped), unresolved=tuple(unresolved), scratch=built, search_ms=tuple(timings),
        modes=modes, seconds=time.perf_counter() - started,
    )
