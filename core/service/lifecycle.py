"""The lifecycle calls of :class:`~limbic.core.service.MemoryService`: expiry and its sweep, the terms of an
observation (expiry and weight) (docs/lifecycle.md).

The manager :class:`Lifecycle` (``memory.lifecycle``), also the contradiction check of every write
(:meth:`Lifecycle.written_vectors`, :meth:`Lifecycle.checked`), retention and its forecast.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from limbic.core import validation as check
from limbic.core.errors import (
    ConflictError,
    DatabaseClosedError,
    DatabaseUnavailableError,
    NotFoundError,
    StoreBusyError,
    ValidationError,
)
from limbic.core.lifecycle import confidence, contradictions
from limbic.core.lifecycle.retention import RetentionParams
from limbic.core.models import Entity, Observation, iso
from limbic.core.service import conflict_checks as checks
from limbic.core.service import forgetting
from limbic.core.service.expiry_sweep import SWEEP_OP, ExpirySweeper, SweepReport, sweep
from limbic.core.service.forgetting import Forecast, Retention
from limbic.core.service.graph_arrays import GraphArrays, build_graph_arrays
from limbic.core.service.history import origin_label
from limbic.core.store import conflicts, decision_log, expiry, graph, reads, scope, views, writes
from limbic.core.store import retention as retention_rows
from limbic.core.store.conflicts import ConflictRow
from limbic.core.store.connection import Connection
from limbic.core.store.database import WriteTransaction
from limbic.core.store.indexing import observation_passage
from limbic.core.store.schema import put_setting

if TYPE_CHECKING:
    from limbic.core.service.memory import MemoryService

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)
Write = Callable[[str, str | None, Callable[[WriteTransaction], Any]], Any]


class Lifecycle:
    """Expiry and its sweep, the terms of observations, retention and its forecast, pins and strength, the
    graph as it stood at a time, and the contradiction check of writes (docs/lifecycle.md).

    Reached as ``memory.lifecycle`` (:class:`~limbic.core.service.memory.MemoryService`).
    """

    def __init__(self, memory: MemoryService) -> None:
        self.memory = memory
        self._sweeper: ExpirySweeper | None = None

    def written_vectors(self, op: str, origin: str, texts: Sequence[tuple[str, str]] | None) -> checks.Vectors | None:
        """The vectors of a write's new texts (``(entity name, content)``), encoded just before its transaction
        opens — the model never runs inside the write lock — by the query encoder, which never waits for the
        background embedder: a passage's vector when the model prefixes queries and passages alike (MiniLM). Empty
        when the write is not checked (:meth:`_checked`), vectors are deferred, a transaction is already open, the
        model prefixes them differently, or encoding fails (the observations are then queued). ``None`` when no
        text of the write could conflict with what its entities hold (the default mode reads the texts first,
        :func:`~limbic.core.service.conflict_checks.possible_before`): nothing to encode for the check."""
        embedder = self.memory.embedder
        if (not texts or embedder is None or op not in checks.CHECKED_OPS or origin == "import"
                or self.memory.vectors.deferring or self.memory.database.writing
                or getattr(embedder, "query_prefix", "") != getattr(embedder, "passage_prefix", "")):
            return {}
        if self.conflict_mode() == contradictions.CHECKABLE:
            try:
                conn = self.memory.database.read()
                with conn:
                    names = list(dict.fromkeys(name for name, _ in texts))
                    if not checks.possible_before(conn, texts, reads.ids_by_names(conn, names)):
                        return None
            except (DatabaseClosedError, DatabaseUnavailableError, StoreBusyError):
                raise
            except (ConflictError, ValidationError):
                pass  # a name the write itself refuses: it says why
            except Exception:
                log.exception("reading a write's texts for its check failed; they are encoded and checked")
        try:
            return {key: np.asarray(embedder.embed_query(observation_passage(*key)), dtype=np.float32)
                    for key in dict.fromkeys(texts)}
        except Exception:
            log.exception("encoding a write's texts failed; they are embedded in the background")
            return {}

    def checked(self, txn: WriteTransaction, op: str, origin: str, body: Callable[[WriteTransaction], Any],
                 vectors: checks.Vectors | None) -> Any:
        """Run ``body`` and check the observations it added for contradictions (writes that add observations, with
        a model in use): in this transaction those whose texts were embedded beforehand (``vectors``;
        :func:`~limbic.core.service.conflict_checks.check_written`, in a savepoint: a failing check never fails
        the write), the others queued — an import's all of them, checked in batches once its vectors land
        (:meth:`check_conflicts`), so a memory gives the same warnings however it arrived. ``vectors`` ``None``:
        no text could conflict before the write began; only those that could now are queued."""
        if op not in checks.CHECKED_OPS or self.memory.embedder is None:
            return body(txn)
        newest = checks.newest_observation(txn)
        result = body(txn)
        unchecked: list[int] | None = None
        if vectors is None:
            try:
                with self.memory.database.maintenance():
                    unchecked = checks.possible_written(txn, newest)
            except (DatabaseClosedError, DatabaseUnavailableError, StoreBusyError):  # an outage fails the write
                raise
            except Exception:
                log.exception("reading a write's texts for its check failed; its observations are queued")
        elif vectors:
            model = self.memory.embedder.name
            try:
                with self.memory.database.maintenance():
                    unchecked = checks.check_written(txn, newest, vectors, model, self.conflict_mode(),
                                                     lambda ids: self.memory.index.observation_vectors(model, ids))
            except (DatabaseClosedError, DatabaseUnavailableError, StoreBusyError):
                raise
            except Exception:
                log.exception("the contradiction check of a write failed; its observations are queued")
        checks.queue_new(txn, newest, unchecked)
        return result

    def conflict_mode(self) -> str:
        """The contradiction detector's mode: ``checkable`` (default) or ``similarity`` (mememory's rule)."""
        mode = self.memory.database.get_setting(checks.MODE_KEY)
        return mode if mode in contradictions.MODES else contradictions.CHECKABLE

    def set_conflict_mode(self, mode: str, *, origin: str | None = None) -> None:
        """Choose the detector's mode for the checks from now on. Raises ValidationError for an unknown mode."""
        if mode not in contradictions.MODES:
            raise ValidationError(f"unknown contradiction mode {mode!r}; use one of {', '.join(contradictions.MODES)}")
        self.memory.write("save_setting", origin, lambda txn: put_setting(txn.conn, checks.MODE_KEY, mode))

    def check_conflicts(self) -> int:
        """Check the queued observations whose vectors have landed now (also run after every landing step);
        returns the conflicts found. Without a model, nothing is checked."""
        if self.memory.embedder is None:
            return 0
        model = self.memory.embedder.name
        return checks.run_checks(self.memory.database, self.memory.write, model, self.conflict_mode(),
                                 lambda ids: self.memory.index.observation_vectors(model, ids))

    def after_land(self, _entity_ids: list[int]) -> None:
        try:
            self.check_conflicts()
        except (DatabaseClosedError, DatabaseUnavailableError, StoreBusyError):  # checked at the next landing
            pass
        except Exception:
            log.exception("the contradiction check failed; its observations stay queued")

    def conflicts_of(self, items: Sequence[tuple[str, Sequence[str]]]) -> tuple[list[ConflictRow], int]:
        """The open conflicts of the observations ``items`` (``(entity name, contents)``, as ``add_observations``
        returns them) and how many of them are still waiting for the check. Those still queued are checked at
        once, their texts embedded here when their vectors have not landed (a short text takes a few
        milliseconds with MiniLM), so a write returns its conflicts; an observation with many neighbours still
        without vectors is checked again when they land. Without a model nothing is checked."""
        conn = self.memory.database.read()
        entity_ids = reads.ids_by_names(conn, [name for name, _ in items])  # in the call's project view
        ids = [i for name, contents in items if name in entity_ids
               for i in reads.observation_ids(conn, entity_ids[name], contents)]
        pending, found = conflicts.queued_and_found(conn, ids)
        if pending and self.memory.embedder is not None:
            model = self.memory.embedder.name
            checks.check_now(self.memory.database, self.memory.write, model, self.conflict_mode(), pending, self.memory.embedder.embed,
                             lambda held: self.memory.index.observation_vectors(model, held))
            pending, found = conflicts.queued_and_found(self.memory.database.read(), ids)
        return [c for c in found if c.resolved_at is None], len(pending)

    def newest_observation(self) -> int:
        """The highest observation id now (0 in an empty memory): what :meth:`conflicts_since` counts from."""
        return conflicts.newest_observation(self.memory.database.read())

    def conflicts_since(self, after: int) -> int:
        """The open conflicts raised by observations written after ``after`` (:meth:`newest_observation` taken
        before an import: what the import's check found, with what others wrote meanwhile)."""
        return conflicts.open_since(self.memory.database.read(), after, time.time())

    def open_conflicts(self, limit: int = -1) -> tuple[int, list[ConflictRow]]:
        """The number of open conflicts and the newest ``limit`` (all with -1), both observations current; in a
        call bound to a project, those whose two observations it sees."""
        conn = self.memory.database.read()
        if scope.current() is None:
            return conflicts.open_rows(conn, time.time(), limit)
        found = conflicts.open_rows(conn, time.time())[1]
        shown = scope.visible_observations(conn, [i for c in found for i in (c.observation_id, c.other_id)])
        found = [c for c in found if c.observation_id in shown and c.other_id in shown]
        return len(found), found if limit < 0 else found[:limit]

    def conflict(self, conflict_id: int) -> ConflictRow:
        """One stored conflict (open or settled). Raises NotFoundError when there is none (settled by deleting one
        of its observations, or never found)."""
        conn = self.memory.database.read()
        row = conflicts.by_id(conn, conflict_id)
        if row is None or not _in_view(conn, row):
            raise NotFoundError(f"no conflict {conflict_id}")
        return row

    def why_not_open(self, conflict_id: int) -> str | None:
        """Why the conflict ``conflict_id`` cannot be settled, in one line for a person, or ``None`` while it is open:
        this memory has no such conflict (never reported, or one of its observations was deleted since); it is
        about another project's memories (a call bound to a project); it was settled already (how, when, by
        whom: the decision that settled it); or one of its observations was superseded or expired since."""
        conn = self.memory.database.read()
        row = conflicts.by_id(conn, conflict_id)
        if row is None:
            return "this memory has no such conflict (never reported, or one of its observations was deleted since)"
        if not _in_view(conn, row):
            return f"it is about another project's memories (this memory is served for project {scope.current()!r})"
        if row.resolved_at is not None:
            decided = decision_log.first_made_since(  # the settling edit, as the log's JSON names it
                conn, "contradiction", row.resolved_at, f'"conflict_id":{row.id},')
            by = "" if decided is None else f" by {origin_label(decided.origin)} (decision {decided.id})"
            how = (row.resolution or "settled").replace("_", " ")
            return f"it was settled already ({how}) at {iso(float(int(row.resolved_at)))}{by}"
        terms = reads.observation_terms(conn, [row.other_id, row.observation_id])
        now = time.time()
        for oid, entity, content in ((row.other_id, row.other_entity, row.other_content),
                                     (row.observation_id, row.entity, row.content)):
            superseded_at, expires_at = terms.get(oid, (None, None))
            shown = content if len(content) <= 80 else content[:79] + "…"
            if superseded_at is not None:
                return f"the observation “{shown}” of {entity!r} was superseded since"
            if expires_at is not None and expires_at <= now:
                return f"the observation “{shown}” of {entity!r} has expired"
        return None

    def settle_conflict(self, conflict_id: int, option: str, *, origin: str | None = None) -> None:
        """Settle an open conflict with ``option`` (:data:`~limbic.core.lifecycle.contradictions.OPTIONS`) as one
        transaction: ``keep_both``; ``update_old`` (the old observation takes the new text, the new one goes);
        ``supersede`` (the old one is superseded by the new one, weight 0.1); ``delete_old``. Use the undoable
        edit of :mod:`limbic.core.service.lifecycle_edits` to be able to take it back.

        Raises NotFoundError when the conflict is not open, ValidationError for an unknown option."""
        if option not in contradictions.OPTIONS:
            raise ValidationError(f"unknown option {option!r}; use one of {', '.join(contradictions.OPTIONS)}")

        def body(txn: WriteTransaction) -> None:
            row = conflicts.by_id(txn.conn, conflict_id)
            if row is None or row.resolved_at is not None or not _in_view(txn.conn, row):
                raise NotFoundError(f"no open conflict {conflict_id}")
            touched = conflicts.resolve(txn.conn, row, option, time.time(), confidence.SUPERSEDED_WEIGHT)
            conflicts.settle(txn.conn, conflict_id, option, time.time())
            txn.touch(touched)
            self.memory.reindex(txn, touched)

        self.memory.write("settle_conflict", origin, body)

    def restore_conflict(self, row: ConflictRow, *, origin: str | None = None) -> None:
        """Write a recorded conflict back exactly (undo of settling it)."""
        self.memory.write("restore_conflict", origin, lambda txn: conflicts.put(txn.conn, row))

    def retention_params(self) -> RetentionParams:
        """The saved forget/promote settings (Mnemex's defaults when none were saved)."""
        return forgetting.load_params(self.memory.database)

    def save_retention_params(self, params: RetentionParams, *, origin: str | None = None) -> None:
        """Save the forget/promote settings for every client of this database."""
        self.memory.write("save_setting", origin, lambda txn: put_setting(txn.conn, forgetting.PARAMS_KEY, params.to_json()))

    def retention(self, params: RetentionParams | None = None, *, now: float | None = None) -> list[Retention]:
        """Every entity's retention score and suggestion (keep / forget / promote) at ``now`` (UTC seconds), with
        ``params`` (default the saved ones); :mod:`limbic.core.service.forgetting`. Reading it records nothing."""
        found = forgetting.review(self.memory.database, params or self.retention_params(), time.time() if now is None else now)
        shown = set(scope.visible(self.memory.database.read(), [r.entity_id for r in found]))  # a bound call's view
        return [r for r in found if r.entity_id in shown]

    def forecast(self, at: float, params: RetentionParams | None = None, *, now: float | None = None,
                 archived: bool = False) -> Forecast:
        """What the lifecycle rules would propose for forgetting at ``at`` (UTC seconds, ``now`` or later) if nothing
        is used or written from ``now`` (default the present) on, in a bound call's view; ``at == now`` is what
        they propose now (:func:`limbic.core.service.forgetting.forecast`). Reading it records nothing.

        Raises:
            ValidationError: ``at`` is before ``now``.
        """
        found = forgetting.forecast(self.memory.database, params or self.retention_params(), at,
                                   time.time() if now is None else now, archived=archived)
        shown = set(scope.visible(self.memory.database.read(), [p.retention.entity_id for p in found.proposed]
                                  + [r.entity_id for r in found.held]))
        return Forecast(found.at, found.now, [p for p in found.proposed if p.retention.entity_id in shown],
                        [r for r in found.held if r.entity_id in shown])

    def set_pinned(self, names: Sequence[str], pinned: bool, *, origin: str | None = None) -> list[Entity]:
        """Pin (promote) or unpin entities, one transaction. Raises NotFoundError naming unknown entities."""
        names = [check.name(n) for n in names]

        def body(txn: WriteTransaction) -> list[Entity]:
            ids = list(writes.require_ids(txn.conn, names).values())
            retention_rows.set_pinned(txn.conn, ids, time.time() if pinned else None)
            txn.touch(ids)
            return reads.entities_by_ids(txn.conn, ids)

        return self.memory.write("set_pinned", origin, body)

    def set_strength(self, names: Sequence[str], value: float, *, origin: str | None = None) -> list[Entity]:
        """Set the strength (0..2, the retention score's multiplier) of entities, one transaction.
        Raises ValidationError for a value outside 0..2, NotFoundError naming unknown entities."""
        names = [check.name(n) for n in names]
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 2.0:
            raise ValidationError(f"strength must be a number from 0 to 2, got {value!r}")

        def body(txn: WriteTransaction) -> list[Entity]:
            ids = list(writes.require_ids(txn.conn, names).values())
            retention_rows.set_strength(txn.conn, ids, float(value))
            txn.touch(ids)
            return reads.entities_by_ids(txn.conn, ids)

        return self.memory.write("set_strength", origin, body)

    def graph_arrays_as_of(self, at: float) -> GraphArrays:
        """Every current entity as :meth:`graph_arrays` gives them, with the relations active at ``at`` (UTC
        seconds): the time slider draws these over the live layout and hides the entities created later."""
        conn = self.memory.database.read()
        with conn:
            rows = graph.graph_rows(conn)
            relations = views.relation_rows_as_of(conn, at)
        return build_graph_arrays(rows.entities, relations, rows.change_id)

    def written_between(self, start: float, end: float) -> list[str]:
        """Entities created or given an observation between ``start`` and ``end`` (UTC seconds)."""
        return views.written_between(self.memory.database.read(), start, end)

    def history_span(self) -> tuple[float, float] | None:
        """The first and last write time of the memory (UTC seconds), ``None`` when it is empty."""
        return views.history_span(self.memory.database.read())

    def sweep_expired(self, *, now: float | None = None, origin: str | None = None) -> SweepReport:
        """Take the text of every observation expired by ``now`` (UTC seconds, default the present) out of the
        full-text rows and the vectors: its entities are re-indexed in one transaction (docs/lifecycle.md
        "Expiry"). The observations stay, shown as expired. Readers already leave them out before this runs."""
        at = check.timestamp(now, "sweep time") or time.time()
        return self.memory.write(SWEEP_OP, origin or "system", lambda txn: sweep(txn, at, self.memory.reindex))

    def set_observation_terms(self, entity: str, content: str, *, expires_at: float | None, weight: float,
                              origin: str | None = None) -> Observation:
        """Set when the observation ``content`` of ``entity`` expires (UTC seconds, ``None``: never) and its weight
        (its confidence, 0.1..1.0; docs/lifecycle.md "Confidence"), as one transaction; the entity is re-indexed
        (an expiry in the past takes its text out of the indexes at once).

        Raises NotFoundError for an unknown entity or text, ValidationError for a weight outside 0.1..1.0."""
        entity, content = check.name(entity), check.observation(content)
        expires_at = check.timestamp(expires_at, "expiresAt")
        weight = confidence.checked_weight(weight)

        def body(txn: WriteTransaction) -> Observation:
            eid = writes.require_ids(txn.conn, [entity])[entity]
            oid = writes.observation_id(txn.conn, eid, content, live_only=False)
            if oid is None:
                raise NotFoundError(f"{entity!r} has no observation {content[:80]!r}", [content])
            writes.set_observation_terms(txn.conn, oid, expires_at, weight)
            writes.touch_entity(txn.conn, [eid], time.time())
            txn.touch(eid)
            self.memory.reindex(txn, [eid])
            return next(o for o in reads.observations_by_entity(txn.conn, [eid])[eid] if o.id == oid)

        return self.memory.write("set_observation_terms", origin, body)

    def expired_observations(self, *, now: float | None = None) -> int:
        """Live observations past their expiry at ``now`` (UTC seconds, default the present)."""
        return expiry.expired_count(self.memory.database.read(), time.time() if now is None else now)

    def start_sweeps(self, interval: float | None = None) -> None:
        """Sweep expired text in the background every ``interval`` seconds (the app, the MCP server)."""
        if self._sweeper is None:
            self._sweeper = ExpirySweeper(self.memory.database, lambda: self.sweep_expired(),
                                          **({} if interval is None else {"interval": interval}))

    def stop_sweeps(self) -> None:
        if self._sweeper is not None:
            self._sweeper.close()
            self._sweeper = None


def _in_view(conn: Connection, row: ConflictRow) -> bool:
    """Whether the call's project view holds both observations of the conflict ``row`` (always when unbound)."""
    return len(scope.visible_observations(conn, [row.observation_id, row.other_id])) == 2
