"""What each way of settling a conflict does to the rows (docs/lifecycle.md "Contradictions"), inside the caller's
write transaction; the service re-indexes the entities returned."""

from __future__ import annotations

from limbic.core.lifecycle.confidence import SUPERSEDED_WEIGHT
from limbic.core.store import Connection
from limbic.core.store.conflicts import ConflictRow


def apply(conn: Connection, row: ConflictRow, option: str, now: float) -> list[int]:
    """Apply ``option`` to the conflict ``row`` (its new observation ``row.observation_id``, the old one
    ``row.other_id``); returns the ids of the entities whose observations changed."""
    owners = dict(conn.execute("SELECT id, entity_id FROM observations WHERE id IN (?, ?)",
                               (row.observation_id, row.other_id)))
    new_owner, old_owner = owners[row.observation_id], owners[row.other_id]
    if option == "delete_old":
        conn.execute("DELETE FROM observations WHERE id = ?", (row.other_id,))
    elif option == "supersede":
        conn.execute("UPDATE observations SET superseded_at = ?, weight = ? WHERE id = ?",
                     (now, SUPERSEDED_WEIGHT, row.other_id))
        if new_owner == old_owner:  # a supersede link stays within one entity
            conn.execute("UPDATE observations SET supersedes = ? WHERE id = ?", (row.other_id, row.observation_id))
    elif option == "update_old":
        if new_owner == old_owner:
            conn.execute("DELETE FROM observations WHERE id = ?", (row.observation_id,))
        else:
            conn.execute("DELETE FROM observations WHERE entity_id = ? AND content = ? AND id != ?",
                         (old_owner, row.content, row.other_id))
        conn.execute("UPDATE observations SET content = ? WHERE id = ?", (row.content, row.other_id))
    if option != "keep_both":
        conn.execute("UPDATE entities SET updated_at = ? WHERE id IN (?, ?)", (now, new_owner, old_owner))
    return sorted({new_owner, old_owner}) if option != "keep_both" else []
