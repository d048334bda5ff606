"""The store: every SQL statement of Limbic Studio, behind one connection type (:class:`Connection`) whichever
backend holds the memory (SQLite via apsw, PostgreSQL via psycopg; docs/architecture.md "Storage backends")."""

from limbic.core.store.connection import Connection, Cursor

__all__ = ["Connection", "Cursor"]
