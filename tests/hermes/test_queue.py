"""The write-behind queue and its worker: durability, idempotent replay, recovery, quarantine."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.hermes.conftest import rows, write_locked
from zkr_hermes import provider as provider_module
from zkr_hermes import worker as worker_module
from zkr_hermes.config import (
    ORIGIN_GATEWAY,
    ORIGIN_PINNED,
    Scope,
    ScopePolicy,
    load_config,
    resolve_scope,
)
from zkr_hermes.provider import ZkrMemoryProvider
from zkr_hermes.queue import TurnQueue
from zkr_hermes.worker import Verdict, judge_row

Make = Callable[..., ZkrMemoryProvider]


def queue_of(db_path: Path) -> TurnQueue:
    return TurnQueue(db_path.with_name(db_path.name + ".queue"))


def turn_payload(text: str, key: str, tenant: str = "hermes", person: str = "default") -> str:
    return json.dumps(
        {
            "tenant_id": tenant,
            "person_id": person,
            "kind": "conversation",
            "text": text,
            "captured_at": 10,
            "recorded_at": 11,
            "ingestion_key": key,
            "claim": None,
        }
    )


def sources_with(db_path: Path, text: str) -> list[tuple[Any, ...]]:
    return rows(
        db_path,
        "SELECT tenant_id, person_id, content FROM sources WHERE instr(content, ?) > 0",
        (text,),
    )


def test_sync_turn_is_on_disk_before_it_returns(make_provider: Make, db_path: Path) -> None:
    provider = make_provider()
    with write_locked(db_path):  # the worker cannot apply anything meanwhile
        provider.sync_turn("I live in Lisbon", "Noted.")
        pending = rows(
            db_path.with_name("zkr.db.queue"), "SELECT payload, attempts FROM pending_turns"
        )
    assert len(pending) == 1
    payload = json.loads(pending[0][0])
    assert payload["text"] == "User: I live in Lisbon\nAssistant: Noted."
    assert payload["ingestion_key"].startswith("hermes-turn:")
    assert (payload["tenant_id"], payload["person_id"], payload["kind"]) == (
        "hermes",
        "default",
        "conversation",
    )
    assert rows(db_path.with_name("zkr.db.queue"), "PRAGMA journal_mode") == [("delete",)]
    assert provider._flush(10)
    assert sources_with(db_path, "Lisbon") == [
        ("hermes", "default", "User: I live in Lisbon\nAssistant: Noted.")
    ]


def test_turn_times_come_from_turn_start_and_sync(
    make_provider: Make, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = make_provider()
    clock = iter([1000, 1010])
    monkeypatch.setattr(provider_module, "_now", lambda: next(clock))
    provider.on_turn_start(1, "What is my name?")
    provider.sync_turn("What is my name?", "You are Ana.")
    assert provider._flush(10)
    assert rows(db_path, "SELECT captured_at, recorded_at FROM sources") == [(1000, 1010)]


def test_blank_turns_are_skipped(make_provider: Make, db_path: Path) -> None:
    provider = make_provider()
    provider.sync_turn("   ", "anything")
    assert queue_of(db_path).count_pending() == 0
    assert queue_of(db_path).failed() == []


def test_replayed_rows_store_one_memory(make_provider: Make, db_path: Path) -> None:
    queue = queue_of(db_path)
    queue.enqueue(turn_payload("replayed turn", "hermes-turn:same"))
    queue.enqueue(turn_payload("replayed turn", "hermes-turn:same"))
    provider = make_provider()
    assert provider._flush(10)
    assert len(sources_with(db_path, "replayed turn")) == 1
    assert queue.failed() == []


def test_pending_turns_are_recovered_on_start(
    make_provider: Make, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """§9.7 item 7: a turn left pending at shutdown is applied by the next provider."""
    budget = 0.5
    monkeypatch.setattr(provider_module, "SHUTDOWN_FLUSH_SECONDS", budget)
    first = make_provider()
    with write_locked(db_path) as lock:
        first.sync_turn("My cat is called Miso", "Cute!")
        started = time.monotonic()
        first.shutdown()  # bounded: returns while the database is still locked
        elapsed = time.monotonic() - started
        assert lock.in_transaction
    # The bound is the contract: it tries for its budget, then gives up (generous slack for a
    # loaded machine; SQLite's own busy wait is 5 s, so an unbounded join would exceed it).
    assert budget - 0.05 <= elapsed < budget + 2.0
    assert queue_of(db_path).count_pending() == 1
    second = make_provider(session_id="session-2")
    assert second._flush(10)
    assert len(sources_with(db_path, "Miso")) == 1
    assert "Miso" in second.prefetch("cat Miso")


def test_shutdown_budget_fits_inside_hermes_drain_budget() -> None:
    """Hermes 0.19.0 drains its sync worker for 5 s and then calls shutdown with no limit."""
    hermes_sync_drain_seconds = 5.0
    assert hermes_sync_drain_seconds > provider_module.SHUTDOWN_FLUSH_SECONDS + 1.5


def test_foreign_scope_rows_are_quarantined(
    make_provider: Make, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """§9.7 item 11 / acceptance 3: other tenants (and other persons when the person is pinned)."""
    monkeypatch.setenv("ZKR_PERSON", "ana")
    queue = queue_of(db_path)
    queue.enqueue(turn_payload("foreign tenant text", "k1", tenant="other", person="ana"))
    queue.enqueue(turn_payload("foreign person text", "k2", person="bob"))
    queue.enqueue(turn_payload("local text", "k3", person="ana"))
    provider = make_provider()
    assert provider._flush(10)
    failed = queue.failed()
    assert [(json.loads(f.payload)["ingestion_key"], f.last_error) for f in failed] == [
        ("k1", "queued payload outside provider scope"),
        ("k2", "queued payload outside provider scope"),
    ]
    assert sources_with(db_path, "foreign") == []
    assert sources_with(db_path, "local text") == [("hermes", "ana", "local text")]
    assert json.loads(provider.handle_tool_call("zkr_search", {"query": "foreign"}))["items"] == []


def test_default_cli_scope_quarantines_another_persons_rows(
    make_provider: Make, db_path: Path
) -> None:
    """Issue 8: with nothing configured, a CLI session's person (the agent identity) is pinned."""
    queue = queue_of(db_path)
    queue.enqueue(turn_payload("bob's legacy turn", "k1", person="bob"))
    queue.enqueue(turn_payload("bob's cli turn", "k2", person="bob"), origin=ORIGIN_PINNED)
    queue.enqueue(turn_payload("own turn", "k3"), origin=ORIGIN_PINNED)
    provider = make_provider()
    assert provider.scope is not None and provider.scope.person_id == "default"
    assert provider._flush(10)
    assert [(json.loads(f.payload)["ingestion_key"], f.last_error) for f in queue.failed()] == [
        ("k1", "queued payload outside provider scope"),
        ("k2", "queued payload outside provider scope"),
    ]
    assert queue.count_pending() == 0
    assert sources_with(db_path, "bob's") == []
    assert sources_with(db_path, "own turn") == [("hermes", "default", "own turn")]


