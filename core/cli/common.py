"""Helpers shared by the CLI sub-commands: opening the service and printing JSON."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from limbic.core.service import MemoryService


def open_service(args: argparse.Namespace, origin: str = "cli", *, embedder: Any = "auto",
                 background_vectors: bool = False) -> MemoryService:
    """Open the database named by ``--db`` (default: the embedded default), with the active model if installed.
    ``background_vectors``: see :class:`MemoryService` (one-shot commands embed before they return)."""
    if embedder == "auto":
        return MemoryService.open(getattr(args, "db", None), origin=origin, background_vectors=background_vectors)
    return MemoryService.open(getattr(args, "db", None), embedder=embedder, origin=origin,
                              background_vectors=background_vectors)


def print_json(obj: Any) -> None:
    """Write ``obj`` as indented UTF-8 JSON on stdout."""
    json.dump(obj, sys.stdout, ensure_ascii=False, indent=2, default=str)
    sys.stdout.write("\n")
