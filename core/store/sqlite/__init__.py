"""The SQLite engine of the store: a memory in one file, through apsw with sqlite-vec loaded
(:class:`~limbic.core.store.sqlite.database.SqliteDatabase`); what SQLite does its own way is
:class:`~limbic.core.store.sqlite.operations.SqliteOperations`."""
