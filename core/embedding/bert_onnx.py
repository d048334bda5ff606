"""Convert a BERT checkpoint (safetensors) into an ONNX graph, fuse it, and quantise it.

The graph is written node by node with the ``onnx`` helper API (opset 17), in the same shape as a
PyTorch export of Hugging Face's ``BertModel`` so that onnxruntime's transformer optimizer recognises
it and fuses the embedding layer, attention, skip + layer normalisation and GELU.

Graph inputs: ``input_ids``, ``attention_mask``, ``token_type_ids`` — ``(batch, sequence) int64``,
both axes dynamic. Output: ``last_hidden_state`` — ``(batch, sequence, hidden) float32``.

Formulas: BERT (Devlin et al. 2018) — embeddings = LayerNorm(word + position + token type); each layer
``h = LN(x + Wo·softmax(QKᵀ/√d + mask)·V)``, ``out = LN(h + W2·gelu(W1·h))`` with the exact (erf) GELU;
masked positions get ``-10000`` added to their attention logits.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from limbic.core.errors import ValidationError

OPSET = 17
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT_NAME = "last_hidden_state"
MASK_FILTER_VALUE = -10000.0


@dataclass(frozen=True, slots=True)
class BertConfig:
    """The architecture numbers of a BERT encoder (Hugging Face ``config.json`` field names)."""

    hidden_size: int = 384
    num_attention_heads: int = 12
    num_hidden_layers: int = 6
    intermediate_size: int = 1536
    vocab_size: int = 30522
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12

    @classmethod
    def from_file(cls, path: Path) -> BertConfig:
        """Read a Hugging Face ``config.json``; raises :class:`ValidationError` for a non-BERT model."""
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if data.get("model_type", "bert") != "bert":
            raise ValidationError(f"{path}: model_type {data.get('model_type')!r} is not 'bert'")
        if data.get("hidden_act", "gelu") != "gelu":
            raise ValidationError(f"{path}: hidden_act {data.get('hidden_act')!r} is not supported (gelu only)")
        if data.get("position_embedding_type", "absolute") != "absolute":
            raise ValidationError(f"{path}: only absolute position embeddings are supported")
        fields = {name: data[name] for name in cls.__dataclass_fields__ if name in data}
        return cls(**fields)

    @property
    def head_size(self) -> int:
        return self.hidden_size // self.num_attention_heads


def normalise_weight_names(weights: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Strip a leading ``bert.`` (BertForX checkpoints) so names start at ``embeddings.``/``encoder.``."""
    return {(key[5:] if key.startswith("bert.") else key): value for key, value in weights.items()}


