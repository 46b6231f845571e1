"""Issue 26, point 1 (PostgreSQL): an older backup synced after the forget brings nothing back.

The independent reproduction: ``forget`` on a zkr database, ``zkr-postgres sync`` of it, then a
sync of a backup file taken before the forget (it is another upstream to PostgreSQL) - the text
was live and searchable again. Failed on b1744e7. Now no text, JSON, tsvector or bytea column of
any zkr table holds it, the replica's live rows equal a sync of the erased file alone, and the
sync reports the dropped events.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.postgres.test_forget import SCOPE, SECRET, _everything_mentioning, _remember
from zkr import models as m
from zkr.db import MemoryDb
from zkr_postgres._db import Conn, connect
from zkr_postgres.api import Replica
from zkr_postgres.sync import sync_database


def _backup(db: MemoryDb, path: Path) -> MemoryDb:
    target = sqlite3.connect(path)
    db.conn.backup(target)
    target.close()
    return MemoryDb(path)


def _live(conn: Conn) -> list[tuple[object, ...]]:
    return [
        tuple(row)
        for row in conn.execute(
            "SELECT id, content, deleted_at, ingestion_key FROM zkr.sources ORDER BY id"
        ).fetchall()
    ]


def test_an_older_backup_synced_after_the_forget_brings_nothing_back(
    tmp_path: Path, pg: str
) -> None:
    db = MemoryDb(tmp_path / "laptop.db")
    secret = _remember(
        db,
        f"My bank PIN hint is {SECRET}",
        10,
        {"subject": "Sam", "predicate": "pin_hint", "value": SECRET, "kind": "profile_fact"},
    )
    kept = _remember(db, "Sam likes green tea in the morning", 11, located=False)
    assert secret.claim_id is not None
    db.profile(
        m.ProfileRequest(**SCOPE, stability="stable", claim_id=secret.claim_id, recorded_at=12)
    )
    db.review(
        m.ReviewRequest(
            **SCOPE, day="d1", summary=f"talked about {SECRET}",
            evidence_ids=[secret.evidence_id], recorded_at=13,
        )
    )  # fmt: skip
    old = _backup(db, tmp_path / "backup-before-forget.db")
    db.run("forget", {**SCOPE, "source_id": secret.source_id, "erased_at": 20})
    with connect(pg) as conn:
        assert sync_database(conn, db, "laptop").erasures == 1
        assert _everything_mentioning(conn, SECRET) == []
        erased_only = _live(conn)

        late = sync_database(conn, old, "laptop-backup")  # every page of it is stale or known
        assert _everything_mentioning(conn, SECRET) == []
        # The source, evidence, claim, profile entry and review of the backup were dropped.
        assert late.dropped_events >= 5 and late.commits > 0
        assert _live(conn) == erased_only
        # Page by page (every commit split across pages) and once more: still nothing.
        again = sync_database(conn, old, "laptop-backup-2", limit=1)
        assert again.dropped_events >= 5
        assert _everything_mentioning(conn, SECRET) == []
        staged = conn.execute("SELECT count(*) FROM zkr.staging").fetchone()
        assert staged == (0,)
    with Replica(pg) as replica:
        assert replica.search(m.SearchRequest(**SCOPE, query=SECRET)).items == []
        tea = replica.search(m.SearchRequest(**SCOPE, query="green tea"))
        assert [i.memory.id for i in tea.items] == [kept.source_id]
    old.close()
    db.close()
