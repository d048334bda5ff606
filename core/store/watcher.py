"""Following commits made by other processes, on either engine: :class:`ChangeWatcher` polls a SQLite file,
:class:`ChangeListener` listens on PostgreSQL (``LISTEN``). Both read the ``changes`` log past the last id they
delivered and pass on what is new, oldest first; the service's :class:`~limbic.core.service.changes.ChangeFeed`
de-duplicates and fans out, following the memory at its database's ``listen_address`` when it has one."""

from limbic.core.store.postgres.listen import ChangeListener
from limbic.core.store.sqlite.watcher import WATCHER_THREAD_NAME, ChangeWatcher

__all__ = ["WATCHER_THREAD_NAME", "ChangeListener", "ChangeWatcher"]
