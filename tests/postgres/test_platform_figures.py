"""docs/zkr-postgres.md's platform-size figures are the committed report's (issue 30, point 5).

No server needed: ``scripts/postgres_figures.py`` renders the block from
``benchmarks/reports/postgres-platform.json``; a figure typed by hand, or a new report not
rendered, fails here.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_platform_figures_are_the_committed_report() -> None:
    script = ROOT / "scripts" / "postgres_figures.py"
    spec = importlib.util.spec_from_file_location("postgres_figures", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["postgres_figures"] = module
    spec.loader.exec_module(module)
    assert module.REPORT.is_file()
    assert module.main(["--check"]) == 0, "run python scripts/postgres_figures.py --write"
