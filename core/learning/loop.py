"""``LearningLoop``: the learning loop of one database, used through ``MemoryService.learning``.

It owns the shadow A/B settings, gives each logged search its id and A/B group, reads the search log
back as a :class:`~limbic.core.learning.replay.ReplayHistory`, measures parameters on it, runs the
grid search, and applies tuned parameters by EMA — each application recorded (when, old, new, gain)
and undoable (mcp-memory "The Limbic System", "Auto-Tuning"). Every write is one transaction through the
service's writer, so subscribers see the saved parameters change like any other edit.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from limbic.core.errors import NotFoundError
from limbic.core.learning import tuner
from limbic.core.learning.replay import Quality, ReplayHistory
from limbic.core.learning.shadow import SETTINGS_KEY, ShadowConfig, assign_treatment
from limbic.core.models import iso
from limbic.core.search.params import ScoringParams
from limbic.core.search.presets import PRESETS
from limbic.core.store import Connection, search_log, tuning
from limbic.core.store.database import Database
from limbic.core.store.schema import put_setting

PARAMS_KEY = "scoring_params"
SEARCH_ID_BITS = 47  # random ids, exact in JSON numbers and unlikely to collide among 10,000 kept searches

Writer = Callable[[str, str | None, Callable[[Any], Any]], Any]


@dataclass(frozen=True, slots=True)
class Application:
    """One recorded change of the saved parameters by the tuner: id, when (UTC seconds), origin, kind
    (``tune`` / ``set`` / ``undo``), the parameters before and after, the measured NDCG gain and the
    number of labelled searches it was measured on, and when it was undone (``None`` if not)."""

    id: int
    at: float
    origin: str
    kind: str
    old: ScoringParams
    new: ScoringParams
    gain: float | None
    events: int
    undone_at: float | None


class LearningLoop:
    """See the module docstring. ``write(op, origin, body)`` is the service's transaction runner."""

    def __init__(self, database: Database, write: Writer) -> None:
        self._database = database
        self._write = write
        self._config: ShadowConfig | None = None
        self._lock = threading.Lock()

    # --- shadow A/B ----------------------------------------------------------------------------

    def config(self) -> ShadowConfig:
        """The saved shadow A/B settings (defaults when none were saved)."""
        with self._lock:
            if self._config is None:
                text = self._database.get_setting(SETTINGS_KEY)
                self._config = ShadowConfig.from_json(text) if text else ShadowConfig()
            return self._config

    def save_config(self, config: ShadowConfig, *, origin: str | None = None) -> None:
        """Persist ``config`` for every client of this database."""
        def body(txn: Any) -> None:
            put_setting(txn.conn, SETTINGS_KEY, config.to_json())

        self._write("save_shadow_config", origin, body)
        with self._lock:
            self._config = config

    @staticmethod
    def new_search_id() -> int:
        return secrets.randbelow(2**SEARCH_ID_BITS - 1) + 1

    def treatment(self, query: str) -> str:
        """The A/B group of a new search for ``query`` (``limbic`` or ``baseline``)."""
        return assign_treatment(query, self.config())

    @staticmethod
    def preset_name(params: ScoringParams) -> str | None:
        """The name of the preset equal to ``params`` (``default`` first), or ``None``."""
        return next((name for name, value in PRESETS.items() if value == params), None)

    def counts(self) -> dict[str, int]:
        """Logged searches (all, per group), labelled searches and labels."""
        return search_log.log_counts(self._database.read())

    def clear(self) -> int:
        """Delete the whole search log and its labels (``limbic history clear``); returns the searches deleted.

        Access counts, access days, co-occurrences and impression totals are kept.
        """
        with self._database.maintenance() as conn:
            return search_log.clear(conn)

    def require_search(self, conn: Connection, search_id: int) -> None:
        """Raise NotFoundError when no logged search has this id."""
        if not search_log.search_exists(conn, search_id):
            raise NotFoundError(f"unknown searchId {search_id} (never logged, cleared, or past retention)",
                                [str(search_id)])

    # --- measuring and tuning ------------------------------------------------------------------

    def history(self, limit: int | None = None) -> ReplayHistory:
        """The labelled logged searches, newest first (at most ``limit``), unpacked for replay."""
        return ReplayHistory.from_log(search_log.logged_searches(self._database.read(), limit=limit))

    def analyze(self, params: ScoringParams, saved: ScoringParams, k: int = 10,
                history: ReplayHistory | None = None) -> dict[str, Quality]:
        """Quality of ``params``, of the ``saved`` parameters and of the cosine-only and BM25-only orders."""
        history = history if history is not None else self.history()
        return {"params": history.evaluate(params, k), "saved": history.evaluate(saved, k),
                "cosine": history.evaluate(k=k, branch="knn"), "bm25": history.evaluate(k=k, branch="bm25")}

    def tune(self, current: ScoringParams, grid: Mapping[str, Sequence[float]] | None = None, k: int = 10,
             progress: Callable[[int, int], None] | None = None,
             history: ReplayHistory | None = None) -> tuner.TuneResult:
        """Grid search on the log (:func:`limbic.core.learning.tuner.grid_search`); writes nothing.

        Raises NotEnoughFeedbackError with fewer than 50 labelled searches."""
        history = history if history is not None else self.history()
        return tuner.grid_search(history, current, grid, k, progress)

    def apply(self, current: ScoringParams, target: Mapping[str, float], *, kind: str, gain: float | None,
              events: int, origin: str | None = None) -> ScoringParams:
        """Save the EMA step from ``current`` towards ``target`` (10 % new) and record the application.

        Returns the saved parameters. One transaction: the parameters and the record, or neither.
        """
        new = tuner.blend(current, target)

        def body(txn: Any) -> None:
            put_setting(txn.conn, PARAMS_KEY, new.to_json())
            tuning.record(txn.conn, at=time.time(), origin=origin or "cli", kind=kind, old_params=current.to_json(),
                          new_params=new.to_json(), gain=gain, events=events)

        self._write("apply_tuning", origin, body)
        return new

    def applications(self, limit: int = 20) -> list[Application]:
        """The latest recorded applications, newest first."""
        return _applications(self._database.read(), limit)

    def undo(self, *, origin: str | None = None) -> Application:
        """Restore the parameters saved before the latest application not undone yet; the undo is recorded too.

        Returns the undone application. Raises NotFoundError when there is nothing to undo.
        """
        def body(txn: Any) -> Application:
            latest = tuning.last_undoable(txn.conn)
            if latest is None:
                raise NotFoundError("no tuning application to undo")
            now = time.time()
            tuning.mark_undone(txn.conn, latest, now)
            done = _applications(txn.conn, 1, latest)[0]
            put_setting(txn.conn, PARAMS_KEY, done.old.to_json())
            tuning.record(txn.conn, at=now, origin=origin or "cli", kind="undo", old_params=done.new.to_json(),
                          new_params=done.old.to_json(), gain=None, events=0)
            return done

        return self._write("undo_tuning", origin, body)

    def state(self, saved: ScoringParams) -> dict[str, Any]:
        """The tuning state as plain JSON values: saved parameters, shadow settings, event counts, last application."""
        last = self.applications(1)
        counts = self.counts()
        return {
            "savedParams": saved.to_dict(),
            "shadow": json.loads(self.config().to_json()),
            "counts": counts,
            "minimumEvents": tuner.MIN_EVENTS,
            "eventsNeeded": max(0, tuner.MIN_EVENTS - counts["labelled_searches"]),
            "lastTuning": None if not last else {
                "at": iso(last[0].at), "kind": last[0].kind, "origin": last[0].origin, "gain": last[0].gain,
                "events": last[0].events, "undone": last[0].undone_at is not None,
                "old": last[0].old.to_dict(), "new": last[0].new.to_dict()},
        }


def _applications(conn: Connection, limit: int, application_id: int | None = None) -> list[Application]:
    rows = tuning.applications(conn, limit, application_id)
    return [Application(r[0], r[1], r[2], r[3], ScoringParams.from_json(r[4]), ScoringParams.from_json(r[5]),
                        r[6], r[7], r[8]) for r in rows]
