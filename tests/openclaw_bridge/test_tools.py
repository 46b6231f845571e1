"""Tool calls against a real zkr database: arguments checked, scope forced, errors sorted."""

from __future__ import annotations

import json
from typing import Any

import pytest

from zkr.errors import IntegrityError, RequestParseError
from zkr.operations import OPERATIONS
from zkr.tools import tool_specs
from zkr_openclaw_bridge import tools
from zkr_openclaw_bridge.install import plugin_dir


def test_memory_search_returns_the_cited_claim(call: Any, plans: dict[str, Any]) -> None:
    answer = call("memory_search", {"query": "plans"})
    assert answer == {
        "details": {
            "provider": "zkr",
            "results": [
                {
                    "path": f"zkr://claim/{plans['claim_id']}",
                    "startLine": 1,
                    "endLine": 1,
                    "score": 1.0,
                    "snippet": "me prefers short plans",
                    "source": "memory",
                    "citation": plans["evidence_id"],
                    "corpus": "memory",
                }
            ],
        }
    }


def test_memory_get_reads_what_search_found(call: Any, plans: dict[str, Any]) -> None:
    path = call("memory_search", {"query": "plans"})["details"]["results"][0]["path"]
    details = call("memory_get", {"path": path, "from": 1, "lines": 5})["details"]
    assert details == {
        "text": "me prefers short plans",
        "path": path,
        "from": 1,
        "lines": 1,
        "truncated": False,
    }
    evidence = call("memory_get", {"path": f"zkr://evidence/{plans['evidence_id']}"})["details"]
    assert evidence["text"] == "I prefer short plans."


def test_the_scope_is_the_configured_tenant_and_the_agent(call: Any, plans: dict[str, Any]) -> None:
    assert call("memory_search", {"query": "plans"}, person="other")["details"]["results"] == []
    path = f"zkr://claim/{plans['claim_id']}"
    assert call("memory_get", {"path": path}, person="other")["details"] == {
        "path": path,
        "text": "",
        "disabled": True,
        "error": "record not found",
    }


def test_max_results_limits_and_min_score_filters(call: Any, db: Any) -> None:
    for n in range(3):
        call(
            "zkr_store",
            {
                "kind": "conversation",
                "text": f"note {n} about gardens",
                "captured_at": 10 + n,
                "recorded_at": 10 + n,
            },
        )
    assert len(call("memory_search", {"query": "gardens"})["details"]["results"]) == 3
    assert (
        len(call("memory_search", {"query": "gardens", "maxResults": 2})["details"]["results"]) == 2
    )
    kept = call("memory_search", {"query": "gardens", "minScore": 1})["details"]["results"]
    assert [r["score"] for r in kept] == [1.0]


def test_an_invalid_path_is_a_disabled_read(call: Any) -> None:
    assert call("memory_get", {"path": "/etc/passwd"}) == {
        "details": {
            "path": "/etc/passwd",
            "text": "",
            "disabled": True,
            "error": "invalid zkr memory path",
        }
    }


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("memory_search", {}, "query must be a non-empty string"),
        ("memory_search", {"query": "  "}, "query must be a non-empty string"),
        ("memory_search", {"query": ["--db", "/etc/passwd"]}, "query must be a non-empty string"),
        (
            "memory_search",
            {"query": "x", "maxResults": 0},
            "maxResults must be an integer in 1..100",
        ),
        (
            "memory_search",
            {"query": "x", "maxResults": 101},
            "maxResults must be an integer in 1..100",
        ),
        (
            "memory_search",
            {"query": "x", "maxResults": 2.5},
            "maxResults must be an integer in 1..100",
        ),
        (
            "memory_search",
            {"query": "x", "maxResults": True},
            "maxResults must be an integer in 1..100",
        ),
        ("memory_search", {"query": "x", "minScore": 2}, "minScore must be a number in 0..1"),
        ("memory_search", {"query": "x", "minScore": "0.5"}, "minScore must be a number in 0..1"),
        (
            "memory_search",
            {"query": "x", "__proto__": {"polluted": 1}},
            "unknown field `__proto__`",
        ),
        ("memory_search", {"query": "x", "constructor": {}}, "unknown field `constructor`"),
        (
            "memory_get",
            {"path": "zkr://claim/x", "from": 0},
            "from and lines must be positive integers",
        ),
        (
            "memory_get",
            {"path": "zkr://claim/x", "lines": -1},
            "from and lines must be positive integers",
        ),
        ("memory_get", {"path": 7}, "path must be a string"),
        (
            "zkr_store",
            {
                "kind": "conversation",
                "text": "x",
                "captured_at": 1,
                "recorded_at": 1,
                "tenant_id": "someone-else",
            },
            "unknown field `tenant_id`",
        ),
        ("zkr_store", {"kind": "conversation", "recorded_at": 1}, "missing field `text`"),
        ("zkr_store", {"text": "x", "content": "x"}, "unknown field `content`"),
        (
            "zkr_correct",
            {"claim_id": "nope", "text": "t", "value": "v", "valid_at": 1, "recorded_at": 1},
            "record not found",
        ),
        (
            "zkr_search",
            {"query": "x", "limit": 51},
            "invalid value for `limit`: must be at most 50",
        ),
        ("zkr_search", {"query": "x", "person_id": "bob"}, "unknown field `person_id`"),
    ],
)
def test_arguments_the_model_got_wrong_are_tool_errors(
    call: Any, tool: str, args: dict[str, Any], message: str
) -> None:
    assert call(tool, args) == {"tool_error": message}


