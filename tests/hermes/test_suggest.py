"""zkr_suggest: extractor proposals for recent turns, with evidence, and nothing stored."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.hermes.conftest import rows
from zkr_hermes.provider import ZkrMemoryProvider
from zkr_hermes.suggestions import user_side

#: Every table a write of any kind (capture, claim, review) adds a row to.
WRITTEN_TABLES = (
    "sources",
    "evidence",
    "claims",
    "claim_evidence",
    "daily_reviews",
    "memory_commits",
)


def snapshot(db_path: Path) -> dict[str, int]:
    return {t: rows(db_path, f"SELECT count(*) FROM {t}")[0][0] for t in WRITTEN_TABLES}


def test_suggestions_cite_recent_turns_and_store_nothing(
    make_provider: Callable[..., ZkrMemoryProvider], db_path: Path
) -> None:
    provider = make_provider()
    provider.sync_turn("Hi! I live in Lisbon. My name is Ana.", "I like helping, Ana.")
    provider.sync_turn("What's the weather?", "Sunny.")
    # The turns are applied first, so that the snapshot holds everything but suggest's own writes.
    assert provider._flush(10)
    before = snapshot(db_path)
    assert before["sources"] == 2 and before["claims"] == 0
    result = json.loads(provider.handle_tool_call("zkr_suggest", {"turns": 2}))
    assert snapshot(db_path) == before
    assert result["stored"] is False and result["turns_read"] == 2
    assert "rules" in result["extractors"]
    (evidence_id,) = rows(
        db_path, "SELECT origin_evidence_id FROM sources WHERE instr(content, 'Lisbon') > 0"
    )[0]
    claims = {(s["claim"]["predicate"], s["claim"]["value"]) for s in result["suggestions"]}
    assert claims == {("home", "Lisbon"), ("name", "Ana")}  # not the assistant's "I like helping"
    for suggestion in result["suggestions"]:
        assert suggestion["evidence_id"] == evidence_id
        assert suggestion["extractor"] == "rules"
        assert suggestion["claim"]["subject"] == "user"
    # The ready-made arguments store the suggestion as an ordinary cited claim.
    stored = json.loads(
        provider.handle_tool_call("zkr_store", result["suggestions"][0]["store_args"])
    )
    assert stored["claim_id"]
    assert snapshot(db_path) != before
    assert json.loads(provider.handle_tool_call("zkr_suggest", {}))["turns_read"] == 2


def test_no_turns_no_suggestions(make_provider: Callable[..., ZkrMemoryProvider]) -> None:
    result = json.loads(make_provider().handle_tool_call("zkr_suggest", {}))
    assert result["suggestions"] == [] and result["turns_read"] == 0


def test_user_side_of_a_stored_turn() -> None:
    assert user_side("User: I like tea\nAssistant: I like coffee") == "I like tea"
    assert user_side("plain text") == "plain text"
