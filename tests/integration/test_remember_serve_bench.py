"""Smoke test of ``benchmarks/remember_serve.py``: a tiny run end to end, with the working tree as
its own baseline, writes a report with each serve process's wall and CPU figures. No timing is
asserted (speed lives in the committed report, benchmarks/reports/remember.json)."""

from __future__ import annotations

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
