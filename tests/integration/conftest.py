"""Shared helpers of the integration tests (stdlib only: the real-host folders load this too)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["ROOT", "run_benchmark"]

ROOT = Path(__file__).resolve().parents[2]


def run_benchmark(script: str, *args: str, out: Path) -> Any:
    """Run ``benchmarks/<script>`` with *args* and ``--out OUT`` in this interpreter; it must
    succeed. Returns the report it wrote."""
    completed = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), *args, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    return json.loads(out.read_text())
