"""Ranking quality measured in the product: ``limbic eval locomo`` (docs/evaluation.md).

:mod:`.locomo` reads a LoCoMo-format file and maps it to entities, :mod:`.metrics` holds Recall@K
and NDCG@K, :mod:`.scratch` builds and caches one embedded scratch database per conversation,
:mod:`.runner` asks the questions through ``MemoryService.search.query`` (fresh or replayed usage) and
:mod:`.report` formats the outcome as a table or one JSON document.
"""
