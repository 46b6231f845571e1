"""Crash, concurrency and hostile-peer suites (issue 18). Each prints its figures.

* **SIGKILL during writes**: a real ``zkr serve`` stores keyed memories and is killed (SIGKILL) at
  a random moment, round after round; every round also replays keys already acknowledged. After
  all rounds: 0 acknowledged writes lost, 0 duplicates, ``PRAGMA integrity_check`` ok.
* **Opening and writing at once**: N processes start at the same instant on a new file and on a
  zkr 0.2.3-style rollback-journal file, each opening it and writing: 0 "locked" failures, 0 lost.
* **Hostile apply peer**: pages with a sequence at the i64 limit, another scope's ids, deletions
  of another scope's targets, loose types; none may change another scope or stop later writes.

``ZKR_FUZZ_PROFILE=long`` (``nox -s fuzz``) runs more rounds and processes.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from zkr.db import MemoryDb
from zkr.embeddings.projections import input_hash
from zkr.errors import ZkrError

LONG = os.environ.get("ZKR_FUZZ_PROFILE", "ci") == "long"
KILL_ROUNDS = 40 if LONG else 6
OPENERS = 16 if LONG else 6
OPENER_WRITES = 20 if LONG else 5


def remember_line(key: str) -> bytes:
    request = {
        "tenant_id": "t", "person_id": "p", "kind": "conversation",
        "text": f"memory {key}", "captured_at": 1, "recorded_at": 1,
        "ingestion_key": key,
    }  # fmt: skip
    return json.dumps({"id": key, "command": "remember", "request": request}).encode() + b"\n"


def test_sigkill_during_writes_loses_no_acknowledged_write(tmp_path: Path) -> None:
    path = tmp_path / "killed.db"
    rng = random.Random(18)
    acknowledged: set[str] = set()
    sent = 0
    for round_ in range(KILL_ROUNDS):
        serve = subprocess.Popen(
            [sys.executable, "-m", "zkr_cli", "--db", str(path), "serve"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        assert serve.stdin is not None and serve.stdout is not None
        replays = rng.sample(sorted(acknowledged), min(3, len(acknowledged)))
        keys = replays + [f"r{round_}-{i}" for i in range(200)]
        kill_after = rng.randint(1, 60)
        for index, key in enumerate(keys):
            if index == kill_after:
                # Mid-stream: the next line is written and possibly being stored.
                serve.stdin.write(remember_line(key))
                serve.stdin.flush()
                time.sleep(rng.random() * 0.01)
                serve.send_signal(signal.SIGKILL)
                break
            serve.stdin.write(remember_line(key))
            serve.stdin.flush()
            sent += 1
            answer = json.loads(serve.stdout.readline())
            assert "result" in answer, answer
            acknowledged.add(answer["id"])
        serve.wait()
        serve.stdout.close()
        serve.stdin.close()
        assert serve.stderr is not None
        serve.stderr.close()
    conn = sqlite3.connect(path)
    keys_stored = [row[0] for row in conn.execute("SELECT ingestion_key FROM sources")]
    integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
    commits = conn.execute("SELECT count(*) FROM memory_commits").fetchone()[0]
    conn.close()
    lost = acknowledged - set(keys_stored)
    duplicates = len(keys_stored) - len(set(keys_stored))
    print(
        f"\n[crash] {KILL_ROUNDS} SIGKILLs, {sent} writes sent, {len(acknowledged)} acknowledged,"
        f" {len(keys_stored)} stored, lost {len(lost)}, duplicates {duplicates},"
        f" integrity {integrity}"
    )
    assert (len(lost), duplicates, integrity) == (0, 0, "ok")
    assert commits == len(keys_stored)  # one commit per stored memory, none half-written


OPEN_AND_WRITE = """
import sys, time
from zkr.db import MemoryDb
from zkr import models as m
path, name, start, writes = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
while time.time() < start:
    pass
failures = []
try:
    with MemoryDb(path) as db:
        for index in range(writes):
            try:
                db.remember(m.RememberRequest(tenant_id="t", person_id=name, kind="conversation",
                    text=f"{name} {index}", captured_at=index, recorded_at=index))
            except Exception as exc:
                failures.append(str(exc))
except Exception as exc:
    failures.append(str(exc))
