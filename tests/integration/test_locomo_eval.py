"""The LoCoMo evidence-retrieval evaluation (``benchmarks/locomo.py``) on a small development slice.

Conversation 0, lexical mode, its first questions: the report has the documented shape, every
metric is a fraction and some questions find their cited turn. The data is CC BY-NC and lives
outside the repository; the test skips when it is missing. No timing is asserted.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
METRICS = {
    "questions",
    "recall@1",
    "recall@5",
    "recall@10",
    "recall@50",
    "hit@1",
    "hit@5",
    "hit@10",
    "hit@50",
    "mrr",
}


def _load_script() -> ModuleType:
    name = "zkr_benchmarks_locomo"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / "locomo.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


locomo = _load_script()


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if not (locomo.DEFAULT_DATA / locomo.DATA_FILE).exists():
        pytest.skip(f"LoCoMo data not found at {locomo.DEFAULT_DATA}")
    out = tmp_path_factory.mktemp("locomo") / "report.json"
    argv = [
        "--conversations",
        "0",
        "--modes",
        "lexical",
        "--max-questions",
        "40",
        "--out",
        str(out),
    ]
    assert locomo.main(argv) == 0
    loaded: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return loaded


def _check_block(block: dict[str, Any]) -> None:
    assert set(block) == METRICS
    assert block["questions"] > 0
    for key in METRICS - {"questions"}:
        assert 0.0 <= block[key] <= 1.0, (key, block[key])
    # A hit within k needs a cited gold turn within k, and more items can only find more.
    assert block["recall@1"] <= block["recall@5"] <= block["recall@10"] <= block["recall@50"]
    assert block["recall@10"] <= block["hit@10"] <= block["hit@50"]
    assert block["hit@1"] <= block["mrr"] <= block["hit@10"]


def test_report_shape_and_fractions(report: dict[str, Any]) -> None:
    assert report["format"] == locomo.REPORT_FORMAT
    assert report["settings"]["conversations"] == [0]
    assert list(report["settings"]["modes"]) == ["lexical"]  # mode -> (ranking, lane)
    assert report["rebuild"] == {}  # lexical modes embed nothing
    assert report["corpus"]["questions"] == 40
    assert report["corpus"]["turns"] > 100
    results = report["results"]["lexical"]
    for gold in locomo.GOLDS:
        assert set(results[gold]) == {"dev"}  # conversation 0 is development data
        split = results[gold]["dev"]
        _check_block(split["overall"])
        _check_block(split["overall_without_adversarial"])
        assert split["by_category"]
        for block in split["by_category"].values():
            _check_block(block)
    assert len(report["questions"]) == 40


def test_some_questions_find_their_evidence(report: dict[str, Any]) -> None:
    overall = report["results"]["lexical"]["corrected"]["dev"]["overall"]
    assert overall["hit@10"] > 0.2
    ranks = [q["first_hit"]["lexical"]["original"] for q in report["questions"].values()]
    assert any(rank is not None for rank in ranks)
    assert all(rank is None or 1 <= rank <= locomo.LIMIT for rank in ranks)


def test_the_report_holds_no_text_of_the_data_set(report: dict[str, Any]) -> None:
    # Only ids and numbers leave the data folder (CC BY-NC, evaluation only).
    raw = json.loads((locomo.DEFAULT_DATA / locomo.DATA_FILE).read_text(encoding="utf-8"))
    dumped = json.dumps(report)
    for qa in raw[0]["qa"][:40]:
        assert qa["question"] not in dumped


def test_evidence_ids_and_session_times_are_parsed() -> None:
    assert locomo.parse_evidence(["D3:4; D5:6", "D:7:8", "D", "D9:1 D3:4"]) == [
        "D3:4",
        "D5:6",
        "D7:8",
        "D9:1",
    ]
    assert locomo.session_time("1:05 pm on 2 January, 2023") == 1672664700
    assert locomo.keywords("What did Sam buy?") == "Sam buy"
    assert locomo.keywords("What is it?") == "What is it?"


def test_scores_count_gold_turns_by_rank() -> None:
    scores = locomo.score(["D1:1", None, "D1:2", "D1:3"], frozenset({"D1:2", "D1:9"}))
    assert scores["hit@1"] == 0.0 and scores["recall@5"] == 0.5 and scores["mrr"] == 1 / 3