@pytest.mark.parametrize("args", [None, "query", ["query"], 7])
def test_arguments_must_be_an_object(call: Any, args: Any) -> None:
    assert call("memory_search", args) == {"tool_error": "arguments must be a JSON object"}


def test_explicit_tools_run_their_operation_in_the_forced_scope(call: Any) -> None:
    stored = call(
        "zkr_store",
        {
            "kind": "conversation",
            "text": "Sam works at Acme",
            "captured_at": 10,
            "recorded_at": 10,
            "claim": {
                "subject": "Sam",
                "predicate": "employer",
                "value": "Acme",
                "kind": "fact",
                "valid_from": 10,
            },
        },
    )["details"]
    pack = call("zkr_search", {"query": "Acme"})["details"]
    assert pack["items"][0]["memory"] == {"kind": "claim", "id": stored["claim_id"]}
    assert call("zkr_search", {"query": "Acme"}, person="other")["details"]["items"] == []
    corrected = call(
        "zkr_correct",
        {
            "claim_id": stored["claim_id"],
            "text": "Sam moved to Beta",
            "value": "Beta",
            "valid_at": 20,
            "recorded_at": 20,
        },
    )["details"]
    assert corrected["superseded_claim_id"] == stored["claim_id"]
    review = call(
        "zkr_reflect",
        {
            "day": "2026-01-02",
            "summary": "Sam changed jobs",
            "evidence_ids": [corrected["evidence_id"]],
            "recorded_at": 21,
        },
    )
    assert set(review["details"]) == {"id"}
    deleted = call("zkr_delete", {"source_id": stored["source_id"], "deleted_at": 30})["details"]
    assert deleted["source_id"] == stored["source_id"]


@pytest.mark.parametrize(
    "payload",
    [
        {"tenant_id": "t", "person_id": "p", "tool": "exec", "args": {}},
        {"tenant_id": "t", "person_id": "p", "tool": "memory_search"},
        {"tenant_id": 1, "person_id": "p", "tool": "memory_search", "args": {}},
        ["t", "p", "memory_search", {}],
    ],
)
def test_a_malformed_envelope_is_a_plugin_bug_not_a_tool_error(db: Any, payload: Any) -> None:
    with pytest.raises(RequestParseError):
        tools.run_tool(db, payload)


def test_storage_failures_are_not_tool_facing(call: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise IntegrityError("evidence and claim must share a scope")

    monkeypatch.setattr("zkr.tool_calls.run_scoped", broken)
    with pytest.raises(IntegrityError):
        call("memory_search", {"query": "x"})


def test_tools_json_manifest_and_operations_agree() -> None:
    manifest = json.loads((plugin_dir() / "openclaw.plugin.json").read_text("utf-8"))
    definitions = tools.tool_definitions()
    assert manifest["contracts"]["tools"] == list(tools.TOOL_NAMES) == list(definitions)
    for name, definition in definitions.items():
        assert definition["parameters"]["additionalProperties"] is False, name
        assert "tenant_id" not in definition["parameters"]["properties"], name
        assert definition.get("operation", "search") in OPERATIONS, name
    assert {d.get("operation") for d in definitions.values()} == {None} | {
        spec.operation for spec in tool_specs()
    }


def test_write_tools_offer_the_bitemporal_fields_and_fill_now_when_left_out(call: Any) -> None:
    properties = {n: d["parameters"]["properties"] for n, d in tools.tool_definitions().items()}
    assert {"captured_at", "recorded_at"} <= set(properties["zkr_store"])
    assert {"valid_at", "recorded_at"} <= set(properties["zkr_correct"])
    assert "as_of" in properties["zkr_search"]
    stored = call("zkr_store", {"text": "Sam works at Acme"})["details"]
    got = call("zkr_get", {"target": {"kind": "source", "id": stored["source_id"]}})["details"]
    assert got["memory"] == {"kind": "source", "id": stored["source_id"]}
