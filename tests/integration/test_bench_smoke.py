"""Smoke test of the benchmark harness: ``benchmarks/run.py --quick`` runs end to end and writes a
report of the documented shape. No timing is asserted here (speed lives in the report)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SECTIONS = {
    "startup",
    "agent_hooks",
    "cold_cli",
    "lexical",
    "hybrid",
    "dense",
    "cold_hybrid",
    "projections",
    "embed",
    "lifecycle",
    "remember",
    "recall",
    "person",
}
TIMING_KEYS = {"n", "median_ms", "p90_ms", "p95_ms", "min_ms", "max_ms"}


def _run_quick(tmp_path: Path) -> dict[str, Any]:
    out = tmp_path / "report.json"
    completed = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "run.py"),
            "--quick",
            "--sizes",
            "200",
            "--out",
            str(out),
            "--cache-dir",
            str(tmp_path / "cache"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    report: dict[str, Any] = json.loads(out.read_text())
    return report


def test_quick_report_has_every_section_and_figure(tmp_path: Path) -> None:
    report = _run_quick(tmp_path)

    machine = report["machine"]
    for key in ("cpu_model", "cpu_count", "python", "sqlite_version", "numpy", "zkr"):
        assert machine[key], key

    corpus = report["corpora"]["200"]
    assert corpus["sources"] == 200
    assert corpus["database"]["rows"]["sources"] == 200
    assert corpus["database"]["file_bytes"] > 0
    operations = corpus["operations"]
    assert operations["claims"] > 0 and operations["corrections"] >= 0
    assert corpus["vectors"]["count"] > 0

    sections = report["sections"]
    assert set(sections) == SECTIONS
    for name in SECTIONS:
        result = sections[name]["200"]
        assert "error" not in result, (name, result["error"])
        health = result.get("serve_health")
        if health is not None:
            assert health["errors"] == 0, (name, health)

    cold = sections["cold_cli"]["200"]
    assert set(cold["python_c_pass"]) == TIMING_KEYS
    assert cold["zkr_search_process"]["n"] >= 3
    assert cold["imports"]["numpy_imported"] is False
    assert cold["imports"]["entry_point_plugins_loaded"] == []

    startup = sections["startup"]["200"]
    for name in ("python_c_pass", "zkr_help", "zkr_search_small_db"):
        assert set(startup[name]["wall"]) == TIMING_KEYS and startup[name]["cpu"]["n"] >= 5
    assert startup["zkr_help_over_python"] > 0 and startup["zkr_search_small_db_over_python"] > 0
    checked = {item["check"] for item in report["checks"]}
    # Issue 27.4 checks start-up in CPU, --help and every everyday one-shot command.
    assert any(check.startswith("issue27.4: zkr --help over python") for check in checked)
    assert any(check.startswith("issue27.4: one-shot zkr_remember over") for check in checked)

    lexical = sections["lexical"]["200"]
    assert set(lexical["by_class"]) == {"rare_word", "common_question", "keywords", "phrase"}
    for data in lexical["by_class"].values():
        assert data["zkr"]["n"] > 0 and data["raw_fts"]["n"] > 0
        # The context of the ratio: the pipe's own round trip and the in-process library path.
        assert data["pipe_echo"]["n"] == data["zkr"]["n"] and data["library"]["n"] > 0
        assert data["pipe_bound_ratio"] >= 1
    assert sections["hybrid"]["200"]["serve_memory"]["peak_rss_mb"] > 0
    dense = sections["dense"]["200"]
    assert dense["json_text_scan"]["n"] > 0
    # The issue 4 acceptance 3 figure: numpy scan over the JSON-text baseline (shape, no threshold).
    speedup = dense["speedup"]
    assert isinstance(speedup, (int, float)) and not isinstance(speedup, bool) and speedup > 0
    assert sections["remember"]["200"]["per_second"] > 0

    checks = {item["check"]: item for item in report["checks"]}
    assert len(checks) >= 12
    for item in checks.values():
        assert set(item) >= {"check", "value", "target", "pass"}
    dense_check = checks["issue4.3: dense search over JSON-text scan at 200"]
    assert dense_check["value"] == speedup
    assert dense_check["target"] == ">= 10 x" and isinstance(dense_check["pass"], bool)
