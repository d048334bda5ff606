"""Statements in one round trip on a psycopg connection, with the recovery psycopg leaves to its caller."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.pq import PipelineStatus


@contextmanager
def pipeline(raw: psycopg.Connection[Any]) -> Iterator[None]:
    """``raw.pipeline()``: the statements of the block in one round trip. When the server ends the connection while
    results are still due, psycopg cannot leave pipeline mode ("cannot exit pipeline mode while busy") and the
    connection is not marked broken: every later statement, ``ROLLBACK`` included, would fail the same way. Such a
    connection is closed here, so that it counts as lost (:func:`~limbic.core.store.postgres.connection.is_lost`) and is replaced."""
    try:
        with raw.pipeline():
            yield
    except psycopg.Error:
        if not raw.closed and raw.pgconn.pipeline_status != PipelineStatus.OFF:
            raw.close()
        raise
