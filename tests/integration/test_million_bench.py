"""Smoke test of ``benchmarks/million.py``: every step at a tiny size, end to end, writes a report
of the shape README's 1M figures read (scripts/readme_figures.py). No timing is asserted (speed
lives in the committed report, benchmarks/reports/million.json)."""

from __future__ import annotations

from pathlib import Path

from tests.integration.conftest import run_benchmark


def test_million_bench_writes_every_step(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    common = ("--size", "300", "--queries-per-class", "2", "--cache-dir", str(cache))
    out = tmp_path / "report.json"
    run_benchmark("million.py", *common, "--steps", "build,lexical", out=out)
    # A later step in its own process reuses the build and merges into the same report.
    report = run_benchmark(
        "million.py", *common, "--steps", "hybrid,remember", "--remember-count", "20",
        "--drop", out=out,
    )  # fmt: skip
    built = report["build"]
    assert built["import"]["stored"] == 300 and built["import"]["cpu_s"] > 0
    assert built["vectors"]["count"] == 300 and built["vectors"]["model"] == "bench-random"
    assert built["database"]["rows"]["sources"] == 300
    for part in ("lexical", "hybrid"):
        figures = report[part]
        assert figures["serve_health"] == {"errors": 0, "first_error": None}
        assert figures["wall"]["zkr"]["n"] == 8 and figures["wall"]["zkr"]["p95_ms"] > 0
        assert figures["serve_cpu_ms_per_request"]["zkr"] >= 0
        assert figures["first_request_ms"]["zkr"] > 0
        assert figures["serve_memory_mb"]["peak_rss_mb"] > 0
    remember = report["remember"]
    assert remember["count"] == 20 and remember["serve_health"]["errors"] == 0
    assert not list((cache / "work").glob("million-300-*")), "--drop leaves no database"
