"""Smoke test of ``benchmarks/remember_serve.py``: a tiny run end to end, with the working tree as
its own baseline, writes a report with each serve process's wall and CPU figures. No timing is
asserted (speed lives in the committed report, benchmarks/reports/remember.json)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.integration.conftest import ROOT, run_benchmark


def test_remember_serve_bench_writes_its_report(tmp_path: Path) -> None:
    report = run_benchmark(
        "remember_serve.py",
        "--size",
        "200",
        "--count",
        "60",
        "--baseline",
        str(ROOT),
        "--synchronous-normal",
        "--cache-dir",
        str(tmp_path / "cache"),
        out=tmp_path / "report.json",
    )
    (figures,) = report["runs"]
    for name in ("measured", "contract_only", "baseline", "synchronous_normal"):
        side = figures[name]
        assert side["count"] == 60
        assert side["serve_health"] == {"errors": 0, "first_error": None}
        assert side["wall_s"] > 0 and side["cpu_s"] >= 0
    assert figures["measured"]["ratio_to_contract_only_wall"] > 0
    assert figures["measured"]["ratio_to_baseline_wall"] > 0
    assert figures["synchronous_normal"]["ratio_to_measured_wall"] > 0
    assert len(figures["load_average_before"]) == 3


def _profile_pages(cache: Path, *extra: str) -> dict[str, float]:
    """``remember_profile.py --pages`` on a tiny corpus: pages per remember, by table or index."""
    completed = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "remember_profile.py"),
            *("--size", "200", "--count", "20", "--pages", "--cache-dir", str(cache)),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    lines = completed.stdout.split("pages written to the WAL per remember:\n", 1)[1].splitlines()
    return {name: float(share) for share, name in (line.split() for line in lines if line.strip())}


def test_remember_profile_counts_the_pages_each_remember_writes(tmp_path: Path) -> None:
    """The recall index's pages are among those a remember writes, and none of them when its
    upkeep is switched off (``--contract-only``): the count follows the writes, not a guess."""
    kept = _profile_pages(tmp_path / "cache")
    contract_only = _profile_pages(tmp_path / "cache", "--contract-only")
    assert kept["recall_fts_data"] > 0 and kept["sources"] > 0
    assert contract_only["sources"] > 0
    assert not [name for name in contract_only if name.startswith("recall_fts")]
    assert sum(kept.values()) > sum(contract_only.values())
