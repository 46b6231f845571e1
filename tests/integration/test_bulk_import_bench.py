"""Smoke test of ``benchmarks/bulk_import.py``: a tiny run end to end, with the working tree as its
own baseline, writes a report of the shape README's figures read. No timing is asserted (speed
lives in the committed report)."""

from __future__ import annotations

from pathlib import Path

from tests.integration.conftest import ROOT, run_benchmark


def test_bulk_import_bench_writes_its_report(tmp_path: Path) -> None:
    report = run_benchmark(
        "bulk_import.py",
        "--sizes",
        "300",
        "--baseline-src",
        str(ROOT),
        "--cache-dir",
        str(tmp_path / "cache"),
        out=tmp_path / "report.json",
    )
    size = report["sizes"]["300"]
    for side in ("baseline", "zkr", "floor", "floor_journals_in_memory"):
        assert size[side]["stored"] == 300
        assert size[side]["cpu_s"] > 0 and size[side]["wall_s"] > 0
    # The same rows by both imports (the harness checks), and each table written.
    assert size["counts"]["sources"] == size["counts"]["memory_commits"] == 300
    assert size["counts"]["recall_fts"] == size["counts"]["source_fts"] == 300
    assert size["zkr_cpu_over_floor"] > 0 and size["speedup_rows_per_cpu_s"] > 0
    # Where the floor's time goes: each table's step and the commit.
    assert "COMMIT" in size["floor"]["step_cpu_s"]
    assert "INSERT INTO recall_fts(rowid," in size["floor"]["step_cpu_s"]
