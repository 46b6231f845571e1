"""The OpenClaw <-> zkr shape mapping, on plain data (no database)."""

from __future__ import annotations

import pytest

from zkr_openclaw_bridge import mapping


def item(excerpt: str = "User prefers concise reports\nsecond line", bp: int = 9000) -> dict:
    return {
        "memory": {"kind": "claim", "id": "c-1"},
        "excerpt": excerpt,
        "relevance_basis_points": bp,
        "evidence_ids": ["e-1"],
    }


def test_an_item_becomes_a_cited_search_result_covering_its_lines() -> None:
    assert mapping.search_result(item()) == {
        "path": "zkr://claim/c-1",
        "startLine": 1,
        "endLine": 2,
        "score": 0.9,
        "snippet": "User prefers concise reports\nsecond line",
        "source": "memory",
        "citation": "e-1",
        "corpus": "memory",
    }


def test_min_score_keeps_results_at_or_above_it_in_pack_order() -> None:
    pack = {"items": [item(bp=10000), item(bp=5000), item(bp=4999)], "gaps": [], "query": "q"}
    assert [r["score"] for r in mapping.search_results(pack, 0.5)] == [1.0, 0.5]
    assert len(mapping.search_results(pack)) == 3


@pytest.mark.parametrize("kind", ["source", "evidence", "claim"])
def test_paths_round_trip_for_every_kind_get_can_read(kind: str) -> None:
    path = mapping.memory_path(kind, "4c5ee80b5ff908d239c8486b84731822")
    assert mapping.parse_memory_path(path) == {
        "kind": kind,
        "id": "4c5ee80b5ff908d239c8486b84731822",
    }


@pytest.mark.parametrize(
    "path",
    [
        "/etc/passwd",
        "zkr://claim/../../etc/passwd",
        "zkr://claim/a/b",
        "zkr://claim/",
        "zkr://claim/a b",
        "zkr://claim/x\n",
        "zkr://daily_review/x",
        "ZKR://claim/x",
        "zkr://claim/" + "x" * 201,
        " zkr://claim/x",
        "memory/2026-01-02.md",
    ],
)
def test_anything_but_a_record_reference_is_not_a_path(path: str) -> None:
    assert mapping.parse_memory_path(path) is None


def test_a_read_window_pages_through_the_excerpt() -> None:
    three = item("one\r\ntwo\nthree")
    assert mapping.read_window(three, "zkr://claim/c-1") == {
        "text": "one\ntwo\nthree",
        "path": "zkr://claim/c-1",
        "from": 1,
        "lines": 3,
        "truncated": False,
    }
    assert mapping.read_window(three, "p", 2, 1) == {
        "text": "two",
        "path": "p",
        "from": 2,
        "lines": 1,
        "truncated": True,
        "nextFrom": 3,
    }


def test_a_window_past_the_end_is_empty_and_not_truncated() -> None:
    window = mapping.read_window(item("one"), "p", 5, 2)
    assert (window["text"], window["lines"], window["truncated"]) == ("", 0, False)
    assert "nextFrom" not in window


def test_the_default_window_is_fifty_lines() -> None:
    long = item("\n".join(str(n) for n in range(1, 61)))
    window = mapping.read_window(long, "p")
    assert window["lines"] == mapping.DEFAULT_READ_LINES == 50
    assert window["nextFrom"] == 51
