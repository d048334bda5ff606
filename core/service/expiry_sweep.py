"""The sweep of expired text: run by ``limbic gc`` and, in the app and the MCP server, every few minutes.

Readers never match an observation after its expiry (docs/lifecycle.md "Expiry"); the sweep takes the
expired text out of the full-text rows and the vectors for good: the entities of the observations that
expired since the last sweep are re-indexed in one transaction (their passage vectors are made again
without that text). The rows stay, shown as expired, until deleted.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from limbic.core.errors import DatabaseClosedError, DatabaseUnavailableError, StoreBusyError
from limbic.core.store import expiry, reads
from limbic.core.store.database import Database, WriteTransaction

log = logging.getLogger(__name__)

SWEEP_SECONDS = 300.0
"""How often the background sweep looks for observations that expired (the app, ``limbic mcp``)."""

SWEEP_OP = "sweep_expired"


@dataclass(frozen=True, slots=True)
class SweepReport:
    """What one sweep did: ``entities`` re-indexed without the text of the observations that expired since
    the last sweep; ``expired`` live observations past their expiry in all (kept, shown as expired);
    ``at`` the time swept to (UTC seconds)."""

    entities: tuple[str, ...]
    expired: int
    at: float


def sweep(txn: WriteTransaction, now: float, reindex: Callable[[WriteTransaction, list[int]], None]) -> SweepReport:
    """Inside one write transaction: re-index every entity whose indexed text holds an observation expired
    by ``now`` (UTC seconds) and move the watermark to ``now``."""
    ids = expiry.begin_sweep(txn.conn, now)
    names = reads.names_by_ids(txn.conn, ids)
    if ids:
        txn.touch(ids)
        reindex(txn, ids)
    return SweepReport(tuple(names), expiry.expired_count(txn.conn, now), now)


class ExpirySweeper:
    """Runs ``run_sweep()`` on a daemon thread every ``interval`` seconds while something is due.

    Looking is one indexed read (:func:`~limbic.core.store.expiry.unswept_entities`); the sweep itself writes
    only when an observation expired since the last one. Errors are logged; the next round tries again.
    """

    def __init__(self, database: Database, run_sweep: Callable[[], SweepReport],
                 interval: float = SWEEP_SECONDS) -> None:
        self._database = database
        self._run = run_sweep
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="limbic-expiry-sweep", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                if expiry.unswept_entities(self._database.read(), time.time()):
                    self._run()
            except (DatabaseClosedError, DatabaseUnavailableError, StoreBusyError):  # the database logs an outage
                continue
            except Exception:
                log.exception("sweeping expired observations failed; trying again later")

    def close(self) -> None:
        """Stop the thread (waits for a sweep in flight)."""
        self._stop.set()
        self._thread.join()
