"""The feed semantics of ``sync`` against a real PostgreSQL: pages split commits, gaps are refused,
replays change nothing, deletions and corrections propagate, concurrent syncs agree."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.postgres.builders import build_database
from zkr import models as m
from zkr.db import MemoryDb
from zkr.errors import ExportError
from zkr_postgres._db import Conn, connect
from zkr_postgres.api import Replica
from zkr_postgres.apply import apply_page, position
from zkr_postgres.schema import SCOPED_TABLES, migrate
from zkr_postgres.sync import sync_database, sync_scope

SCOPES = [("acme", "sam"), ("acme", "max"), ("globex", "sam")]


@pytest.fixture
def source(tmp_path: Path) -> MemoryDb:
    db = MemoryDb(tmp_path / "source.db")
    build_database(db, SCOPES, seed=5, memories=8)
    return db


def _export(db: MemoryDb, scope: tuple[str, str], after: tuple[int, int], limit: int) -> Any:
    return db.export(
        m.ExportRequest(
            export_format=1,
            tenant_id=scope[0],
            person_id=scope[1],
            after_commit=after[0],
            after_event_index=after[1],
            limit=limit,
        )
    )


def _counts(conn: Conn) -> dict[str, int]:
    counts = {}
    for table in SCOPED_TABLES:
        row = conn.execute(f"SELECT count(*) FROM zkr.{table}").fetchone()  # type: ignore[arg-type]
        counts[table] = int(row[0]) if row else 0
    return counts


def _rows(conn: Conn, table: str) -> list[tuple[Any, ...]]:
    query = f"SELECT * FROM zkr.{table} ORDER BY 1, 2, 3"
    return [tuple(r) for r in conn.execute(query).fetchall()]  # type: ignore[arg-type]


def test_pages_that_split_commits_give_the_same_rows_as_whole_pages(
    source: MemoryDb, pg: str, new_database: Callable[[], str]
) -> None:
    other = new_database()
    with connect(pg) as small, connect(other) as large:
        for tenant, person in SCOPES:
            stats = sync_scope(small, source, "up", tenant, person, limit=3)
            assert stats.pages > stats.commits / 2  # commits of 3-6 events: most pages split one
            sync_scope(large, source, "up", tenant, person, limit=100)
        assert _counts(small)["staging"] == 0
        for table in ("sources", "evidence", "claims", "claim_evidence", "corrections"):
            assert _rows(small, table) == _rows(large, table)


def test_a_replayed_page_changes_nothing_and_a_gap_is_refused(source: MemoryDb, pg: str) -> None:
    scope = ("acme", "sam", "up")
    with connect(pg) as conn:
        first = _export(source, scope[:2], (0, -1), 5)
        apply_page(conn, scope, (0, -1), first)
        held = position(conn, scope).cursor()
        before = _counts(conn)
        # The same page again (a sync killed after the commit, before it learned of it).
        again, applied = apply_page(conn, scope, (0, -1), first)
        assert applied == 0 and again.cursor() == held and _counts(conn) == before
        # A page exported from further on than what is held skips events: refused, nothing kept.
        second = _export(
            source, scope[:2], (first.next_after_commit, first.next_after_event_index), 5
        )
        third = _export(
            source, scope[:2], (second.next_after_commit, second.next_after_event_index), 5
        )
        with pytest.raises(ExportError, match="does not continue the applied feed"):
            apply_page(
                conn, scope, (second.next_after_commit, second.next_after_event_index), third
            )
        assert _counts(conn) == before and position(conn, scope).cursor() == held


def test_a_page_with_a_hole_inside_is_refused(source: MemoryDb, pg: str) -> None:
    scope = ("acme", "sam", "up")
    page = _export(source, scope[:2], (0, -1), 20)
    # Sequences are shared by every scope, so a whole missing commit cannot be seen; a commit
    # that starts after index 0 (or a commit left unfinished before the next) can.
    commits = list(page.commits)
    second = commits[1]
    cut = second.model_copy(update={"records": second.records[1:], "first_event_index": 1})
    holed = page.model_copy(update={"commits": [commits[0], cut, *commits[2:]]})
    with connect(pg) as conn:
        with pytest.raises(ExportError, match="skips events"):
            apply_page(conn, scope, (0, -1), holed)
        assert _counts(conn)["sources"] == 0


def test_a_record_of_another_scope_is_refused(source: MemoryDb, pg: str) -> None:
    page = _export(source, ("acme", "max"), (0, -1), 20)
    with connect(pg) as conn:
        with pytest.raises(ExportError, match="scope does not match"):
            apply_page(conn, ("acme", "sam", "up"), (0, -1), page)
        assert _counts(conn)["sources"] == 0


def test_deletion_and_correction_reach_the_replica(tmp_path: Path, pg: str) -> None:
    db = MemoryDb(tmp_path / "one.db")
    scope = {"tenant_id": "t", "person_id": "p"}
    kept = db.remember(
        m.RememberRequest(
            **scope,
            kind=m.SourceKind.conversation,
            text="Sam lives in Lisbon",
            captured_at=1,
            recorded_at=1,
            claim=m.ClaimInput(
                subject="Sam", predicate="lives_in", value="Lisbon", kind="fact", valid_from=1
            ),
        )
    )
    gone = db.remember(
        m.RememberRequest(
            **scope, kind="conversation", text="Sam adopted a parrot", captured_at=2, recorded_at=2
        )
    )
    with connect(pg) as conn:
        sync_database(conn, db, "up")
    with Replica(pg) as replica:
        assert replica.search(m.SearchRequest(**scope, query="parrot")).items
    assert kept.claim_id is not None
    corrected = db.correct(
        m.CorrectRequest(
            **scope,
            claim_id=kept.claim_id,
            text="Sam moved to Porto",
            value="Porto",
            valid_at=5,
            recorded_at=5,
        )
    )
    db.delete(m.DeleteRequest(**scope, source_id=gone.source_id, deleted_at=6))
    with connect(pg) as conn:
        stats = sync_database(conn, db, "up")
        assert stats.commits == 2
    with Replica(pg) as replica:
        assert replica.search(m.SearchRequest(**scope, query="parrot")).items == []
        lives = replica.search(m.SearchRequest(**scope, query="where does Sam live"))
        assert [i.memory.id for i in lives.items] == [corrected.claim_id]
        assert lives.items[0].excerpt == "Sam lives_in Porto"
        # What was believed before the correction is still there for as_of.
        before = replica.search(
            m.SearchRequest(**scope, query="Sam lives", as_of=m.AsOf(valid_at=3, recorded_at=3))
        )
        assert [i.memory.id for i in before.items] == [kept.claim_id]


def test_concurrent_syncs_of_one_database_agree_with_one_sync(
    source: MemoryDb, tmp_path: Path, pg: str, new_database: Callable[[], str]
) -> None:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            db = MemoryDb(tmp_path / "source.db")
            with connect(pg) as conn:
                sync_database(conn, db, "up", limit=4)
            db.close()
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    alone = new_database()
    with connect(alone) as one, connect(pg) as many:
        sync_database(one, source, "up")
        for table in ("sources", "evidence", "claims", "claim_evidence"):
            assert _rows(one, table) == _rows(many, table)
        commits = (
            "SELECT tenant_id, person_id, upstream, sequence FROM zkr.commits ORDER BY 1, 2, 3, 4"
        )
        assert one.execute(commits).fetchall() == many.execute(commits).fetchall()


def test_migrate_is_idempotent(pg: str) -> None:
    with connect(pg) as conn:
        assert migrate(conn) == migrate(conn)


def test_neighbour_context_finds_a_turn_by_its_neighbours_words_and_forgets_deleted_ones(
    tmp_path: Path, pg: str
) -> None:
    db = MemoryDb(tmp_path / "talk.db")
    scope = {"tenant_id": "t", "person_id": "p"}
    ids = []
    for at, text in enumerate(
        [
            "Mel: what did you think of the lake trip?",
            "Caroline: we camped by the water, it was lovely",
            "Mel: sounds great",
            "Caroline: next time bring the kayak",
        ]
    ):
        result = db.remember(
            m.RememberRequest(
                **scope, kind="conversation", text=text, captured_at=100 + at, recorded_at=100
            )
        )
        ids.append(result.source_id)
    far = db.remember(
        m.RememberRequest(
            **scope,
            kind="conversation",
            text="Mel: unrelated",
            captured_at=100 + 86_400,
            recorded_at=100,
        )
    )
    with connect(pg) as conn:
        sync_database(conn, db, "up")
    with Replica(pg) as replica:
        found = replica.search(m.SearchRequest(**scope, query="lake trip", limit=10))
        ranked = [i.memory.id for i in found.items]
        # The turn with the words first; its neighbours (within the gap) next; a day later: no.
        assert ranked[0] == ids[0]
        assert ids[1] in ranked and far.source_id not in ranked
    db.delete(m.DeleteRequest(**scope, source_id=ids[0], deleted_at=200))
    with connect(pg) as conn:
        sync_database(conn, db, "up")
        contexts = [
            row[0]
            for row in conn.execute(
                "SELECT context FROM zkr.sources WHERE deleted_at IS NULL"
            ).fetchall()
        ]
        assert not any("lake" in context for context in contexts)
    with Replica(pg) as replica:
        assert replica.search(m.SearchRequest(**scope, query="lake trip")).items == []


def test_captures_at_the_integer_limits_sync(tmp_path: Path, pg: str) -> None:
    db = MemoryDb(tmp_path / "edges.db")
    scope = {"tenant_id": "t", "person_id": "p"}
    for at in (-(2**63), 2**63 - 1, 0):
        db.remember(
            m.RememberRequest(
                **scope, kind="conversation", text=f"edge {at}", captured_at=at, recorded_at=1
            )
        )
    with connect(pg) as conn:
        assert sync_database(conn, db, "up").commits == 3
    with Replica(pg) as replica:
        assert len(replica.search(m.SearchRequest(**scope, query="edge")).items) == 3
