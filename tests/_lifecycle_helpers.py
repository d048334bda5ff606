"""Memories as they stand some time after they were written: the change log moved back, as if the writes had
happened then (the lifecycle reads when a memory was written here from its log)."""

from __future__ import annotations

import time

DAY = 86_400.0


def written_ago(service, days: float, since_change: int = 0) -> None:
    """Log every change after ``since_change`` ``days`` days earlier than it was made."""
    with service.database.maintenance() as conn:
        conn.execute("UPDATE changes SET at = at - ? WHERE id > ?", (days * DAY, since_change))


def aged_sample(service, days: float) -> None:
    """Load the sample memory (as the app does on the first run) into the empty ``service`` as if ``days`` days ago:
    its usage history ends within the week before then, and nobody used or wrote anything since."""
    from limbic.core.io.sample import seed_sample_graph

    seed_sample_graph(service, now=time.time() - days * DAY)
    service.usage.wait_for_signals()
    written_ago(service, days)
