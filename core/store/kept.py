"""What a person chose to keep as it is (``curation_kept``, schema 12): keys such as ``"observations:12:40"``
(two observations kept apart), ``"orphan:7"`` or ``"split:3"``, each with the time it was kept (UTC seconds)."""

from __future__ import annotations

from limbic.core.store.connection import Connection


def keys(conn: Connection, prefix: str = "") -> frozenset[str]:
    """The kept keys starting with ``prefix``."""
    rows = conn.execute("SELECT key FROM curation_kept WHERE key >= ? AND key < ?", (prefix, prefix + "\U0010ffff"))
    return frozenset(r[0] for r in rows)


def keep(conn: Connection, key: str, at: float) -> bool:
    """Record ``key`` as kept at ``at``; False when it already was."""
    conn.execute("INSERT INTO curation_kept(key, at) VALUES (?, ?) ON CONFLICT DO NOTHING", (key, at))
    return bool(conn.changes())


def forget(conn: Connection, key: str) -> bool:
    """Forget that ``key`` was kept; False when it was not."""
    conn.execute("DELETE FROM curation_kept WHERE key = ?", (key,))
    return bool(conn.changes())
