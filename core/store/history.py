"""Reading the ``changes`` log for people: who changed what, newest first (the editor's *History*,
``limbic changes``). The log itself is written by :meth:`limbic.core.store.database.Database.write`.
"""

from __future__ import annotations

import json
from typing import Any

from limbic.core.models import Changes
from limbic.core.store.connection import Connection
from limbic.core.store.schema import LANDED_OP

_COLUMNS = "SELECT id, origin, op, entity_ids, at FROM changes"


def _changes(rows: Any) -> list[Changes]:
    return [Changes(int(r[0]), str(r[1]), str(r[2]), frozenset(json.loads(r[3])), float(r[4])) for r in rows]


def recent_changes(conn: Connection, limit: int) -> list[Changes]:
    """The last ``limit`` logged changes, newest first (steps that only landed vectors left out)."""
    return _changes(conn.execute(f"{_COLUMNS} WHERE op != ? ORDER BY id DESC LIMIT ?", (LANDED_OP, limit)))


def entity_changes(conn: Connection, entity_id: int, limit: int) -> list[Changes]:
    """The last ``limit`` logged changes that touched the entity ``entity_id``, newest first (a full scan of
    the log, testing each row's entity ids)."""
    return _changes(conn.execute(
        f"{_COLUMNS} WHERE op != ? AND {conn.ops.json_ids_contain('changes.entity_ids', '?')} "
        "ORDER BY id DESC LIMIT ?", (LANDED_OP, entity_id, limit)))
