"""benchmarks/compare.py: which figures it compares and which way a ratio points."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _compare_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_compare", ROOT / "benchmarks/compare.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_times_and_rates_point_the_same_way_and_the_best_round_counts() -> None:
    compare = _compare_module()
    first = {"median_ms": 2.0, "p90_ms": 9.0, "raw_fts": {"median_ms": 0.1}}
    rounds = [
        {"sections": {"lexical": {"1000": first}, "remember": {"1000": {"per_second": 900.0}}}},
        {"sections": {"lexical": {"1000": {"median_ms": 3.0}}, "remember": {
            "1000": {"per_second": 1000.0}}}},
    ]  # fmt: skip
    baseline = compare.best(rounds)
    assert baseline == {
        "lexical/1000/median_ms": (2.0, True),
        "remember/1000/per_second": (1000.0, False),
    }  # tails and same-run floors are not figures of the change
    slower = {"lexical/1000/median_ms": (2.6, True), "remember/1000/per_second": (1000.0, False)}
    result = compare.compare(baseline, slower)
    assert result["worst"]["figure"] == "lexical/1000/median_ms"
    assert result["worst"]["ratio"] == 1.3 and result["ok"] is False
    fewer = {"lexical/1000/median_ms": (2.0, True), "remember/1000/per_second": (800.0, False)}
    assert compare.compare(baseline, fewer)["worst"]["ratio"] == 1.25
    same = {"lexical/1000/median_ms": (2.2, True), "remember/1000/per_second": (950.0, False)}
    assert compare.compare(baseline, same)["ok"] is True
    assert compare.compare(baseline, {})["ok"] is False  # nothing compared proves nothing


def test_a_side_is_its_median_round_and_every_round_is_kept() -> None:
    compare = _compare_module()

    def round_(lexical_ms: float, per_second: float) -> dict[str, object]:
        return {
            "sections": {
                "lexical": {"1000": {"median_ms": lexical_ms, "pipe_echo": {"median_ms": 9.0}}},
                "remember": {"1000": {"per_second": per_second}},
            }
        }

    # One lucky and one unlucky process among five: neither decides the side's value.
    reports = [round_(ms, rate) for ms, rate in ((2.0, 100.0), (1.0, 300.0), (2.2, 90.0),
                                                 (9.0, 10.0), (2.1, 95.0))]  # fmt: skip
    assert compare.rounds_of(reports) == {
        "lexical/1000/median_ms": ([2.0, 1.0, 2.2, 9.0, 2.1], True),
        "remember/1000/per_second": ([100.0, 300.0, 90.0, 10.0, 95.0], False),
    }
    assert compare.typical(reports) == {
        "lexical/1000/median_ms": (2.1, True),
        "remember/1000/per_second": (95.0, False),
    }
    assert compare.best(reports)["lexical/1000/median_ms"] == (1.0, True)
