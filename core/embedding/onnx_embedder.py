"""The real embedder: an installed ONNX sentence model run with onnxruntime (docs/architecture.md "Embedding"; mcp-memory "Architecture").

Pipeline: prefix → tokenize (truncated to the model's maximum, no fixed padding) → texts sorted by
token length and cut into batches, each padded only to its own longest text → ONNX forward pass →
masked mean pooling over the attention mask (or the CLS token, per the manifest) → L2 normalisation.

Nothing heavy happens in the constructor: the tokenizer is read on the first call that needs it and the
onnxruntime session on the first embedding, so the GUI creates the embedder on the UI thread and the
first ``embed`` (on a worker thread) pays the load. The lazy loads are guarded by a lock; after that,
``InferenceSession.run`` is safe to call from several threads at once (onnxruntime guarantees it), so
concurrent callers share one session.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from limbic.core.embedding.model_store import (
    MANIFEST,
    VARIANT_FILES,
    installed_models,
    model_dir,
    read_manifest,
    resolve_active,
)
from limbic.core.errors import LimbicError, NotFoundError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

log = logging.getLogger(__name__)

DEFAULT_BATCH_SIZE = 32
TRIM_AFTER_TEXTS = 16  # an embedding call of this many texts or more gives its memory back afterwards (release_memory)
THREADS_ENV = "LIMBIC_EMBED_THREADS"


def release_free_memory() -> None:
    """Give the free pages of the C heap back to the system (glibc's ``malloc_trim``; nothing elsewhere).

    onnxruntime frees the graph optimiser's copies of the weights and a batch's buffers, but glibc keeps the pages
    resident: trimming after a session is made and after a large batch takes 41 MB and 77 MB off the RSS of
    all-MiniLM-L6-v2 (measured; docs/performance.md "Memory"), for a few milliseconds."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or ``None`` where there is none."""
    try:
        import ctypes

        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


class OnnxEmbedder:
    """Embedder over an installed model directory (see :mod:`limbic.core.embedding.model_store`).

    Args:
        directory: the model directory (holding ``manifest.json``).
        variant: ``"fp32"`` (``model.onnx``) or ``"int8"`` (``model_int8.onnx``).
        threads: onnxruntime intra-op threads; default ``$LIMBIC_EMBED_THREADS`` or onnxruntime's choice
            (one per physical core).
        batch_size: texts per forward pass.

    Attributes follow :class:`~limbic.core.embedding.base.Embedder`. ``name`` is the manifest name, with
    ``"@int8"`` appended for the int8 variant (its vectors differ slightly, so the store tells them apart).

    Raises:
        NotFoundError: no manifest in ``directory`` or the variant is not installed.
    """

    def __init__(self, directory: str | Path, *, variant: str = "fp32", threads: int | None = None,
                 batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        self.directory = Path(directory)
        manifest = read_manifest(self.directory)
        file = manifest.get("variants", {}).get(variant)
        if file is None or not (self.directory / file).is_file():
            raise NotFoundError(f"model {manifest['name']!r} has no {variant} variant in {self.directory}",
                                missing=[f"{manifest['name']}:{variant}"])
        self.manifest = manifest
        self.variant = variant
        self.model_path = self.directory / file
        self.name = manifest["name"] if variant == "fp32" else f"{manifest['name']}@{variant}"
        self.dimension = int(manifest["dimension"])
        self.max_tokens = int(manifest["max_tokens"])
        self.query_prefix = manifest.get("prefixes", {}).get("query", "")
        self.passage_prefix = manifest.get("prefixes", {}).get("passage", "")
        self.pooling = manifest.get("pooling", "mean")
        self.normalize = bool(manifest.get("normalize", True))
        self.output_name = manifest.get("output")
        env_threads = os.environ.get(THREADS_ENV)
        self.threads = threads if threads is not None else (int(env_threads) if env_threads else 0)
        self.batch_size = max(1, int(batch_size))
        self._load_lock = threading.Lock()
        self._encoder: Tokenizer | None = None  # truncating to max_tokens, used for embedding
        self._counter: Tokenizer | None = None  # without truncation, used by count_tokens
        self._session = None
        self._inputs: tuple[str, ...] = ()
        self._pad_id = 0
        self._holds = 0  # open holding_memory() blocks: large calls leave the release to the last block's end
        self._owed = False  # a large call ran inside a holding_memory() block

    # --- lazy loading --------------------------------------------------------------------------

    def _tokenizers(self) -> tuple[Tokenizer, Tokenizer]:
        """``(encoder, counter)``, loaded once from the model folder's ``tokenizer.json``."""
        if self._encoder is None:
            with self._load_lock:
                if self._encoder is None:
                    from tokenizers import Tokenizer

                    text = (self.directory / "tokenizer.json").read_text(encoding="utf-8")
                    counter = Tokenizer.from_str(text)
                    counter.no_padding()
                    counter.no_truncation()
                    encoder = Tokenizer.from_str(text)
                    # tokenizer.json of MiniLM pads every text to 128: padding is done per batch instead.
                    padding = encoder.padding
                    # Padded positions are masked out of attention and pooling; the id only has to exist.
                    candidates = [encoder.token_to_id(token) for token in ("[PAD]", "<pad>")]
                    fallback = next((i for i in candidates if i is not None), 0)
                    self._pad_id = int(padding["pad_id"]) if padding else fallback
                    encoder.no_padding()
                    encoder.enable_truncation(max_length=self.max_tokens)
                    self._counter, self._encoder = counter, encoder
        loaded_encoder, loaded_counter = self._encoder, self._counter
        assert loaded_encoder is not None and loaded_counter is not None  # set together above, under the lock
        return loaded_encoder, loaded_counter

    def _get_session(self):
        if self._session is None:
            encoder, _ = self._tokenizers()
            with self._load_lock:
                if self._session is None:
                    import onnxruntime as ort

                    options = ort.SessionOptions()
                    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                    options.intra_op_num_threads = self.threads
                    options.inter_op_num_threads = 1
                    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                    # onnxruntime's memory arena keeps a batch's buffers for the next batch: without it every
                    # tensor was a fresh malloc whose pages the kernel faulted in and took back (830 minor faults
                    # and 1.8 ms of kernel time per text importing 10k Debian). The arena is shrunk after a large call
                    # (release_memory), so it does not stay at its peak. No memory pattern (shapes vary per
                    # batch). Pre-packed weights stay: without them a query takes 4× as long.
                    options.enable_mem_pattern = False
                    session = ort.InferenceSession(str(self.model_path), options,
                                                   providers=["CPUExecutionProvider"])
                    self._inputs = tuple(i.name for i in session.get_inputs())
                    if self.output_name is None:
                        self.output_name = session.get_outputs()[0].name
                    self._session = session
                    release_free_memory()  # the graph optimiser's copies of the weights, freed but still resident
        return self._session

    def with_threads(self, threads: int) -> OnnxEmbedder:
        """Another embedder of the same model and variant with its own session of ``threads`` intra-op
        threads (the background embedder uses one, so that writers and searches keep a core)."""
        return OnnxEmbedder(self.directory, variant=self.variant, threads=threads, batch_size=self.batch_size)

    @property
    def loaded(self) -> bool:
        """True once the onnxruntime session exists (after the first embedding)."""
        return self._session is not None

    def load(self) -> None:
        """Load the tokenizer and the session now (call from a worker thread to warm up)."""
        self._get_session()

    # --- the Embedder interface -----------------------------------------------------------------

    def count_tokens(self, text: str) -> int:
        """Number of model tokens of ``text``, special tokens excluded, without truncation."""
        _, counter = self._tokenizers()
        return len(counter.encode(text, add_special_tokens=False).ids)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed passages (passage prefix added). Returns ``(n, dimension) float32``, rows L2-normalised."""
        return self._embed([self.passage_prefix + t for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query (query prefix added). Returns ``(dimension,) float32``, L2-normalised."""
        return self._embed([self.query_prefix + text])[0]

    @contextmanager
    def holding_memory(self) -> Iterator[None]:
        """Inside the block, embedding calls keep onnxruntime's arena and the C heap's free pages for the next
        call; the memory is given back once, when the last open block ends (:meth:`release_memory`).

        For a run of many large calls (filling pending vectors: one call per 64 texts), where giving the pages
        back after each call and faulting them in again cost more kernel time than the model's own work."""
        with self._load_lock:
            self._holds += 1
        try:
            yield
        finally:
            with self._load_lock:
                self._holds -= 1
                release = not self._holds and self._owed
                if release:
                    self._owed = False
            if release:
                self.release_memory()

    def release_memory(self) -> None:
        """Give back what the last large batches left reserved: onnxruntime's arena is shrunk to the regions
        in use (one forward pass of an empty text with the arena-shrinkage run option, ~1 ms), then the C heap's
        free pages (:func:`release_free_memory`). Does nothing before the session exists."""
        session = self._session
        if session is None:
            return
        import onnxruntime as ort

        shrink = ort.RunOptions()
        shrink.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
        encoder, _ = self._tokenizers()
        self._forward(session, [encoder.encode("")], shrink)
        release_free_memory()

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        result = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return result
        session = self._get_session()
        encoder, _ = self._tokenizers()
        encodings = encoder.encode_batch(list(texts))
        order = np.argsort([len(e.ids) for e in encodings], kind="stable")
        for start in range(0, len(order), self.batch_size):
            chosen = order[start : start + self.batch_size]
            result[chosen] = self._forward(session, [encodings[i] for i in chosen])
        if len(texts) >= TRIM_AFTER_TEXTS:
            with self._load_lock:
                held = self._holds > 0
                self._owed = self._owed or held
            if not held:
                self.release_memory()
        return result

    def _forward(self, session, encodings, run_options=None) -> np.ndarray:
        length = max(len(e.ids) for e in encodings)
        ids = np.full((len(encodings), length), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(encodings), length), dtype=np.int64)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = encoding.ids
            mask[row, : len(encoding.ids)] = 1
        available = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        output = session.run([self.output_name], {name: available[name] for name in self._inputs}, run_options)[0]
        if self.pooling == "none":
            vectors = output
        elif self.pooling == "cls":
            vectors = output[:, 0, :]
        else:
            weights = mask[:, :, None].astype(np.float32)
            vectors = (output * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        vectors = vectors.astype(np.float32, copy=False)
        if self.normalize:
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return vectors


def load_active_embedder(*, threads: int | None = None) -> OnnxEmbedder | None:
    """The embedder of the active installed model (see :func:`model_store.resolve_active`), or ``None``
    when no model is installed — callers then run FTS-only. Never raises for a missing model; the
    session itself is created later, on first use."""
    found = resolve_active()
    if found is None:
        return None
    directory, variant = found
    if not (directory / VARIANT_FILES.get(variant, "")).is_file():
        variant = "fp32"
    try:
        return OnnxEmbedder(directory, variant=variant, threads=threads)
    except (LimbicError, KeyError, ValueError) as exc:
        log.warning("the installed model in %s cannot be used (%s); search runs FTS-only", directory, exc)
        return None


def load_named_embedder(spec: str, *, threads: int | None = None) -> OnnxEmbedder:
    """The embedder of the installed model ``spec``, whichever model is active: ``NAME`` for its fp32 variant or
    ``NAME@int8`` (the name its vectors are recorded under), e.g. to evaluate a model without switching to it.

    Raises:
        ValidationError: ``NAME`` is not a valid model name.
        NotFoundError: the model is not installed (the message lists those that are) or has no such variant.
    """
    name, _, variant = spec.partition("@")
    directory = model_dir(name)
    if not (directory / MANIFEST).is_file():
        known = ", ".join(m.name for m in installed_models()) or "none"
        raise NotFoundError(f"model {name!r} is not installed (installed: {known}); install it with: "
                            "limbic model install", missing=[name])
    return OnnxEmbedder(directory, variant=variant or "fp32", threads=threads)
