"""What ``search_semantic`` answers, built without the MCP SDK: the tool and the app's *What the agent sees*
build it here, so the two can never differ.

:func:`search_answer` turns a ``SearchOutcome`` (or a re-ranked list of its results) into the tool's structured
answer; :func:`pretty` is the text the tool sends (JSON indented by 2 spaces, byte for byte the reference
server's ``JSON.stringify(value, null, 2)``); :func:`estimate_tokens` is what that text costs an agent's context.
Only ``pydantic_core`` is imported (no pydantic models, no SDK), so the desktop app can use it at start-up.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import pydantic_core

DEFAULT_SEARCH_LIMIT = 10  # results of a search_semantic call that names no limit
BYTES_PER_TOKEN = 4  # the usual estimate for English text and JSON in an LLM's tokenizer (OpenAI's rule of thumb)


def pretty(value: Any) -> str:
    """JSON indented by 2 spaces, non-ASCII kept: byte for byte ``JSON.stringify(value, null, 2)`` of the
    reference server (pydantic-core's encoder; the standard library's is 5× slower with an indent)."""
    return pydantic_core.to_json(value, indent=2).decode("utf-8")


def estimate_tokens(text: str) -> int:
    """Tokens ``text`` costs in an agent's context, estimated as UTF-8 bytes / :data:`BYTES_PER_TOKEN`
    (rounded up). An estimate: the exact count depends on the agent's own tokenizer."""
    return math.ceil(len(text.encode("utf-8")) / BYTES_PER_TOKEN)


def trim_observations(item: dict[str, Any], query: str, keep: int | None) -> dict[str, Any]:
    """``item`` (an entity or search result with ``observations``) with at most ``keep`` observations: those
    sharing the most words with ``query`` (ties: stored order), shown in stored order, plus
    ``omittedObservations`` = how many were left out. ``keep`` None: ``item`` unchanged."""
    observations = item["observations"]
    if keep is None or len(observations) <= keep:
        return item
    words = set(re.findall(r"\w+", query.lower()))
    shared = [len(words & set(re.findall(r"\w+", text.lower()))) for text in observations]
    chosen = sorted(sorted(range(len(observations)), key=lambda i: -shared[i])[:keep])
    return {**item, "observations": [observations[i] for i in chosen],
            "omittedObservations": len(observations) - keep}


def search_answer(outcome: Any, query: str, model: str | None, *, results: Sequence[Any] | None = None,
                  max_observations: int | None = None) -> dict[str, Any]:
    """The structured answer of ``search_semantic`` for ``outcome`` (a ``SearchOutcome``).

    ``model`` is the embedding model's name (left out of the answer in ``fts_only`` mode); ``results``
    replaces ``outcome.results`` (the same candidates re-ranked with other parameters); ``max_observations``
    trims each result's observations (:func:`trim_observations`). Keys as ``SearchOut`` documents them:
    ``results``, ``mode``, ``model``, ``timings`` (ms), ``searchId``, and ``pendingVectors``, ``dates``, ``knn``
    only when set.
    """
    shown = outcome.results if results is None else results
    found: dict[str, Any] = {
        "results": [trim_observations(r.to_dict(), query, max_observations) for r in shown],
        "mode": outcome.mode, "model": model if outcome.mode != "fts_only" else None,
        "timings": dict(outcome.timings), "searchId": outcome.search_id,
    }
    if outcome.pending_vectors:
        found["pendingVectors"] = outcome.pending_vectors
    if outcome.dates:
        found["dates"] = list(outcome.dates)
    if outcome.knn:
        found["knn"] = outcome.knn
    return found