print("\\n".join(failures))
"""


@pytest.mark.parametrize("kind", ["new file", "zkr 0.2.3 rollback-journal file"])
def test_processes_opening_and_writing_at_once_never_fail_locked(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "shared.db"
    if kind != "new file":
        with MemoryDb(path):
            pass
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA journal_mode = DELETE")
        conn.close()
    start = time.time() + 1.5
    children = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                OPEN_AND_WRITE,
                str(path),
                f"w{i}",
                str(start),
                str(OPENER_WRITES),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(OPENERS)
    ]
    failures = []
    for child in children:
        out, err = child.communicate(timeout=120)
        failures += [line for line in out.splitlines() if line]
        assert child.returncode == 0 and "Traceback" not in err, err
    with MemoryDb(path) as db:
        stored = db.conn.execute("SELECT count(*) FROM sources").fetchone()[0]
    locked = [f for f in failures if "locked" in f or "busy" in f]
    expected = OPENERS * OPENER_WRITES
    print(
        f"\n[concurrency] {kind}: {OPENERS} processes x {OPENER_WRITES} writes at once,"
        f" {len(locked)} locked failures, {len(failures)} failures, {expected - stored} lost"
    )
    assert (failures, stored) == ([], expected)


def _victim(db: MemoryDb) -> dict[str, str]:
    text = "the victim's own memory"
    stored = db.run(
        "remember",
        {"tenant_id": "victim", "person_id": "v", "kind": "conversation", "text": text,
         "captured_at": 1, "recorded_at": 1,
         "claim": {"subject": "v", "predicate": "likes", "value": "tea", "kind": "preference",
                   "valid_from": 1}},
    )  # fmt: skip
    db.run(
        "embed",
        {"tenant_id": "victim", "person_id": "v",
         "target": {"kind": "source", "id": stored.source_id},
         "embedding": {"vector": [1.0, 0.0], "model": "m", "version": "1",
                       "input_hash": input_hash(text), "normalization": "none",
                       "distance": "cosine"}},
    )  # fmt: skip
    return {"source": stored.source_id, "evidence": stored.evidence_id, "claim": stored.claim_id}


def _victim_rows(db: MemoryDb) -> list[Any]:
    rows: list[Any] = []
    for table in ("sources", "evidence", "claims", "claim_evidence", "embeddings",
                  "memory_commits"):  # fmt: skip
        rows += db.conn.execute(
            f"SELECT * FROM {table} WHERE tenant_id = 'victim' ORDER BY 1"
        ).fetchall()
    return rows


def _hostile_pages(peer_page: dict[str, Any], victim: dict[str, str]) -> list[dict[str, Any]]:
    def page(records: list[Any], sequence: int = 1, **commit: Any) -> dict[str, Any]:
        return {
            "export_format": 1, "database_schema_version": 8, "high_water_mark": sequence,
            "next_after_commit": sequence, "next_after_event_index": len(records) - 1,
            "complete": True,
            "commits": [{"sequence": sequence, "recorded_at": 5, "event_count": len(records),
                         "first_event_index": 0, "records": records, **commit}],
        }  # fmt: skip

    records = peer_page["commits"][0]["records"]
    pages = [page(records, 2**63 - 1), page(records, 2**63), page(records, "1")]  # type: ignore[arg-type]
    for kind in ("source", "evidence", "claim"):
        pages.append(page([{"kind": "deletion", "record": {
            "tenant_id": "mallory", "person_id": "m", "target": {"kind": kind, "id": victim[kind]},
            "deleted_at": 9}}]))  # fmt: skip
    stolen = json.loads(json.dumps(records))
    stolen[0]["record"]["source"]["id"] = victim["source"]
    pages.append(page(stolen))
    linked = json.loads(json.dumps(records))
    linked.append({"kind": "claim_evidence", "record": {
        "tenant_id": "mallory", "person_id": "m", "claim_id": victim["claim"],
        "evidence_id": victim["evidence"], "relation": "supports",
        "confidence_basis_points": 1}})  # fmt: skip
    pages.append(page(linked))
    loose = json.loads(json.dumps(records))
    loose[0]["record"]["source"]["captured_at"] = "1"
    pages.append(page(loose))
    return pages


def test_a_hostile_apply_peer_never_touches_another_scope_or_stops_writes(tmp_path: Path) -> None:
    with MemoryDb(tmp_path / "peer.db") as peer:
        peer.run(
            "remember",
            {"tenant_id": "mallory", "person_id": "m", "kind": "conversation",
             "text": "from a hostile peer", "captured_at": 1, "recorded_at": 1},
        )  # fmt: skip
        peer_page = peer.run(
            "export", {"tenant_id": "mallory", "person_id": "m", "export_format": 1}
        ).model_dump(mode="json", by_alias=True)
    accepted = refused = 0
    with MemoryDb(tmp_path / "replica.db") as db:
        victim = _victim(db)
        before = _victim_rows(db)
        for index, hostile in enumerate(_hostile_pages(peer_page, victim)):
            request = {"tenant_id": "mallory", "person_id": "m", "upstream": f"peer{index}",
                       "after_commit": 0, "after_event_index": -1, "page": hostile}  # fmt: skip
            try:
                db.run("apply", request)
                accepted += 1
            except ZkrError as exc:
                refused += 1
                assert "victim" not in str(exc) and "another scope" not in str(exc)
            assert _victim_rows(db) == before
        # Writes of every scope still work, numbered locally.
        for tenant in ("victim", "mallory", "other"):
            db.run(
                "remember",
                {"tenant_id": tenant, "person_id": "v", "kind": "conversation",
                 "text": "still writing", "captured_at": 2, "recorded_at": 2},
            )  # fmt: skip
        top = db.conn.execute("SELECT max(sequence) FROM memory_commits").fetchone()[0]
    print(
        f"\n[hostile apply] {accepted + refused} hostile pages: {accepted} applied to their own"
        f" scope, {refused} refused; other scope unchanged; writes after: ok; max local"
        f" sequence {top}"
    )
    assert top < 100
