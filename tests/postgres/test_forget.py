"""Issue 17, acceptance 3: after ``forget`` on a source database and a sync, the erased text is
found nowhere in PostgreSQL - not in any text, JSON or tsvector column of any table, nor in vectors
of the erased records - while the rest of the person's memory is untouched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from psycopg import sql

from tests.postgres.conftest import LAYOUT_IDS, LAYOUTS
from tests.postgres.hash_embedder import HashEmbedder
from zkr import models as m
from zkr.db import MemoryDb
from zkr.operations import OPERATIONS
from zkr_postgres._db import Conn, connect
from zkr_postgres.api import Replica
from zkr_postgres.rebuild import rebuild
from zkr_postgres.sync import sync_database

pytestmark = pytest.mark.skipif(
    "forget" not in OPERATIONS, reason="zkr-core has no forget operation yet"
)

SCOPE = {"tenant_id": "acme", "person_id": "sam"}
SECRET = "zanzibarsecret"  # one word: no stemming or tokenising can split it


def _everything_mentioning(conn: Conn, word: str) -> list[tuple[str, str]]:
    """(table, column) of every row of every zkr table whose text, JSON, tsvector or bytes (the
    exact text of NUL-holding values) hold *word*."""
    columns = conn.execute(
        "SELECT table_name, column_name, data_type FROM information_schema.columns"
        " WHERE table_schema = 'zkr'"
        " AND data_type IN ('text', 'jsonb', 'json', 'tsvector', 'character varying', 'bytea')"
    ).fetchall()
    assert any(c[2] == "tsvector" for c in columns)
    found = []
    assert any(c[2] == "bytea" for c in columns)
    for table, column, data_type in columns:
        read = "encode({}, 'escape')" if data_type == "bytea" else "{}::text"
        query = sql.SQL("SELECT count(*) FROM {} WHERE " + read + " ILIKE %s").format(
            sql.Identifier("zkr", table), sql.Identifier(column)
        )
        row = conn.execute(query, (f"%{word[:8]}%",)).fetchone()
        if row and row[0]:
            found.append((str(table), str(column)))
    return found


def _remember(
    db: MemoryDb, text: str, at: int, claim: dict[str, Any] | None = None, located: bool = True
) -> Any:
    return db.remember(
        m.RememberRequest(
            **SCOPE,
            kind=m.SourceKind.conversation,
            text=text,
            captured_at=at,
            recorded_at=at,
            claim=m.ClaimInput(**claim, valid_from=at) if claim else None,
            locator=m.LocatorInput(
                device_id="omi",
                provider="deepgram",
                stream_id=f"{SECRET}-stream",
                segment_id="s1",
                start_ms=1,
                end_ms=2,
            )
            if located
            else None,
        )
    )


@pytest.mark.parametrize("partitions", LAYOUTS, ids=LAYOUT_IDS)
def test_forget_reaches_the_replica(tmp_path: Path, pg: str) -> None:
    db = MemoryDb(tmp_path / "source.db")
    secret = _remember(
        db,
        # (A NUL in it: the exact text is then also held in the rows' `exact` bytes.)
        f"My bank PIN hint is {SECRET}\x00 and I hate it",
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
            **SCOPE,
            day="d1",
            summary=f"talked about {SECRET}",
            evidence_ids=[secret.evidence_id],
            recorded_at=13,
        )
    )
    with connect(pg) as conn:
        sync_database(conn, db, "up")
        rebuild(conn, HashEmbedder.model, HashEmbedder.version, embedder=HashEmbedder())
        # Before: the secret is in the sources, evidence, claims, their tsvectors, the profile
        # entry, the review and the locator.
        mentions = _everything_mentioning(conn, SECRET)
        before = {table for table, _ in mentions}
        assert {"sources", "evidence", "claims", "profile_entries", "daily_reviews"} <= before
        assert {("sources", "exact"), ("evidence", "exact")} <= set(mentions)

    db.run("forget", {**SCOPE, "source_id": secret.source_id, "erased_at": 20})
    with connect(pg) as conn:
        stats = sync_database(conn, db, "up")
        assert stats.erasures == 1
        assert _everything_mentioning(conn, SECRET) == []
        erased = conn.execute(
            "SELECT target_kind, count(*) FROM zkr.erasures GROUP BY 1 ORDER BY 1"
        ).fetchall()
        assert dict(erased)["source"] == 1 and dict(erased)["claim"] == 1
        lane = conn.execute("SELECT table_name FROM zkr.lanes").fetchone()
        assert lane is not None
        vectors = conn.execute(
            sql.SQL("SELECT target_kind, target_id FROM {}").format(sql.Identifier("zkr", lane[0]))
        ).fetchall()
        assert {tuple(v) for v in vectors} == {("source", kept.source_id)}
        # A second sync (nothing new) and a rebuild bring nothing back.
        sync_database(conn, db, "up")
        rebuild(conn, HashEmbedder.model, HashEmbedder.version, embedder=HashEmbedder())
        assert _everything_mentioning(conn, SECRET) == []
    with Replica(pg) as replica:
        assert replica.search(m.SearchRequest(**SCOPE, query=SECRET)).items == []
        tea = replica.search(m.SearchRequest(**SCOPE, query="green tea"))
        assert [i.memory.id for i in tea.items] == [kept.source_id]


@pytest.mark.parametrize("partitions", LAYOUTS, ids=LAYOUT_IDS)
def test_a_replica_synced_only_after_the_forget_never_holds_the_text(
    tmp_path: Path, pg: str
) -> None:
    db = MemoryDb(tmp_path / "late.db")
    secret = _remember(db, f"the code word is {SECRET}", 10)
    db.run("forget", {**SCOPE, "source_id": secret.source_id, "erased_at": 11})
    with connect(pg) as conn:
        sync_database(conn, db, "up", limit=1)  # one event per page: every split is exercised
        assert _everything_mentioning(conn, SECRET) == []
        row = conn.execute("SELECT content, deleted_at FROM zkr.sources").fetchone()
        assert row == ("", 11)
