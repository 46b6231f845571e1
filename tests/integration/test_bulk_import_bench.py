"""Smoke test of ``benchmarks/bulk_import.py``: a tiny run end to end, with the working tree as its
own baseline, writes a report of the shape README's figures read. No timing is asserted (speed
lives in the committed report)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bulk_import_bench_writes_its_report(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    completed = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "bulk_import.py"),
            "--sizes",
            "300",
            "--baseline-src",
            str(ROOT),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    report = json.loads(out.read_text())
    size = report["sizes"]["300"]
    for side in ("baseline", "zkr", "floor"):
        assert size[side]["stored"] == 300
        assert size[side]["cpu_s"] > 0 and size[side]["wall_s"] > 0
    # The same rows by both imports (the harness checks), and each table written.
    assert size["counts"]["sources"] == size["counts"]["memory_commits"] == 300
    assert size["counts"]["recall_fts"] == size["counts"]["source_fts"] == 300
    assert size["zkr_cpu_over_floor"] > 0 and size["speedup_rows_per_cpu_s"] > 0
