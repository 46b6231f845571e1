"""Acceptance 3 of issue 5: an applier killed with SIGKILL at random points, then restarted, ends
with exactly the database an uninterrupted run builds.

The applier is a separate Python process that replicates one scope page by page (limit 3, so most
commits are split across pages and staged) and prints a line after each page. The test lets it
apply a random number of pages, waits a random fraction of a page, kills it (SIGKILL: no cleanup,
no rollback handler), then runs the applier again to completion and compares every table. It also
checks what the kills left behind: in some runs the replica holds a partly staged commit (rows in
``replica_staging``, cursor inside a commit), so recovery from partial staging is really exercised.
"""

from __future__ import annotations

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

from zkr import operations
from zkr.db import MemoryDb

RUNS = 24
LIMIT = 3

APPLIER = """
import sys
from zkr import models as m
from zkr.db import MemoryDb
from zkr.feed.export import export
from zkr.feed.apply import apply, position

source, replica, limit = MemoryDb(sys.argv[1]), MemoryDb(sys.argv[2]), int(sys.argv[3])
after, mark = position(replica, "a", "sam"), None
while True:
    page = export(source, m.ExportRequest(export_format=1, tenant_id="a", person_id="sam",
        after_commit=after[0], after_event_index=after[1], high_water_mark=mark, limit=limit))
    mark = page.high_water_mark
    apply(replica, m.ApplyRequest(tenant_id="a", person_id="sam", after_commit=after[0],
        after_event_index=after[1], page=page))
    after = (page.next_after_commit, page.next_after_event_index)
    print("page", flush=True)
    if page.complete:
        break
"""


def applier(source: Path, replica: Path) -> list[str]:
    return [sys.executable, "-c", APPLIER, str(source), str(replica), str(LIMIT)]


def op(db: MemoryDb, command: str, **payload: Any) -> Any:
    return operations.run(db, command, {"tenant_id": "a", "person_id": "sam", **payload})


def build_upstream(path: Path) -> None:
    """Sixty-odd commits of every kind in scope a/sam (and some noise in another scope)."""
    with MemoryDb(path) as db:
        for i in range(12):
            t = 100 * (i + 1)
            kept = op(db, "remember", kind="conversation", text=f"Sam likes topic {i}",
                      captured_at=t, recorded_at=t,
                      claim={"subject": "Sam", "predicate": f"likes{i % 3}", "value": f"v{i}",
                             "kind": "profile_fact", "valid_from": t})  # fmt: skip
            raw = op(db, "remember", kind="document", text=f"raw note {i}", captured_at=t + 1,
                     recorded_at=t + 1)  # fmt: skip
            relation = "contradicts" if i % 2 else "supports"
            op(db, "link", claim_id=kept["claim_id"], evidence_id=raw["evidence_id"],
               relation=relation, confidence_basis_points=7000)  # fmt: skip
            op(db, "profile", stability="current", claim_id=kept["claim_id"], recorded_at=t + 2)
            cited = [kept["evidence_id"], raw["evidence_id"]]
            op(db, "review", day=f"day-{i}", summary=f"review {i}", evidence_ids=cited,
               recorded_at=t + 3)  # fmt: skip
            fixed = op(db, "correct", claim_id=kept["claim_id"], text=f"Actually v{i}b",
                       value=f"v{i}b", valid_at=t + 4, recorded_at=t + 4)  # fmt: skip
            if i % 3 == 0:
                op(db, "delete", source_id=fixed["source_id"], deleted_at=t + 5)
            operations.run(db, "remember", {"tenant_id": "b", "person_id": "sam",
                           "kind": "conversation", "text": f"noise {i}", "captured_at": t,
                           "recorded_at": t})  # fmt: skip


def fingerprint(path: Path) -> dict[str, list[Any]]:
    """Every row of every table (FTS by content, not rowid), read with plain sqlite3."""
    conn = sqlite3.connect(path)
    try:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'"
                " AND name NOT LIKE 'source_fts%' ORDER BY name"
            )
        ]
        snapshot = {
            t: sorted(conn.execute(f'SELECT * FROM "{t}"').fetchall(), key=repr) for t in tables
        }
        snapshot["source_fts"] = sorted(
            conn.execute("SELECT source_id, tenant_id, person_id, content FROM source_fts")
        )
        return snapshot
    finally:
        conn.close()


def killed_state(path: Path) -> tuple[int, int]:
    """(applied commits, staged events) that a killed applier left durable in *path*."""
    if not path.exists():
        return 0, 0
    conn = sqlite3.connect(path)
    try:
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        if "replica_staging" not in names:  # killed before its first migration committed
            return 0, 0
        applied = conn.execute("SELECT coalesce(max(applied_commit), 0) FROM replica_cursor")
        staged = conn.execute("SELECT count(*) FROM replica_staging")
        return int(applied.fetchone()[0]), int(staged.fetchone()[0])
    finally:
        conn.close()


@pytest.mark.slow
def test_killed_applier_resumes_to_the_same_database(tmp_path: Path) -> None:
    upstream = tmp_path / "upstream.db"
    build_upstream(upstream)
    reference = tmp_path / "reference.db"
    output = subprocess.run(
        applier(upstream, reference), check=True, capture_output=True, text=True
    )
    pages = output.stdout.count("page")
    assert pages > 50  # enough pages for the kills to land all over the replication
    expected = fingerprint(reference)
    assert expected["replica_staging"] == [] and len(expected["memory_commits"]) > 60

    rng = random.Random(20240501)
    killed_mid_run = killed_mid_commit = killed_after_progress = 0
    for run in range(RUNS):
        replica = tmp_path / f"replica-{run}.db"
        process = subprocess.Popen(applier(upstream, replica), stdout=subprocess.PIPE, text=True)
        assert process.stdout is not None
        for _ in range(rng.randrange(pages - 1)):
            process.stdout.readline()
        time.sleep(rng.uniform(0.0, 0.004))  # somewhere inside the next page's transaction
        process.send_signal(signal.SIGKILL)
        process.wait()
        process.stdout.close()
        killed_mid_run += process.returncode == -signal.SIGKILL
        applied, staged = killed_state(replica)
        killed_mid_commit += staged > 0
        killed_after_progress += applied > 0
        subprocess.run(applier(upstream, replica), check=True, capture_output=True)
        assert fingerprint(replica) == expected, f"run {run} diverged"
        os.remove(replica)
    assert killed_mid_run >= RUNS - 2
    # Kills that left a commit partly staged (cursor inside it) and kills after applied commits.
    assert killed_mid_commit >= RUNS // 8, "too few kills left a partly staged commit"
    assert killed_after_progress >= RUNS // 2
