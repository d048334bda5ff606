"""The store: every SQL statement of Limbic Studio, behind one database interface
(:class:`~limbic.core.store.database.Database`) and one connection type (:class:`Connection`) whichever engine
holds the memory (``sqlite/``: SQLite via apsw; ``postgres/``: PostgreSQL via psycopg; docs/architecture.md
"Storage backends")."""

from limbic.core.store.connection import Connection, Cursor

__all__ = ["Connection", "Cursor"]
