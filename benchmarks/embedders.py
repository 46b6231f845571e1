"""Embedder throughput per CPU-second on 20-40-word passages, each setting in its own process.

    python benchmarks/embedders.py [--passages 256] [--settings minilm,minilm-t1,e5,e5-t1]
                                   [--out benchmarks/reports/embedders.json]

Passages are LoCoMo dialogue turns of 20-40 words from the dev conversations (0-4), read from
``$ZKR_LOCOMO_DIR`` (default ``/work/shared/data/locomo``) at run time and never stored. Each
setting runs in a fresh interpreter (OpenMP and onnxruntime read their thread settings once): one
warm-up call (loads the model), then the passages in ``rebuild``'s batches, ``role="passage"``.
CPU time is the process's (all threads); ``per_cpu_second`` = passages / CPU seconds, the figure
issue 27 asks for on a shared machine, beside ``per_wall_second``. A setting whose plugin is not
installed is reported as missing.
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
# setting -> (plugin module, environment)
SETTINGS: dict[str, tuple[str, dict[str, str]]] = {
    "minilm": ("zkr_embed_minilm", {}),
    "minilm-t1": ("zkr_embed_minilm", {"ZKR_MINILM_THREADS": "1"}),
    "minilm-t2": ("zkr_embed_minilm", {"ZKR_MINILM_THREADS": "2"}),
    "e5": ("zkr_embed_e5", {}),
    "e5-t1": ("zkr_embed_e5", {"ZKR_E5_THREADS": "1"}),
}


def passages(count: int) -> list[str]:
    """The first *count* dev turns of 20-40 words, in conversation order."""
    chosen: list[str] = []
    for conversation in locomo.load(locomo.DEFAULT_DATA, DEV_CONVERSATIONS):
        for turn in conversation.turns:
            if 20 <= len(turn.text.split()) <= 40:
                chosen.append(turn.text)
    return chosen[:count]


def run_one(setting: str, count: int) -> dict[str, Any]:
    """Measure one setting in this process."""
    import importlib

    module_name, _env = SETTINGS[setting]
    module = importlib.import_module(module_name)
    embedder = next(
        getattr(module, name)()
        for name in ("MiniLMEmbedder", "E5Embedder")
        if hasattr(module, name)
    )
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
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(run_one(args.one, args.passages)))
        return 0
    report: dict[str, Any] = {"load_average_at_start": list(os.getloadavg()), "settings": {}}
    for setting in args.settings.split(","):
        env = {**os.environ, **SETTINGS[setting][1]}
        done = subprocess.run(
            [sys.executable, __file__, "--one", setting, "--passages", str(args.passages)],
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
