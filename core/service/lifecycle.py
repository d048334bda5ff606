"""The lifecycle calls of :class:`~limbic.core.service.MemoryService`: expiry and its sweep, the terms of an
observation (expiry and weight) (docs/lifecycle.md).

A mixin of ``MemoryService``: it uses the service's ``database``, ``origin`` and write path, declared below
for type checking.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from limbic.core import validation as check
from limbic.core.errors import NotFoundError
from limbic.core.lifecycle import confidence
from limbic.core.models import Observation
from limbic.core.service.expiry_sweep import SWEEP_OP, ExpirySweeper, SweepReport, sweep
from limbic.core.store import expiry, reads, writes
from limbic.core.store.database import Database, WriteTransaction

Write = Callable[[str, str | None, Callable[[WriteTransaction], Any]], Any]


class Lifecycle:
    """Expiry of observations (mixed into ``MemoryService``)."""

    database: Database
    origin: str
    _write: Write
    _reindex: Callable[[WriteTransaction, Iterable[int]], None]
    _sweeper: ExpirySweeper | None

    def sweep_expired(self, *, now: float | None = None, origin: str | None = None) -> SweepReport:
        """Take the text of every observation expired by ``now`` (UTC seconds, default the present) out of the
        full-text rows and the vectors: its entities are re-indexed in one transaction (docs/lifecycle.md
        "Expiry"). The observations stay, shown as expired. Readers already leave them out before this runs."""
        at = check.timestamp(now, "sweep time") or time.time()
        return self._write(SWEEP_OP, origin or "system", lambda txn: sweep(txn, at, self._reindex))

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
            txn.conn.execute("UPDATE observations SET expires_at = ?, weight = ? WHERE id = ?", (expires_at, weight, oid))
            writes.touch_entity(txn.conn, [eid], time.time())
            txn.touch(eid)
            self._reindex(txn, [eid])
            return next(o for o in reads.observations_by_entity(txn.conn, [eid])[eid] if o.id == oid)

        return self._write("set_observation_terms", origin, body)

    def expired_observations(self, *, now: float | None = None) -> int:
        """Live observations past their expiry at ``now`` (UTC seconds, default the present)."""
        return expiry.expired_count(self.database.read(), time.time() if now is None else now)

    def _start_sweeps(self, interval: float | None = None) -> None:
        """Sweep expired text in the background every ``interval`` seconds (the app, the MCP server)."""
        if self._sweeper is None:
            self._sweeper = ExpirySweeper(self.database, lambda: self.sweep_expired(),
                                          **({} if interval is None else {"interval": interval}))

    def _stop_sweeps(self) -> None:
        if self._sweeper is not None:
            self._sweeper.close()
            self._sweeper = None
