"""Embedder throughput per CPU-second on 20-40-word passages, each setting in its own process.

    python benchmarks/embedders.py [--passages 256] [--settings minilm,minilm-t1,e5,e5-t1]
                                   [--xquad 60] [--out benchmarks/reports/embedders.json]

Passages are LoCoMo dialogue turns of 20-40 words from the dev conversations (0-4), read from
``$ZKR_LOCOMO_DIR`` (default ``/work/shared/data/locomo``) at run time and never stored. Each
setting runs in a fresh interpreter (OpenMP and onnxruntime read their thread settings once): one
warm-up call (loads the model), then the passages in ``rebuild``'s batches, ``role="passage"``.
CPU time is the process's (all threads); ``per_cpu_second`` = passages / CPU seconds, the figure
issue 27 asks for on a shared machine, beside ``per_wall_second``. A setting whose plugin is not
installed is reported as missing.

``--xquad N`` adds a multilingual check, dense retrieval only (no zkr store): for each XQuAD
*development* language (de, es, ru, zh, ar, hi; ``$ZKR_XQUAD_DIR``, default
``/work/shared/data/xquad``; see its PROVENANCE.md) the first N paragraphs are the passages and
their questions the queries, asked in the same language and in English (the files are aligned);
hit@1 and hit@5 of the question's own paragraph by cosine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import locomo  # the sibling benchmark's loader

DEV_CONVERSATIONS = [0, 1, 2, 3, 4]
XQUAD_DIR = Path(os.environ.get("ZKR_XQUAD_DIR", "/work/shared/data/xquad"))
XQUAD_DEV = ["de", "es", "ru", "zh", "ar", "hi"]
# setting -> (plugin module, environment)
SETTINGS: dict[str, tuple[str, dict[str, str]]] = {
    "minilm": ("zkr_embed_minilm", {}),
    "minilm-t1": ("zkr_embed_minilm", {"ZKR_MINILM_THREADS": "1"}),
    "minilm-t2": ("zkr_embed_minilm", {"ZKR_MINILM_THREADS": "2"}),
    "e5": ("zkr_embed_e5", {}),
    "e5-t1": ("zkr_embed_e5", {"ZKR_E5_THREADS": "1"}),
    "e5-onnx": ("zkr_embed_e5._onnx", {}),
    "e5-onnx-t1": ("zkr_embed_e5._onnx", {"ZKR_E5_THREADS": "1"}),
}


def passages(count: int) -> list[str]:
    """The first *count* dev turns of 20-40 words, in conversation order."""
    chosen: list[str] = []
    for conversation in locomo.load(locomo.DEFAULT_DATA, DEV_CONVERSATIONS):
        for turn in conversation.turns:
            if 20 <= len(turn.text.split()) <= 40:
                chosen.append(turn.text)
    return chosen[:count]


def _embedder(setting: str) -> Any:
    import importlib

    module = importlib.import_module(SETTINGS[setting][0])
    names = ("MiniLMEmbedder", "E5Embedder", "E5OnnxEmbedder")
    return next(getattr(module, name)() for name in names if hasattr(module, name))


def _xquad(language: str, paragraphs: int) -> tuple[list[str], list[tuple[str, int]]]:
    """The first *paragraphs* contexts of *language* and (question, paragraph index) pairs."""
    data = json.loads((XQUAD_DIR / f"xquad.{language}.json").read_text(encoding="utf-8"))
    contexts: list[str] = []
    questions: list[tuple[str, int]] = []
    for article in data["data"]:
        for paragraph in article["paragraphs"]:
            if len(contexts) == paragraphs:
                return contexts, questions
            questions.extend((qa["question"], len(contexts)) for qa in paragraph["qas"])
            contexts.append(paragraph["context"])
    return contexts, questions


def xquad_check(setting: str, paragraphs: int) -> dict[str, Any]:
    """Dense hit@1/hit@5 per development language, questions in the language and in English."""
    import numpy as np

    embedder = _embedder(setting)
    roles = getattr(embedder, "roles", ())

    def embed(texts: list[str], role: str) -> Any:
        vectors = embedder.embed_batch(texts, role=role) if roles else embedder.embed_batch(texts)
        return np.asarray(vectors, dtype=np.float32)

    _english, english_questions = _xquad("en", paragraphs)
    english_vectors = embed([q for q, _ in english_questions], "query")
    gold = np.array([g for _, g in english_questions])
    result: dict[str, Any] = {}
    for language in XQUAD_DEV:
        contexts, questions = _xquad(language, paragraphs)
        matrix = embed(contexts, "passage")
        own = embed([q for q, _ in questions], "query")
        for label, queries in ((language, own), (f"en->{language}", english_vectors)):
            ranks = np.argsort(-(queries @ matrix.T), axis=1)
            result[label] = {
                "questions": len(gold),
                "hit@1": round(float(np.mean(ranks[:, 0] == gold)), 3),
                "hit@5": round(float(np.mean((ranks[:, :5] == gold[:, None]).any(axis=1))), 3),
            }
    return result


def run_one(setting: str, count: int) -> dict[str, Any]:
    """Measure one setting in this process."""
    embedder = _embedder(setting)
    texts = passages(count)
    role = {"role": "passage"} if getattr(embedder, "roles", ()) else {}
    embedder.embed_batch(texts[:2], **role)  # loads the model
    batch = int(getattr(embedder, "batch_size", 32))
    wall, cpu = time.perf_counter(), time.process_time()
    for start in range(0, len(texts), batch):
        embedder.embed_batch(texts[start : start + batch], **role)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {
        "passages": len(texts),
        "mean_words": round(sum(len(t.split()) for t in texts) / max(len(texts), 1), 1),
        "batch_size": batch,
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "per_wall_second": round(len(texts) / wall, 1),
        "per_cpu_second": round(len(texts) / cpu, 1),
        "model": embedder.model,
        "version": embedder.version,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passages", type=int, default=256)
    parser.add_argument("--settings", default=",".join(SETTINGS))
    parser.add_argument("--out", type=Path, default=Path("embedders-report.json"))
    parser.add_argument("--xquad", type=int, default=0, help="paragraphs per language (0: no)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        figures = run_one(args.one, args.passages)
        if args.xquad:
            figures["xquad_dense"] = xquad_check(args.one, args.xquad)
        print(json.dumps(figures))
        return 0
    report: dict[str, Any] = {"load_average_at_start": list(os.getloadavg()), "settings": {}}
    for setting in args.settings.split(","):
        env = {**os.environ, **SETTINGS[setting][1]}
        command = [sys.executable, __file__, "--one", setting, "--passages", str(args.passages)]
        done = subprocess.run(
            [*command, "--xquad", str(args.xquad)],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode:
            report["settings"][setting] = {"missing": done.stderr.strip().splitlines()[-1:]}
        else:
            report["settings"][setting] = json.loads(done.stdout)
        print(setting, json.dumps(report["settings"][setting]), file=sys.stderr)
    report["load_average_at_end"] = list(os.getloadavg())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
