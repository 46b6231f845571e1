"""The provider's tools, driven the way Hermes' MemoryManager calls them (contract §8.1, §9.7)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.hermes.conftest import rows
from zkr.db import MemoryDb
from zkr.tools import tool_specs
from zkr_hermes.provider import ZkrMemoryProvider

#: zkr's table tools (the same on every host) and Hermes' own zkr_suggest.
TOOLS = {spec.name for spec in tool_specs()} | {"zkr_suggest"}

Make = Callable[..., ZkrMemoryProvider]


def call(provider: ZkrMemoryProvider, tool: str, **args: Any) -> Any:
    raw = provider.handle_tool_call(tool, args)
    assert isinstance(raw, str)
    return json.loads(raw)


def test_schemas_are_static_and_valid_before_initialize() -> None:
    provider = ZkrMemoryProvider()
    schemas = provider.get_tool_schemas()
    assert {s["name"] for s in schemas} == TOOLS
    for schema in schemas:
        assert set(schema) == {"name", "description", "parameters"}
        params = schema["parameters"]
        assert params["type"] == "object"
        assert params["additionalProperties"] is False
        assert set(params.get("required", [])) <= set(params["properties"])
    # Callers may mutate what they get; the next call is unaffected.
    schemas[0]["name"] = "changed"
    assert {s["name"] for s in provider.get_tool_schemas()} == TOOLS


#: For each tool, arguments a model may send and arguments its schema must refuse.
VALID_AND_INVALID: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "zkr_search": ({"query": "tea", "limit": 3}, {"query": "tea", "limit": 51}),
    "zkr_store": (
        {"text": "x", "claim": {"subject": "s", "predicate": "p", "value": "v", "kind": "fact"}},
        {"text": "x", "kind": "?"},
    ),
    "zkr_get": ({"target": {"kind": "claim", "id": "c"}}, {"target": {"kind": "x", "id": "c"}}),
    "zkr_correct": ({"claim_id": "c", "text": "x", "value": "v"}, {"claim_id": "c"}),
    "zkr_delete": ({"source_id": "s", "deleted_at": 5}, {"source_id": "s", "extra": 1}),
    "zkr_reflect": (
        {"day": "2026-05-01", "summary": "s", "evidence_ids": ["e"]},
        {"day": "2026-05-01", "summary": "s", "evidence_ids": "e"},
    ),
    "zkr_suggest": ({"turns": 2}, {"turns": 11}),
    "zkr_memories": ({"claim_kinds": ["fact"]}, {"claim_kinds": ["gossip"]}),
    "zkr_history": ({"claim_id": "c"}, {}),
    "zkr_forget": ({"source_id": "s", "erased_at": 5}, {"source_id": "s", "erased_at": "soon"}),
}


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_parameters_are_valid_draft_2020_12_schemas(name: str) -> None:
    """Hermes hands the schemas to the model provider as JSON Schema: each must be one."""
    (schema,) = [s for s in ZkrMemoryProvider().get_tool_schemas() if s["name"] == name]
    Draft202012Validator.check_schema(schema["parameters"])
    validator = Draft202012Validator(schema["parameters"])
    valid, invalid = VALID_AND_INVALID[name]
    assert list(validator.iter_errors(valid)) == []
    assert list(validator.iter_errors(invalid)) != []


def test_bitemporal_fields_are_explicit() -> None:
    by_name = {
        s["name"]: s["parameters"]["properties"] for s in ZkrMemoryProvider().get_tool_schemas()
    }
    assert {"captured_at", "recorded_at"} <= set(by_name["zkr_store"])
    claim = by_name["zkr_store"]["claim"]["anyOf"][0]["properties"]
    assert "valid_from" in claim
    assert "valid_at" not in by_name["zkr_store"]
    assert {"valid_at", "recorded_at"} <= set(by_name["zkr_correct"])
    assert "occurred_at" not in by_name["zkr_correct"]


def test_store_keeps_captured_valid_and_recorded_times_apart(
    make_provider: Make, db_path: Path
) -> None:
    provider = make_provider()
    stored = call(
        provider,
        "zkr_store",
        text="Sam moved to Berlin",
        claim={
            "subject": "Sam",
            "predicate": "city",
            "value": "Berlin",
            "kind": "fact",
            "valid_from": 50,
        },
        captured_at=100,
        recorded_at=200,
    )
    assert rows(
        db_path, "SELECT captured_at, recorded_at FROM sources WHERE id = ?", (stored["source_id"],)
    ) == [(100, 200)]
    assert rows(
        db_path,
        "SELECT subject, predicate, value, kind, valid_from, recorded_from FROM claims "
        "WHERE id = ?",
        (stored["claim_id"],),
    ) == [("Sam", "city", "Berlin", "fact", 50, 200)]


def test_store_claim_defaults_and_raw_capture(make_provider: Make, db_path: Path) -> None:
    provider = make_provider()
    raw = call(provider, "zkr_store", text="Met Ana at the cafe", captured_at=10, recorded_at=20)
    assert raw["claim_id"] is None
    typed = call(
        provider,
        "zkr_store",
        text="Likes tea",
        claim={"subject": "user", "predicate": "likes", "value": "tea", "kind": "preference"},
        captured_at=30,
        recorded_at=40,
    )
    # claim.valid_from left out: the host's "now" (not captured_at), like every other "now" field
    [(subject, predicate, value, kind, valid_from, recorded_from)] = rows(
        db_path,
        "SELECT subject, predicate, value, kind, valid_from, recorded_from FROM claims "
        "WHERE id = ?",
        (typed["claim_id"],),
    )
    assert (subject, predicate, value, kind, recorded_from) == (
        "user",
        "likes",
        "tea",
        "preference",
        40,
    )
    assert valid_from > 1_700_000_000
    kinds = rows(db_path, "SELECT kind FROM sources ORDER BY captured_at")
    assert kinds == [('"conversation"',), ('"conversation"',)]


def test_round_trip_store_search_correct_reflect_delete(make_provider: Make) -> None:
    """§9.7 item 6, with every time left to its default (all within one second)."""
    provider = make_provider()
    stored = call(
        provider,
        "zkr_store",
        text="Sam works at Acme",
        claim={"subject": "Sam", "predicate": "employer", "value": "Acme", "kind": "fact"},
    )
    found = call(provider, "zkr_search", query="Acme")
    assert found["items"][0]["memory"] == {"kind": "claim", "id": stored["claim_id"]}
    corrected = call(
        provider,
        "zkr_correct",
        claim_id=stored["claim_id"],
        text="Sam now works at Beta",
        value="Beta",
    )
    assert corrected["superseded_claim_id"] == stored["claim_id"]
    review = call(
        provider,
        "zkr_reflect",
        day="2026-05-01",
        summary="Sam changed jobs",
        evidence_ids=[corrected["evidence_id"]],
    )
    assert set(review) == {"id"}
    deleted = call(provider, "zkr_delete", source_id=corrected["source_id"])
    assert deleted["claim_count"] == 1
    assert call(provider, "zkr_search", query="Beta")["items"] == []


def test_scope_cannot_be_overridden_by_tool_arguments(make_provider: Make, db_path: Path) -> None:
    provider = make_provider(user_id="alice")
    assert call(provider, "zkr_store", text="secret plan", tenant_id="evil", person_id="bob") == {
        "error": "unknown field `tenant_id`"
    }
    call(provider, "zkr_store", text="secret plan")
    assert rows(db_path, "SELECT tenant_id, person_id FROM sources") == [("hermes", "alice")]
    other = make_provider(user_id="bob")
    assert call(other, "zkr_search", query="secret plan")["items"] == []


def test_search_limit_and_as_of(make_provider: Make) -> None:
    provider = make_provider()
    call(
        provider,
        "zkr_store",
        text="Sam works at Acme",
        claim={
            "subject": "Sam",
            "predicate": "employer",
            "value": "Acme",
            "kind": "fact",
            "valid_from": 10,
        },
        captured_at=10,
        recorded_at=10,
    )
    assert call(provider, "zkr_search", query="Acme", limit=1)["items"]
    assert (
        call(provider, "zkr_search", query="Acme", as_of={"valid_at": 5, "recorded_at": 5})["items"]
        == []
    )
    assert call(provider, "zkr_search", query="Acme", limit=51) == {
        "error": "invalid value for `limit`: must be at most 50"
    }
    assert "error" in call(provider, "zkr_search", query="Acme", as_of={"valid_at": 5})


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("zkr_store", {}, "missing field `text`"),
        ("zkr_store", {"text": 5}, "invalid value for `text`: Input should be a valid string"),
        (
            "zkr_store",
            {"text": "x", "captured_at": "100"},
            "invalid value for `captured_at`: Input should be a valid integer",
        ),
        (
            "zkr_store",
            {"text": "x", "captured_at": True},
            "invalid value for `captured_at`: Input should be a valid integer",
        ),
        ("zkr_store", {"content": "x"}, "unknown field `content`"),
        ("zkr_correct", {"claim_id": "c", "value": "v"}, "missing field `text`"),
        (
            "zkr_reflect",
            {"day": "d", "summary": "s", "evidence_ids": "e"},
            "invalid value for `evidence_ids`: Input should be a valid list",
        ),
        ("zkr_suggest", {"turns": 99}, "turns must be between 1 and 10"),
    ],
)
def test_argument_errors_are_explained(
    make_provider: Make, tool: str, args: dict[str, Any], message: str
) -> None:
    assert call(make_provider(), tool, **args) == {"error": message}


def test_zkr_errors_carry_the_contract_message(make_provider: Make) -> None:
    provider = make_provider()
    assert call(provider, "zkr_delete", source_id="missing") == {
        "error": "zkr operation failed",
        "detail": "record not found",
    }
    assert call(provider, "zkr_store", text="   ") == {
        "error": "zkr operation failed",
        "detail": "text must not be empty",
    }
    assert call(provider, "zkr_store", text="x", kind="dream")["error"].startswith(
        "unknown variant `dream`"
    )


def test_internal_errors_are_redacted(make_provider: Make, monkeypatch: pytest.MonkeyPatch) -> None:
    provider = make_provider()

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("/secret/path/zkr.db: disk I/O error")

    monkeypatch.setattr(MemoryDb, "run", boom)
    raw = provider.handle_tool_call("zkr_search", {"query": "anything"})
    assert json.loads(raw) == {"error": "zkr operation failed"}
    assert "secret" not in raw


def test_unknown_tool_bad_args_and_uninitialized_provider_return_json(make_provider: Make) -> None:
    provider = make_provider()
    assert call(provider, "nope") == {"error": "Unknown tool: nope"}
    assert json.loads(provider.handle_tool_call("zkr_search", ["not", "a", "dict"])) == {  # type: ignore[arg-type]
        "error": "arguments must be a JSON object"
    }
    fresh = ZkrMemoryProvider()
    assert json.loads(fresh.handle_tool_call("zkr_search", {"query": "x"})) == {
        "error": "zkr memory is not available"
    }
    provider.shutdown()
    assert json.loads(provider.handle_tool_call("zkr_search", {"query": "x"})) == {
        "error": "zkr memory is not available"
    }


def test_a_tool_call_retries_once_when_the_database_stays_locked(
    make_provider: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    provider = make_provider()
    real_run = MemoryDb.run
    failures = [sqlite3.OperationalError("database is locked")]

    def locked_once(db: MemoryDb, name: Any, payload: Any) -> Any:
        if failures:
            raise failures.pop()
        return real_run(db, name, payload)

    monkeypatch.setattr(MemoryDb, "run", locked_once)
    assert "source_id" in call(provider, "zkr_store", text="stored on the second try")
    failures.extend([sqlite3.OperationalError("database is locked")] * 2)
    assert call(provider, "zkr_store", text="never stored") == {
        "error": "zkr operation failed",
        "detail": "memory database is busy, try again",
    }


@pytest.mark.parametrize(
    ("ranking", "found"), [(None, True), ("recall", True), ("contract", False)]
)
def test_search_ranks_for_recall_unless_configured(
    make_provider: Make,
    monkeypatch: pytest.MonkeyPatch,
    ranking: str | None,
    found: bool,
) -> None:
    """zkr_search and the turn's recall use the recall ranking by default (a stemmed word finds
    its memory); ``ZKR_RANKING=contract`` gives zkr 0.2.3's order, which does not stem."""
    if ranking is not None:
        monkeypatch.setenv("ZKR_RANKING", ranking)
    provider = make_provider()
    stored = call(provider, "zkr_store", text="My sister works as a nurse")
    items = call(provider, "zkr_search", query="nurses")["items"]
    assert [item["evidence_ids"] for item in items] == ([[stored["evidence_id"]]] if found else [])