class _GraphWriter:
    """Collects nodes and initializers with unique names."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []

    def constant(self, name: str, value: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(np.array(value, order="C"), name))
        return name

    def node(self, op: str, inputs: list[str], name: str, **attributes: Any) -> str:
        output = f"{name}_out"
        self.nodes.append(helper.make_node(op, inputs, [output], name=name, **attributes))
        return output


def build_bert_graph(weights: Mapping[str, np.ndarray], config: BertConfig) -> onnx.ModelProto:
    """Build the ONNX model of a BERT encoder from its weights.

    Args:
        weights: tensor name → array, Hugging Face ``BertModel`` names (``embeddings.word_embeddings.weight``,
            ``encoder.layer.{i}.attention.self.query.weight``, ...), float32; linear weights are ``(out, in)``.
        config: the architecture.

    Returns:
        An opset-17 ``ModelProto`` (inputs ``input_ids``/``attention_mask``/``token_type_ids`` int64
        ``(batch, sequence)``, output ``last_hidden_state`` float32 ``(batch, sequence, hidden)``).

    Raises:
        ValidationError: a needed tensor is missing or has the wrong shape.
    """
    w = normalise_weight_names(weights)
    g = _GraphWriter()

    def tensor(name: str, shape: tuple[int, ...]) -> np.ndarray:
        if name not in w:
            raise ValidationError(f"checkpoint has no tensor {name!r}")
        value = np.asarray(w[name], dtype=np.float32)
        if value.shape != shape:
            raise ValidationError(f"tensor {name!r} has shape {value.shape}, expected {shape}")
        return value

    hidden, heads, head_size = config.hidden_size, config.num_attention_heads, config.head_size
    eps = float(config.layer_norm_eps)

    def layer_norm(x: str, prefix: str, name: str) -> str:
        scale = g.constant(f"{prefix}.weight", tensor(f"{prefix}.weight", (hidden,)))
        bias = g.constant(f"{prefix}.bias", tensor(f"{prefix}.bias", (hidden,)))
        return g.node("LayerNormalization", [x, scale, bias], name, axis=-1, epsilon=eps)

    def linear(x: str, prefix: str, shape: tuple[int, int], name: str) -> str:
        weight = tensor(f"{prefix}.weight", shape).T
        bias = tensor(f"{prefix}.bias", (shape[0],))
        product = g.node("MatMul", [x, g.constant(f"{prefix}.weight_t", weight)], f"{name}_matmul")
        return g.node("Add", [product, g.constant(f"{prefix}.bias", bias)], f"{name}_add")

    # Embeddings: word + token type + position (positions sliced from a constant 0..max-1 row).
    word = g.node("Gather", [g.constant("embeddings.word_embeddings.weight",
                                        tensor("embeddings.word_embeddings.weight", (config.vocab_size, hidden))),
                             "input_ids"], "word_gather")
    token_type = g.node("Gather", [g.constant("embeddings.token_type_embeddings.weight",
                                              tensor("embeddings.token_type_embeddings.weight",
                                                     (config.type_vocab_size, hidden))),
                                   "token_type_ids"], "token_type_gather")
    summed = g.node("Add", [word, token_type], "embeddings_add_token_type")
    shape = g.node("Shape", ["input_ids"], "input_shape")
    sequence = g.node("Gather", [shape, g.constant("const_one_scalar", np.array(1, dtype=np.int64))],
                      "sequence_length")
    end = g.node("Unsqueeze", [sequence, g.constant("const_axes_zero", np.array([0], dtype=np.int64))],
                 "sequence_length_1d")
    positions_table = np.arange(config.max_position_embeddings, dtype=np.int64)[None, :]
    position_ids = g.node("Slice", [g.constant("position_ids", positions_table),
                                    g.constant("const_zero_1d", np.array([0], dtype=np.int64)), end,
                                    g.constant("const_one_1d", np.array([1], dtype=np.int64)),
                                    "const_one_1d"], "position_ids_slice")
    position = g.node("Gather", [g.constant("embeddings.position_embeddings.weight",
                                            tensor("embeddings.position_embeddings.weight",
                                                   (config.max_position_embeddings, hidden))),
                                 position_ids], "position_gather")
    summed = g.node("Add", [summed, position], "embeddings_add_position")
    x = layer_norm(summed, "embeddings.LayerNorm", "embeddings_layer_norm")

    # Attention mask → additive bias (batch, 1, 1, sequence): (1 - mask) * -10000.
    mask = g.node("Unsqueeze", ["attention_mask", "const_one_1d"], "mask_unsqueeze_1")
    mask = g.node("Unsqueeze", [mask, g.constant("const_two_1d", np.array([2], dtype=np.int64))],
                  "mask_unsqueeze_2")
    mask = g.node("Cast", [mask], "mask_cast", to=TensorProto.FLOAT)
    mask = g.node("Sub", [g.constant("const_one_float", np.array(1.0, dtype=np.float32)), mask], "mask_invert")
    mask_bias = g.node("Mul", [mask, g.constant("const_mask_filter", np.array(MASK_FILTER_VALUE, np.float32))],
                       "mask_bias")

    split_heads = g.constant("shape_split_heads", np.array([0, 0, heads, head_size], dtype=np.int64))
    merge_heads = g.constant("shape_merge_heads", np.array([0, 0, hidden], dtype=np.int64))
    scale = g.constant("const_sqrt_head_size", np.array(math.sqrt(head_size), dtype=np.float32))
    sqrt2 = g.constant("const_sqrt_two", np.array(math.sqrt(2.0), dtype=np.float32))
    half = g.constant("const_half", np.array(0.5, dtype=np.float32))

    def heads_of(projection: str, perm: list[int], name: str) -> str:
        """(batch, seq, hidden) → (batch, heads, seq, head_size), or (batch, heads, head_size, seq) for keys."""
        split = g.node("Reshape", [projection, split_heads], f"{name}_reshape")
        return g.node("Transpose", [split], f"{name}_transpose", perm=perm)

    for i in range(config.num_hidden_layers):
        p = f"encoder.layer.{i}"
        n = f"layer{i}"
        q = heads_of(linear(x, f"{p}.attention.self.query", (hidden, hidden), f"{n}_q"), [0, 2, 1, 3], f"{n}_q")
        k = heads_of(linear(x, f"{p}.attention.self.key", (hidden, hidden), f"{n}_k"), [0, 2, 3, 1], f"{n}_k")
        v = heads_of(linear(x, f"{p}.attention.self.value", (hidden, hidden), f"{n}_v"), [0, 2, 1, 3], f"{n}_v")
        scores = g.node("MatMul", [q, k], f"{n}_scores")
        scores = g.node("Div", [scores, scale], f"{n}_scores_scaled")
        scores = g.node("Add", [scores, mask_bias], f"{n}_scores_masked")
        probs = g.node("Softmax", [scores], f"{n}_softmax", axis=-1)
        context = g.node("MatMul", [probs, v], f"{n}_context")
        context = g.node("Transpose", [context], f"{n}_context_transpose", perm=[0, 2, 1, 3])
        context = g.node("Reshape", [context, merge_heads], f"{n}_context_reshape")
        attended = linear(context, f"{p}.attention.output.dense", (hidden, hidden), f"{n}_attention_out")
        residual = g.node("Add", [attended, x], f"{n}_attention_residual")
        h = layer_norm(residual, f"{p}.attention.output.LayerNorm", f"{n}_attention_layer_norm")

        inner = linear(h, f"{p}.intermediate.dense", (config.intermediate_size, hidden), f"{n}_intermediate")
        erf = g.node("Erf", [g.node("Div", [inner, sqrt2], f"{n}_gelu_div")], f"{n}_gelu_erf")
        erf_plus = g.node("Add", [erf, "const_one_float"], f"{n}_gelu_add")
        gelu = g.node("Mul", [g.node("Mul", [inner, erf_plus], f"{n}_gelu_mul"), half], f"{n}_gelu_half")
        out = linear(gelu, f"{p}.output.dense", (hidden, config.intermediate_size), f"{n}_output")
        residual = g.node("Add", [out, h], f"{n}_output_residual")
        x = layer_norm(residual, f"{p}.output.LayerNorm", f"{n}_output_layer_norm")

    g.nodes.append(helper.make_node("Identity", [x], [OUTPUT_NAME], name="last_hidden_state_identity"))
    inputs = [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"]) for name in INPUT_NAMES]
    output = helper.make_tensor_value_info(OUTPUT_NAME, TensorProto.FLOAT, ["batch", "sequence", hidden])
    graph = helper.make_graph(g.nodes, "bert_encoder", inputs, [output], initializer=g.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="limbic.bert_onnx")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def optimize_bert(model: onnx.ModelProto, config: BertConfig) -> onnx.ModelProto:
    """Fuse the graph with onnxruntime's transformer optimizer (``model_type="bert"``): embedding layer,
    attention, skip layer normalisation, GELU and bias GELU. Hardware-neutral (``opt_level=0``: Python
    fusions only; the session applies its own optimisations when it loads). Returns the fused model."""
    from onnxruntime.transformers import optimizer

    # The optimizer logs every fusion count at INFO/WARNING level; keep the CLI output readable.
    logging.getLogger("onnxruntime.transformers").setLevel(logging.ERROR)
    fused = optimizer.optimize_model(model, model_type="bert", num_heads=config.num_attention_heads,
                                     hidden_size=config.hidden_size, opt_level=0)
    model = fused.model
    if not any(opset.domain == "com.microsoft" for opset in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return model


def fused_operator_counts(model: onnx.ModelProto) -> dict[str, int]:
    """Count of each operator type in ``model`` (used to check that fusion happened)."""
    counts: dict[str, int] = {}
    for node in model.graph.node:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    return counts


def quantize_int8(source: Path, target: Path) -> None:
    """Write an int8 dynamically quantised copy of the ONNX model ``source`` to ``target``
    (weights int8 per channel, activations quantised at run time; onnxruntime ``quantize_dynamic``)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # Fused com.microsoft operators have no ONNX shape inference; their outputs are float32.
    # quantize_dynamic warns on the root logger that static pre-processing is advised; it is not
    # needed for dynamic quantisation, so that warning is silenced while it runs.
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        quantize_dynamic(Path(source), Path(target), weight_type=QuantType.QInt8, per_channel=True,
                         extra_options={"DefaultTensorType": TensorProto.FLOAT})
    finally:
        root.setLevel(level)


def save_model(model: onnx.ModelProto, target: Path) -> None:
    """Write ``model`` to ``target`` as one ``.onnx`` file (weights inline; MiniLM is 90 MB)."""
    onnx.save_model(model, str(target))
