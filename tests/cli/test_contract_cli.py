"""Contract §9.6: the original CLI tests, one test per line, named after it.

Each runs the real command in a subprocess on a temporary database.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import MAX_REQUEST_BYTES, Outcome, db_snapshot, remember_payload

Zkr = Callable[..., Outcome]
SCOPE = {"tenant_id": "a", "person_id": "sam"}


def test_json_cli_rejects_oversized_requests_before_deserialization(
    zkr: Zkr, db_path: Path
) -> None:
    # Valid JSON missing every required field: only the size check may answer.
    body = b'{"padding":"' + b"x" * MAX_REQUEST_BYTES + b'"}'
    assert zkr("remember", body).error == "request exceeds 1048576 bytes"
    assert zkr("search", body).error == "request exceeds 1048576 bytes"
    assert db_snapshot(db_path)["memory_commits"] == []


def test_json_cli_remembers_and_returns_cited_search_results(zkr: Zkr) -> None:
    stored = zkr("remember", remember_payload("Acme")).json
    assert set(stored) == {"claim_id", "evidence_id", "source_id"}

    pack = zkr("search", {**SCOPE, "query": "Acme"}).json
    assert pack["query"] == "Acme"
    assert pack["gaps"] == []
    [item] = pack["items"]
    assert item["evidence_ids"] == [stored["evidence_id"]]
    assert item["memory"] == {"kind": "claim", "id": stored["claim_id"]}

    got = zkr("get", {**SCOPE, "target": item["memory"]}).json
    assert got["excerpt"] == "Sam employer Acme"
    assert got["relevance_basis_points"] == 10000

    issues = zkr("projections", {**SCOPE, "model": "m", "version": "v", "limit": 1}).json
    assert len(issues) == 1
    assert issues[0]["state"] == "missing"
    assert issues[0]["input"]["input_hash"].startswith("sha256:")


def test_json_cli_retrieves_raw_capture_without_a_claim(zkr: Zkr) -> None:
    stored = zkr("remember", remember_payload("Acme", claim=None, text="Sam drinks tea")).json
    assert stored["claim_id"] is None
    [item] = zkr("search", {**SCOPE, "query": "tea"}).json["items"]
    assert item["memory"] == {"kind": "source", "id": stored["source_id"]}
    assert item["evidence_ids"] == [stored["evidence_id"]]
    assert item["excerpt"] == "Sam drinks tea"


def test_json_cli_stores_a_profile_and_explicit_contradiction(zkr: Zkr) -> None:
    payload = remember_payload("Acme")
    payload["claim"]["kind"] = "profile_fact"
    stored = zkr("remember", payload).json
    entry = zkr(
        "profile",
        {**SCOPE, "stability": "stable", "claim_id": stored["claim_id"], "recorded_at": 10},
    ).ok()
    assert entry["key"] == "employer"
    assert entry["value"] == "Acme"

    other = zkr("remember", remember_payload("x", claim=None, text="Sam left Acme")).json
    linked = zkr(
        "link",
        {
            **SCOPE,
            "claim_id": stored["claim_id"],
            "evidence_id": other["evidence_id"],
            "relation": "contradicts",
            "confidence_basis_points": 7000,
        },
    )
    assert linked.json == {"ok": True}
    assert linked.stdout == b'{"ok":true}\n'
    assert len(zkr("profiles", SCOPE).json) == 1


def test_json_cli_rejects_ingestion_key_conflicts_and_deleted_replays(zkr: Zkr) -> None:
    payload = remember_payload("Acme", ingestion_key="turn-1")
    first = zkr("remember", payload)
    replay = zkr("remember", payload)
    assert replay.stdout == first.stdout
    assert zkr("remember", {**payload, "text": "Sam works at Beta"}).error == (
        "ingestion_key conflicts with different memory payload"
    )
    deleted = zkr("delete", {**SCOPE, "source_id": first.json["source_id"], "deleted_at": 20})
    assert deleted.json["source_id"] == first.json["source_id"]
    assert zkr("remember", payload).error == "record not found"


def test_database_help_matches_the_documented_command(
    run: Callable[..., Outcome], tmp_path: Path
) -> None:
    folder = tmp_path / "dbs"
    folder.mkdir()
    path = folder / "never-created.db"
    shown = run("--db", str(path), "help")
    assert shown.returncode == 0
    assert shown.stderr == b""
    text = shown.stdout.decode()
    assert text.startswith("zkr --db PATH COMMAND\n")
    assert "  get " in text and "  export " in text
    assert not path.exists()
    assert list(folder.iterdir()) == []


def test_json_cli_round_trips_transcript_evidence_locator(zkr: Zkr) -> None:
    locator = {
        "device_id": "omi-1",
        "provider": "deepgram",
        "stream_id": "stream-1",
        "segment_id": "segment-4",
        "start_ms": 1200,
        "end_ms": 2900,
    }
    payload = remember_payload(
        "Acme", kind="audio", claim=None, ingestion_key="omi:segment-4", locator=locator
    )
    first = zkr("remember", payload)
    assert zkr("remember", payload).stdout == first.stdout
    got = zkr("locator", {**SCOPE, "evidence_id": first.json["evidence_id"]})
    assert got.json == locator
    assert got.stdout == (
        b'{"device_id":"omi-1","end_ms":2900,"provider":"deepgram",'
        b'"segment_id":"segment-4","start_ms":1200,"stream_id":"stream-1"}\n'
    )


def test_json_cli_exports_a_frozen_scoped_commit_page(zkr: Zkr) -> None:
    zkr("remember", remember_payload("Acme")).ok()
    zkr("remember", remember_payload("Other", tenant_id="b")).ok()
    page = zkr("export", {**SCOPE, "export_format": 1, "after_commit": 0}).json
    assert page["complete"] is True
    assert page["export_format"] == 1
    assert page["high_water_mark"] == page["next_after_commit"]
    [commit] = page["commits"]
    kinds = [record["kind"] for record in commit["records"]]
    assert kinds == ["source", "evidence", "claim", "claim_evidence"]
    assert commit["event_count"] == 4


def test_json_cli_rejects_invalid_export_cursors(zkr: Zkr) -> None:
    request = {**SCOPE, "export_format": 1, "after_commit": -1}
    assert zkr("export", request).error == "after_commit must not be negative"


@pytest.mark.slow
def test_json_cli_split_correction_requires_a_complete_commit_before_cursor_advance(
    zkr: Zkr,
) -> None:
    stored = zkr("remember", remember_payload("Acme")).json
    zkr(
        "correct",
        {
            **SCOPE,
            "claim_id": stored["claim_id"],
            "text": "Sam moved to Beta",
            "value": "Beta",
            "valid_at": 20,
            "recorded_at": 20,
        },
    ).ok()

    cursor: dict[str, Any] = {"after_commit": 0, "after_event_index": -1}
    mark: int | None = None
    staged: dict[int, list[int]] = {}
    event_counts: dict[int, int] = {}
    applied: list[tuple[int, list[dict[str, Any]]]] = []
    records: dict[int, list[dict[str, Any]]] = {}
    for _ in range(50):
        request = {**SCOPE, "export_format": 1, "limit": 1, **cursor}
        if mark is not None:
            request["high_water_mark"] = mark
        page = zkr("export", request).json
        mark = page["high_water_mark"]
        for commit in page["commits"]:
            sequence = commit["sequence"]
            indexes = staged.setdefault(sequence, [])
            first = commit["first_event_index"]
            assert first == len(indexes), "events arrive contiguously"
            indexes.extend(range(first, first + len(commit["records"])))
            assert (
                event_counts.setdefault(sequence, commit["event_count"]) == (commit["event_count"])
            )
            assert len(commit["records"]) <= 1
            records.setdefault(sequence, []).extend(commit["records"])
            if len(indexes) == commit["event_count"]:
                assert indexes == list(range(commit["event_count"]))
                applied.append((sequence, records[sequence]))
        cursor = {
            "after_commit": page["next_after_commit"],
            "after_event_index": page["next_after_event_index"],
        }
        if page["complete"]:
            break
    assert len(applied) == 2
    last_sequence, last_records = applied[-1]
    assert last_sequence == mark
    assert "correction" in [record["kind"] for record in last_records]