def test_a_gateway_users_pending_turn_waits_for_that_users_next_session(
    make_provider: Make, db_path: Path
) -> None:
    """Gateway: one queue, many chat users. ana's provider never applies bob's turn (nor
    quarantines it); bob's next session applies it, exactly once."""
    gateway = {"platform": "telegram", "agent_identity": "default"}
    queue = queue_of(db_path)
    # What a gateway process that died (or shut down on a locked database) leaves behind for bob,
    # and a turn carol's CLI left: neither is the gateway's to judge.
    bob_turn = turn_payload("bob's pending turn", "k-bob", person="bob")
    queue.enqueue(bob_turn, origin=ORIGIN_GATEWAY)
    queue.enqueue(turn_payload("carol's cli turn", "k-carol", person="carol"), origin=ORIGIN_PINNED)
    ana = make_provider(session_id="chat-ana", user_id="ana", **gateway)
    with write_locked(db_path):
        ana.sync_turn("ana's turn", "ok")
        assert [p.origin for p in queue.pending()] == [ORIGIN_GATEWAY, ORIGIN_PINNED, "gateway"]
    assert ana._flush(10)  # bob's and carol's rows do not count as ana's backlog
    assert sources_with(db_path, "ana's turn") != []
    assert sources_with(db_path, "pending turn") == []
    assert queue.count_pending() == 2 and queue.failed() == []

    again = make_provider(session_id="chat-bob-2", user_id="bob", **gateway)
    assert again._flush(10)
    assert sources_with(db_path, "pending turn") == [("hermes", "bob", "bob's pending turn")]
    again.shutdown()
    assert make_provider(session_id="chat-bob-3", user_id="bob", **gateway)._flush(10)
    assert len(sources_with(db_path, "pending turn")) == 1
    assert [json.loads(p.payload)["person_id"] for p in queue.pending()] == ["carol"]
    assert queue.failed() == []


