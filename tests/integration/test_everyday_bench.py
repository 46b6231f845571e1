"""The everyday benchmark's scorer (``benchmarks/everyday.py``), lexically on a slice of its
questions: the data loads and is consistent, the report has the documented shape, and the scorer
counts what it says it counts (hit@k, a superseded version above its current one, an unrelated
first item). The data is the repository's own; no model is needed. No timing is asserted."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SLICE = ("q01", "q05", "q06", "q09", "q19", "q22", "q54")


def _load_script() -> ModuleType:
    name = "zkr_benchmarks_everyday"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / "everyday.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


everyday = _load_script()


def test_the_data_is_consistent() -> None:
    person, events, questions = everyday.load()
    assert person == "me"
    ids = [event.id for event in events]
    assert len(ids) == len(set(ids)) >= 100
    assert 50 <= len(questions) <= 80
    assert len({question.id for question in questions}) == len(questions)
    # Every correction names an earlier event that recorded a claim (or corrected one).
    claimed: set[str] = set()
    for event in events:
        if event.corrects is not None:
            assert event.corrects in claimed and event.value
            claimed.add(event.id)
        elif event.claim is not None:
            claimed.add(event.id)
    kinds = {event.claim["k"] for event in events if event.claim is not None}
    assert kinds == {"fact", "profile_fact", "preference", "task", "skill", "recommendation"}
    topics = set().union(*(event.topics for event in events))
    assert all(question.topic in topics for question in questions)


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    result: dict[str, Any] = everyday.evaluate(["contract", "recall-lexical"], questions=SLICE)
    return result


def test_the_report_has_its_shape(report: dict[str, Any]) -> None:
    assert report["questions"] == len(SLICE) and report["skipped"] == []
    assert set(report["modes"]) == {"contract", "recall-lexical"}
    for block in report["modes"].values():
        summary = block["summary"]
        assert summary["questions"] == len(SLICE)
        for metric in ("hit@1", "hit@3", "hit@10", "mrr", "unrelated_at_1"):
            assert 0.0 <= summary[metric] <= 1.0
        assert summary["hit@1"] <= summary["hit@3"] <= summary["hit@10"]
        assert set(block["answers"]) == set(SLICE)
    # The recall ranking answers "where do I work now?" with the current employer claim (the
    # event of its last correction), and finds the claim `me plans "fly to Berlin"` by `Berlin`.
    answers = report["modes"]["recall-lexical"]["answers"]
    assert answers["q01"][0] == "e048" and answers["q19"][0] == "e072"
    assert report["modes"]["recall-lexical"]["summary"]["superseded_above_current"] == 0


def test_the_scorer_counts_what_it_says() -> None:
    stored = everyday.Stored("me")
    stored.event_of.update({"old": "e001", "new": "e048", "tea": "e012", "dog": "e005"})
    stored.current.update({"old": "new", "new": "new"})
    stored.superseded.add("old")
    topics = {"e001": frozenset({"work"}), "e048": frozenset({"work"}),
              "e012": frozenset({"food"}), "e005": frozenset({"pets"})}  # fmt: skip
    question = everyday.Question("q", "where do I work?", frozenset({"e048"}), "work")
    right = everyday.score(["new", "tea"], question, stored, topics)
    assert (right["hit@1"], right["mrr"], right["superseded_above_current"]) == (1.0, 1.0, 0.0)
    assert right["unrelated_at_1"] == 0.0
    stale = everyday.score(["tea", "old", "dog", "new"], question, stored, topics)
    assert (stale["hit@1"], stale["hit@3"], stale["hit@10"]) == (0.0, 0.0, 1.0)
    assert stale["mrr"] == 0.25 and stale["superseded_above_current"] == 1.0
    assert stale["unrelated_at_1"] == 1.0
    assert everyday.score([], question, stored, topics)["empty"] == 1.0
