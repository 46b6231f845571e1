"""Smoke test of ``benchmarks/remember_serve.py``: a tiny run end to end, with the working tree as
its own baseline, writes a report with each serve process's wall and CPU figures. No timing is
asserted (speed lives in the committed report, benchmarks/reports/remember.json)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_remember_serve_bench_writes_its_report(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    completed = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "remember_serve.py"),
            "--size",
            "200",
            "--count",
            "60",
            "--baseline",
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
    (figures,) = report["runs"]
    for name in ("measured", "contract_only", "baseline"):
        side = figures[name]
        assert side["count"] == 60
        assert side["serve_health"] == {"errors": 0, "first_error": None}
        assert side["wall_s"] > 0 and side["cpu_s"] >= 0
    assert figures["measured"]["ratio_to_contract_only_wall"] > 0
    assert figures["measured"]["ratio_to_baseline_wall"] > 0
    assert len(figures["load_average_before"]) == 3
