"""The service layer: :class:`MemoryService`, the one API of the memory graph (:mod:`.memory`)."""

from limbic.core.service.memory import MemoryService

__all__ = ["MemoryService"]