def test_a_cli_session_leaves_gateway_users_turns_pending(
    make_provider: Make, db_path: Path
) -> None:
    """A CLI and a gateway on one Hermes home share the queue: the CLI's pinned person does not
    make the gateway users' turns foreign."""
    queue = queue_of(db_path)
    queue.enqueue(turn_payload("ana's gateway turn", "k-ana", person="ana"), origin=ORIGIN_GATEWAY)
    queue.enqueue(
        turn_payload("other tenant", "k-t", tenant="acme", person="ana"), origin=ORIGIN_GATEWAY
    )
    cli = make_provider()
    assert cli._flush(10)
    assert [json.loads(f.payload)["ingestion_key"] for f in queue.failed()] == ["k-t"]
    assert queue.count_pending() == 1 and sources_with(db_path, "gateway turn") == []
    cli.shutdown()
    ana = make_provider(session_id="chat-ana", user_id="ana", platform="telegram")
    assert ana._flush(10)
    assert sources_with(db_path, "gateway turn") == [("hermes", "ana", "ana's gateway turn")]


def _policy(person: str, pinned: bool, tenant: str = "hermes") -> ScopePolicy:
    return ScopePolicy(Scope(tenant, person), person_pinned=pinned)


@pytest.mark.parametrize(
    ("policies", "row", "origin", "verdict"),
    [
        ([_policy("ana", True)], ("hermes", "ana"), None, Verdict.APPLY),
        ([_policy("ana", True)], ("hermes", "bob"), None, Verdict.QUARANTINE),
        ([_policy("ana", True)], ("hermes", "bob"), ORIGIN_PINNED, Verdict.QUARANTINE),
        ([_policy("ana", True)], ("hermes", "bob"), ORIGIN_GATEWAY, Verdict.WAIT),
        ([_policy("ana", True)], ("acme", "ana"), ORIGIN_GATEWAY, Verdict.QUARANTINE),
        ([_policy("ana", False)], ("hermes", "ana"), ORIGIN_GATEWAY, Verdict.APPLY),
        ([_policy("ana", False)], ("hermes", "bob"), ORIGIN_GATEWAY, Verdict.WAIT),
        ([_policy("ana", False)], ("hermes", "bob"), ORIGIN_PINNED, Verdict.WAIT),
        ([_policy("ana", False)], ("hermes", "bob"), None, Verdict.WAIT),
        ([_policy("ana", False)], ("acme", "bob"), ORIGIN_GATEWAY, Verdict.QUARANTINE),
        ([_policy("ana", False), _policy("bob", False)], ("hermes", "bob"), None, Verdict.APPLY),
        ([_policy("ana", False)], ("hermes", " "), ORIGIN_GATEWAY, Verdict.QUARANTINE),
        ([_policy("ana", False)], ("hermes", 7), ORIGIN_GATEWAY, Verdict.QUARANTINE),
        # No provider attached (the last one is shutting down): nothing is judged foreign.
        ([], ("acme", "bob"), None, Verdict.WAIT),
    ],
)
def test_scope_policy_table(
    policies: list[ScopePolicy], row: tuple[Any, Any], origin: str | None, verdict: Verdict
) -> None:
    assert judge_row(policies, *row, origin) is verdict


def test_person_is_pinned_unless_it_is_a_gateway_user(hermes_home: Path) -> None:
    config = load_config(hermes_home)
    cli = resolve_scope(config, {"agent_identity": "work", "agent_workspace": "hermes"})
    assert (cli.scope, cli.person_pinned, cli.origin) == (Scope("hermes", "work"), True, "pinned")
    gateway = resolve_scope(config, {"agent_identity": "default", "user_id": "u1"})
    assert (gateway.scope.person_id, gateway.person_pinned, gateway.origin) == (
        "u1",
        False,
        "gateway",
    )
    assert resolve_scope(config, {}).scope == Scope("hermes", "default")


def test_invalid_rows_are_quarantined_without_blocking(make_provider: Make, db_path: Path) -> None:
    queue = queue_of(db_path)
    queue.enqueue("{not json")
    queue.enqueue("[1, 2]")
    queue.enqueue(turn_payload("   ", "k-blank"))
    queue.enqueue(turn_payload("after the poison", "k-ok"))
    provider = make_provider()
    assert provider._flush(10)
    assert [f.last_error for f in queue.failed()] == [
        "invalid queued payload",
        "invalid queued payload",
        "rejected by zkr: text must not be empty",
    ]
    assert len(sources_with(db_path, "after the poison")) == 1


def test_conflicting_replay_is_quarantined(make_provider: Make, db_path: Path) -> None:
    queue = queue_of(db_path)
    queue.enqueue(turn_payload("first version", "k-same"))
    queue.enqueue(turn_payload("second version", "k-same"))
    provider = make_provider()
    assert provider._flush(10)
    assert [f.last_error for f in queue.failed()] == [
        "ingestion_key conflicts with different memory payload"
    ]
    assert len(sources_with(db_path, "version")) == 1


