"""U+0000 (NUL) through a real sync: PostgreSQL text cannot hold it, the replica still answers as
zkr does (``zkr_postgres.nul``): served text exact, search sees NUL as a word separator, a scope
holding NUL is refused alone, a request naming NUL finds nothing, never a database error."""

from __future__ import annotations

from pathlib import Path

import pytest

from zkr import models as m
from zkr.db import MemoryDb
from zkr.errors import NotFound
from zkr_postgres._db import connect
from zkr_postgres.api import Replica
from zkr_postgres.serve import answer
from zkr_postgres.sync import sync_database

SCOPE = {"tenant_id": "acme", "person_id": "sam"}


@pytest.fixture
def source(tmp_path: Path) -> tuple[MemoryDb, dict[str, str]]:
    db = MemoryDb(tmp_path / "laptop.db")
    stored = db.remember(
        m.RememberRequest(
            **SCOPE,
            kind=m.SourceKind.conversation,
            text="Sam said\x00violin lessons start\x00 in May",
            captured_at=10,
            recorded_at=10,
            ingestion_key="turn\x001",
            # Locator fields end in _id but are free text: kept (NUL -> U+FFFD), not refused.
            locator=m.LocatorInput(
                device_id="dev\x00ice",
                provider="p",
                stream_id="s",
                segment_id="seg",
                start_ms=0,
                end_ms=5,
            ),
            claim=m.ClaimInput(
                subject="Sam\x00",
                predicate="learns",
                value="vio\x00lin",
                kind=m.ClaimKind.skill,
                valid_from=10,
            ),
        )
    )
    plain = db.remember(
        m.RememberRequest(
            **SCOPE,
            kind="conversation",
            text="a plain note about May",
            captured_at=11,
            recorded_at=11,
        )
    )
    # A scope whose person id holds NUL cannot be keyed in PostgreSQL: it is refused alone.
    db.remember(
        m.RememberRequest(
            tenant_id="acme",
            person_id="s\x00m",
            kind="document",
            text="elsewhere",
            captured_at=12,
            recorded_at=12,
        )
    )
    ids = {"source": stored.source_id, "claim": str(stored.claim_id), "plain": plain.source_id}
    return db, ids


def test_nul_text_syncs_and_reads_back_exactly(
    source: tuple[MemoryDb, dict[str, str]], pg: str
) -> None:
    db, ids = source
    with connect(pg) as conn:
        stats = sync_database(conn, db, "laptop")
        assert stats.refused_scopes == 1 and stats.scopes == 1
        # The exact originals are held aside; the text columns hold a space for each NUL.
        row = conn.execute(
            "SELECT content, ingestion_key, exact IS NOT NULL FROM zkr.sources WHERE id = %s",
            (ids["source"],),
        ).fetchone()
        assert row == ("Sam said violin lessons start  in May", "turn 1", True)
        assert conn.execute("SELECT count(*) FROM zkr.sources").fetchone() == (2,)
        device = conn.execute("SELECT device_id FROM zkr.evidence WHERE device_id IS NOT NULL")
        assert device.fetchall() == [("dev\ufffdice",)]
    with Replica(pg) as replica:
        for kind in ("source", "claim"):
            request = m.GetRequest(**SCOPE, target=m.TargetRef(kind=kind, id=ids[kind]))
            assert replica.get(request) == db.get(request)
        listing = m.MemoriesRequest(**SCOPE)
        assert replica.memories(listing) == db.memories(listing)
        chain = m.HistoryRequest(**SCOPE, claim_id=ids["claim"])
        assert replica.history(chain) == db.history(chain)
        assert replica.history(chain).versions[0].claim.value == "vio\x00lin"
        # NUL separates words for search, as for zkr's tokenizer: "lessons" and "violin" are found
        # (the plain note after them only through its neighbour's words, so second).
        for query in ("lessons", "violin lessons", "Sam\x00said"):
            pack = replica.search(m.SearchRequest(**SCOPE, query=query, limit=5))
            assert pack.items[0].memory.id == ids["claim"], query
            assert pack.items[0].excerpt == "Sam\x00 learns vio\x00lin"
    db.close()


def test_requests_naming_nul_find_nothing(source: tuple[MemoryDb, dict[str, str]], pg: str) -> None:
    db, ids = source
    with connect(pg) as conn:
        sync_database(conn, db, "laptop")
    db.close()
    nul_scope = {"tenant_id": "acme", "person_id": "s\x00m"}
    with Replica(pg) as replica:
        with pytest.raises(NotFound):
            replica.get(m.GetRequest(**SCOPE, target=m.TargetRef(kind="source", id="x\x00")))
        with pytest.raises(NotFound):
            replica.history(m.HistoryRequest(**nul_scope, claim_id=ids["claim"]))
        assert replica.memories(m.MemoriesRequest(**nul_scope)).items == []
        assert replica.search(m.SearchRequest(**nul_scope, query="elsewhere")).items == []
        # A lane name holding NUL names no lane: the search is lexical only, no error.
        pack = replica.search(
            m.SearchRequest(
                **SCOPE,
                query="plain note",
                query_embedding=m.QueryEmbedding(model="m\x00", version="1", vector=[1.0, 0.0]),
            )
        )
        assert pack.items[0].memory.id == ids["plain"]
        # Through serve: an answer, never a database error.
        line = answer(
            replica,
            '{"command":"memories","request":{"tenant_id":"acme","person_id":"sam",'
            '"cursor":"bTE6MTE6eAB5"}}',
        )
        assert isinstance(line, dict) and "code" not in line, line
