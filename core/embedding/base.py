"""The embedder interface every part of the core goes through, and a deterministic test embedder.

Nothing computes a vector except through :class:`Embedder`. The real ONNX model lives in
``limbic.core.embedding.onnx_embedder``; :class:`HashingEmbedder` is a fast, deterministic stand-in
for tests (feature hashing of words and character trigrams), never used by default.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised vectors.

    Attributes:
        name: model name recorded with every stored vector (e.g. ``"all-MiniLM-L6-v2"``).
        dimension: vector length ``d`` (384 for MiniLM).
        max_tokens: the model's maximum sequence length in tokens (256 for MiniLM).
        query_prefix / passage_prefix: strings prepended to queries / stored passages ("" if none).
    """

    name: str
    dimension: int
    max_tokens: int
    query_prefix: str
    passage_prefix: str

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed passages (the passage prefix is added here). Returns ``(n, d) float32``, rows L2-normalised."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query (the query prefix is added here). Returns ``(d,) float32``, L2-normalised."""
        ...

    def count_tokens(self, text: str) -> int:
        """Number of model tokens of ``text`` without special tokens."""
        ...


def holding_memory(embedder: Embedder) -> AbstractContextManager[object]:
    """A block over many large embedding calls, after which the embedder gives its working memory back once
    (``OnnxEmbedder.holding_memory``); a no-op block for embedders that hold none (:class:`HashingEmbedder`)."""
    hold = getattr(embedder, "holding_memory", None)
    return hold() if callable(hold) else contextlib.nullcontext()


_WORD = re.compile(r"\w+", re.UNICODE)


class HashingEmbedder:
    """Deterministic test embedder: hashed bag of lower-cased words and character trigrams.

    Texts sharing words get similar vectors, so lexical tests behave sensibly; paraphrases without
    shared words do not (that is what the real model is for). ``(n, dimension) float32``.
    """

    query_prefix = ""
    passage_prefix = ""

    def __init__(self, dimension: int = 384, name: str = "hashing-test", max_tokens: int = 256) -> None:
        self.dimension = dimension
        self.name = name
        self.max_tokens = max_tokens
        self.calls = 0

    def _features(self, text: str) -> list[str]:
        words = [w.lower() for w in _WORD.findall(text)]
        grams = [w[i : i + 3] for w in words if len(w) > 3 for i in range(len(w) - 2)]
        return words + grams

    def _vector(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dimension, dtype=np.float32)
        for feature in self._features(text):
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            index = int.from_bytes(digest[:4], "little") % self.dimension
            sign = 1.0 if digest[4] & 1 else -1.0
            vec[index] += sign
        norm = float(np.linalg.norm(vec))
        if norm == 0.0:
            vec[0] = 1.0
            return vec
        return vec / norm

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._vector(self.passage_prefix + t) for t in texts]).astype(np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        self.calls += 1
        return self._vector(self.query_prefix + text)

    def count_tokens(self, text: str) -> int:
        return len(_WORD.findall(text))