def test_replay_of_a_deleted_turn_is_dropped(make_provider: Make, db_path: Path) -> None:
    provider = make_provider()
    provider.sync_turn("Forget this later", "ok")
    assert provider._flush(10)
    ((source_id, payload_key),) = rows(db_path, "SELECT id, ingestion_key FROM sources")
    assert "error" not in json.loads(
        provider.handle_tool_call("zkr_delete", {"source_id": source_id})
    )
    # A crash had left the applied row behind: replaying it must neither fail nor resurrect it.
    queue_of(db_path).enqueue(turn_payload("Forget this later", payload_key))
    assert provider._flush(10)
    assert queue_of(db_path).failed() == []
    assert rows(db_path, "SELECT count(*) FROM sources WHERE deleted_at IS NULL") == [(0,)]


def test_unexpected_errors_retry_then_quarantine_and_the_worker_survives(
    make_provider: Make, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """§6 item 7: a failure the worker does not expect must not kill it or stall the queue."""
    real_run = worker_module.operations.run

    def flaky(db: Any, name: str, payload: Any) -> Any:
        if "poison" in payload.get("text", ""):
            raise ValueError("unexpected")
        return real_run(db, name, payload)

    monkeypatch.setattr(worker_module.operations, "run", flaky)
    queue = queue_of(db_path)
    queue.enqueue(turn_payload("poison turn", "k-p"))
    provider = make_provider()
    assert provider._flush(10)
    (failed,) = queue.failed()
    assert (failed.attempts, failed.last_error) == (
        worker_module.MAX_ATTEMPTS,
        "zkr operation failed (ValueError)",
    )
    provider.sync_turn("a later turn", "fine")
    assert provider._flush(10)
    assert len(sources_with(db_path, "a later turn")) == 1


def test_a_busy_database_keeps_turns_pending_in_order(
    make_provider: Make, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_run = worker_module.operations.run
    busy = threading.Event()
    busy.set()

    def sometimes_locked(db: Any, name: str, payload: Any) -> Any:
        if busy.is_set():
            raise sqlite3.OperationalError("database is locked")
        return real_run(db, name, payload)

    monkeypatch.setattr(worker_module.operations, "run", sometimes_locked)
    provider = make_provider()
    provider.sync_turn("turn one", "a")
    provider.sync_turn("turn two", "b")
    assert not provider._flush(0.3)
    pending = queue_of(db_path).pending()
    assert [json.loads(p.payload)["text"][:14] for p in pending] == [
        "User: turn one",
        "User: turn two",
    ]
    assert all(
        p.attempts == 0 and "database unavailable" in (p.last_error or "") for p in pending[:1]
    )
    busy.clear()
    assert provider._flush(10)
    assert [
        r[0] for r in rows(db_path, "SELECT content FROM sources ORDER BY recorded_at, rowid")
    ] == [
        "User: turn one\nAssistant: a",
        "User: turn two\nAssistant: b",
    ]
    assert queue_of(db_path).failed() == []


def test_oversized_turn_is_quarantined_not_applied(make_provider: Make, db_path: Path) -> None:
    """§9.7 item 10: a turn over 1 MiB never reaches zkr (and is kept aside, not lost)."""
    provider = make_provider()
    provider.sync_turn("x" * 1_048_577, "ok")
    provider.sync_turn("small turn", "ok")
    assert provider._flush(10)
    assert [f.last_error for f in queue_of(db_path).failed()] == ["turn exceeds 1048576 bytes"]
    assert rows(db_path, "SELECT count(*) FROM sources") == [(1,)]


def test_legacy_queue_schema_is_migrated_in_place(tmp_path: Path) -> None:
    """§9.7 item 12: a queue written by the first zkr provider keeps its pending turns."""
    path = tmp_path / "zkr.db.queue"
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE pending_turns(id INTEGER PRIMARY KEY AUTOINCREMENT, payload TEXT NOT NULL)"
    )
    conn.execute("INSERT INTO pending_turns(payload) VALUES ('{\"legacy\": true}')")
    conn.commit()
    conn.close()
    queue = TurnQueue(path)
    (row,) = queue.pending()
    assert (row.payload, row.attempts, row.last_error) == ('{"legacy": true}', 0, None)
    assert queue.failed() == []


def test_non_primary_context_does_not_write(make_provider: Make, db_path: Path) -> None:
    """§6 item 4: kept as a guard although Hermes 0.19.0 always passes "primary"."""
    provider = make_provider(agent_context="cron")
    provider.sync_turn("cron system prompt", "done")
    provider.on_memory_write("add", "user", "cron note")
    assert queue_of(db_path).count_pending() == 0
    assert rows(db_path, "SELECT count(*) FROM sources") == [(0,)]
    # Explicit tool calls still work.
    assert "source_id" in json.loads(provider.handle_tool_call("zkr_store", {"text": "explicit"}))
