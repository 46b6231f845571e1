"""``source_fts`` rows addressed by rowid (schema version 10, ``zkr.store.fts_rows``).

The rule: every FTS row sits at its own source's rowid, or at a negative rowid. Writers keep it
(remember, correct, apply), ``delete`` relies on it to remove a source's rows by rowid, and the v10
migration establishes it for older files without changing any row's values or any bm25 score.
"""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path
from typing import Any

from tests.conftest import CONTRACT_RANKING
from tests.core.conftest import remember, remember_raw
from zkr import models as m
from zkr import operations
from zkr.db import MemoryDb
from zkr.jsonio import canonical_dumps
from zkr.store import schema

# zkr 0.2.3's answers: searches that name no ranking use the contract's.
pytestmark = CONTRACT_RANKING

WORDS = ["kiwi", "plum", "fig", "lime", "pear"]
MATCHES = ['"kiwi"', '"plum"', '"fig" OR "lime"', '"pear"', '"kiwi" "plum"', '"orphan"']


def fts_rows(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
    return conn.execute(
        "SELECT f.rowid, s.rowid, f.source_id FROM source_fts f"
        " LEFT JOIN sources s ON s.id = f.source_id ORDER BY f.rowid"
    ).fetchall()


def assert_rule(conn: sqlite3.Connection) -> None:
    """Each row at its source's rowid, else negative; at most one keyed row per source."""
    keyed: set[str] = set()
    for fts_rowid, source_rowid, source_id in fts_rows(conn):
        if fts_rowid == source_rowid:
            assert source_id not in keyed
            keyed.add(source_id)
        else:
            assert fts_rowid < 0, (fts_rowid, source_rowid, source_id)


def scored(conn: sqlite3.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every match's rows with their exact bm25 scores, in the contract's order (score, id)."""
    return {
        match: conn.execute(
            "SELECT bm25(source_fts), source_id, tenant_id, person_id, content FROM source_fts"
            " WHERE source_fts MATCH ? ORDER BY 1, 2, 3, 4, 5",
            (match,),
        ).fetchall()
        for match in MATCHES
    }


def delete(db: MemoryDb, tenant: str, person: str, source_id: str) -> m.DeleteResult:
    return db.delete(
        m.DeleteRequest(tenant_id=tenant, person_id=person, source_id=source_id, deleted_at=100)
    )


def search_ids(db: MemoryDb, tenant: str, person: str, query: str) -> list[str]:
    pack = db.search(m.SearchRequest(tenant_id=tenant, person_id=person, query=query, limit=50))
    return [item.memory.id for item in pack.items]


def test_writers_key_rows_by_source_rowid_and_delete_removes_them(db: MemoryDb) -> None:
    kept = remember(db, "t", "p", "Acme")
    gone = remember_raw(db, "t", "p", "a note about Acme")
    db.correct(
        m.CorrectRequest(
            tenant_id="t",
            person_id="p",
            claim_id=kept.claim_id,
            text="Sam moved to Globex",
            value="Globex",
            valid_at=20,
            recorded_at=20,
        )
    )
    rows = fts_rows(db.conn)
    assert len(rows) == 3 and all(f == s for f, s, _ in rows)
    assert delete(db, "t", "p", gone.source_id).evidence_count == 1
    assert gone.source_id not in {row[2] for row in fts_rows(db.conn)}
    assert len(fts_rows(db.conn)) == 2
    # A new source after a deletion still gets its own (never reused) source rowid.
    fresh = remember_raw(db, "t", "p", "another note")
    assert_rule(db.conn)
    assert fresh.source_id in {row[2] for row in fts_rows(db.conn)}


def test_a_taken_slot_falls_back_to_a_negative_rowid(db: MemoryDb) -> None:
    remember_raw(db, "t", "p", "first note")
    # A row written by hand where the next source's row belongs.
    db.conn.execute(
        "INSERT INTO source_fts(rowid, source_id, tenant_id, person_id, content)"
        " VALUES ((SELECT max(rowid) + 1 FROM sources), 'stray', 't', 'p', 'stray kiwi')"
    )
    db.conn.commit()
    second = remember_raw(db, "t", "p", "second kiwi note")
    rowid = db.conn.execute(
        "SELECT rowid FROM source_fts WHERE source_id = ?", (second.source_id,)
    ).fetchone()[0]
    assert rowid == -1
    assert search_ids(db, "t", "p", "second") == [second.source_id]
    delete(db, "t", "p", second.source_id)
    assert search_ids(db, "t", "p", "second") == []
    assert db.conn.execute(
        "SELECT count(*) FROM source_fts WHERE source_id = ?", (second.source_id,)
    ).fetchone() == (0,)


def test_apply_keys_replicated_rows(tmp_path: Path) -> None:
    with MemoryDb(tmp_path / "up.db") as up, MemoryDb(tmp_path / "down.db") as down:
        # The replica already holds another scope, so its source rowids differ from upstream's.
        remember_raw(down, "other", "p", "local kiwi")
        first = remember(up, "t", "p", "Acme")
        remember_raw(up, "t", "p", "kiwi note")
        delete(up, "t", "p", first.source_id)
        remember_raw(up, "t", "p", "plum note")

        page = operations.run(
            up, "export", {"tenant_id": "t", "person_id": "p", "export_format": 1, "limit": 100}
        )
        page = json.loads(canonical_dumps(page))
        operations.run(
            down,
            "apply",
            {
                "tenant_id": "t",
                "person_id": "p",
                "after_commit": 0,
                "after_event_index": -1,
                "page": page,
            },
        )
        rows = fts_rows(down.conn)
        assert len(rows) == 3 and all(f == s for f, s, _ in rows)
        assert first.source_id not in {row[2] for row in rows}


def build_v9_file(path: Path) -> dict[str, str]:
    """A store whose FTS rowids break the rule the way a pre-v10 file can, set to version 9.

    Rows are renumbered in a shuffled order, with gaps; an orphan row (no source) and a second row
    for one live source are added. Returns the ids the test needs.
    """
    rng = random.Random(7)
    with MemoryDb(path) as db:
        results = []
        for at in range(1, 61):
            text = " ".join(rng.choices(WORDS, [8, 4, 2, 1, 1], k=rng.randint(1, 3)))
            person = rng.choice(["me", "you"])
            results.append((person, remember_raw(db, "t", person, text, recorded_at=at)))
        for person, result in rng.sample(results, 10):
            delete(db, "t", person, result.source_id)
        live = [
            (person, r)
            for person, r in results
            if db.conn.execute(
                "SELECT deleted_at FROM sources WHERE id = ?", (r.source_id,)
            ).fetchone()[0]
            is None
        ]
        doubled_person, doubled = live[0]
        conn = db.conn
        rows = conn.execute(
            "SELECT source_id, tenant_id, person_id, content FROM source_fts"
        ).fetchall()
        rows.append((doubled.source_id, "t", doubled_person, "kiwi doubled row"))
        rows.append(("no-such-source", "t", "me", "orphan kiwi"))
        rng.shuffle(rows)
        conn.execute("DELETE FROM source_fts")
        rowid = 0
        for row in rows:
            rowid += rng.randint(1, 3)
            conn.execute(
                "INSERT INTO source_fts(rowid, source_id, tenant_id, person_id, content)"
                " VALUES (?, ?, ?, ?, ?)",
                (rowid, *row),
            )
        conn.execute("PRAGMA user_version = 9")
        conn.commit()
        return {"doubled": doubled.source_id, "doubled_person": doubled_person}


def test_v10_migration_rekeys_rows_without_changing_scores(tmp_path: Path) -> None:
    path = tmp_path / "v9.db"
    ids = build_v9_file(path)
    raw = sqlite3.connect(path)
    before_rows = sorted(
        raw.execute("SELECT source_id, tenant_id, person_id, content FROM source_fts").fetchall()
    )
    before_scores = scored(raw)
    raw.close()
    assert sum(1 for f, s, _ in fts_rows(sqlite3.connect(path)) if f != s) > 10

    with MemoryDb(path) as db:
        assert db.conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
        after_rows = sorted(
            db.conn.execute(
                "SELECT source_id, tenant_id, person_id, content FROM source_fts"
            ).fetchall()
        )
        assert after_rows == before_rows
        assert scored(db.conn) == before_scores
        assert_rule(db.conn)
        negative = [row for row in fts_rows(db.conn) if row[0] < 0]
        assert sorted(row[2] for row in negative) == sorted([ids["doubled"], "no-such-source"])

        # Both rows of the doubled source go with it; new sources take their own rowids.
        assert ids["doubled"] in search_ids(db, "t", ids["doubled_person"], "doubled")
        delete(db, "t", ids["doubled_person"], ids["doubled"])
        assert db.conn.execute(
            "SELECT count(*) FROM source_fts WHERE source_id = ?", (ids["doubled"],)
        ).fetchone() == (0,)
        fresh = remember_raw(db, "t", "me", "kiwi after the migration")
        assert fresh.source_id in search_ids(db, "t", "me", "migration")
        assert_rule(db.conn)
