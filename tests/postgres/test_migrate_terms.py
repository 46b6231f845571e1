"""A replica made by an older zkr-postgres (schema 4: English tsvectors, neighbours' raw text as
context) migrates to zkr's recall terms (schema 5): ``terms`` is backfilled from the stored text,
every context recomputed, the tsvectors regenerated — on plain and on partitioned tables — and it
then holds and answers exactly what a replica synced at schema 5 does."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.postgres.conftest import LAYOUT_IDS, LAYOUTS, fresh_database
from zkr import MemoryDb
from zkr import models as m
from zkr_postgres import schema
from zkr_postgres._db import connect
from zkr_postgres.api import Replica
from zkr_postgres.sync import sync_database
from zkr_postgres.testing import LocalServer

SCOPE = {"tenant_id": "t", "person_id": "p"}
QUESTIONS = ["Where does Miso sleep?", "黑豹队的防守丢了多少分", "Что мы читали зимой?", "job"]


def _stored(tmp_path: Path) -> MemoryDb:
    db = MemoryDb(tmp_path / "older.db")
    for at, text in enumerate(
        [
            "I adopted a kitten named Miso",
            "She sleeps on the piano",
            "黑豹队的防守只丢了十六分。",
            "Зимой мы читали книги у камина.",
        ]
    ):
        db.remember(
            m.RememberRequest(
                **SCOPE, kind="conversation", text=text, captured_at=60 * at, recorded_at=60 * at
            )
        )
    db.remember(
        m.RememberRequest(
            **SCOPE,
            kind="document",
            text="I started at Globex as an engineer",
            captured_at=86_400,
            recorded_at=86_400,
            claim=m.ClaimInput(
                subject="me", predicate="employer", value="Globex", kind="fact", valid_from=86_400
            ),
        )
    )
    return db


def _older_replica(server: LocalServer, partitions: int | None, monkeypatch: Any) -> str:
    """A database migrated by the first four migrations only (what zkr-postgres 0.4.0 made)."""
    name = f"zkr_old_{uuid.uuid4().hex}"
    with psycopg.connect(server.dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    dsn = server.dsn_for("postgres", "", name)
    with monkeypatch.context() as patch:
        patch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:4])
        with connect(dsn) as conn:
            assert schema.migrate(conn, partitions) == 4
    return dsn


def _copy_rows(source: str, target: str) -> None:
    """Every row of the scoped tables, in the columns the older schema writes (not generated)."""
    with connect(source) as old, connect(target) as new, new.transaction():
        for table in schema.SCOPED_TABLES:
            columns = [
                str(row[0])
                for row in new.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_schema = 'zkr'"
                    " AND table_name = %s AND is_generated = 'NEVER' ORDER BY ordinal_position",
                    (table,),
                )
            ]
            names = ", ".join(columns)
            rows = old.execute(f"SELECT {names} FROM zkr.{table}").fetchall()
            marks = ", ".join(["%s"] * len(columns))
            with new.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO zkr.{table} ({names}) OVERRIDING SYSTEM VALUE VALUES ({marks})",
                    rows,
                )
        # An older replica's context: the neighbours' raw text, English-stemmed by its tsvector.
        new.execute("UPDATE zkr.sources SET context = 'raw neighbour text'")


def _held(dsn: str) -> tuple[list[Any], list[Any]]:
    with connect(dsn) as conn:
        sources = conn.execute(
            "SELECT id, terms, context, tsv, tsv_tf, tsv_tokens FROM zkr.sources ORDER BY id"
        ).fetchall()
        claims = conn.execute(
            "SELECT id, terms, tsv, tsv_tf, tsv_tokens FROM zkr.claims ORDER BY id"
        ).fetchall()
    return sources, claims


def _answers(dsn: str) -> list[list[tuple[str, str]]]:
    with Replica(dsn) as replica:
        return [
            [
                (i.memory.kind.value, i.memory.id)
                for i in replica.search(m.SearchRequest(**SCOPE, query=q, limit=10)).items
            ]
            for q in QUESTIONS
        ]


@pytest.mark.parametrize("partitions", LAYOUTS, ids=LAYOUT_IDS)
def test_an_older_replica_migrates_to_recall_terms(
    tmp_path: Path, pg_server: LocalServer, partitions: int | None, monkeypatch: Any
) -> None:
    db = _stored(tmp_path)
    synced = fresh_database(pg_server, partitions)
    with connect(synced) as conn:
        sync_database(conn, db, "up")
    older = _older_replica(pg_server, partitions, monkeypatch)
    _copy_rows(synced, older)
    with connect(older) as conn:
        columns = {
            str(r[0])
            for r in conn.execute(
                "SELECT column_name FROM information_schema.columns"
                " WHERE table_schema = 'zkr' AND table_name = 'sources'"
            )
        }
        assert "terms" not in columns  # really the older layout
        assert schema.migrate(conn) == 5
        version = conn.execute("SELECT max(version) FROM zkr.schema_migrations").fetchone()
        assert version is not None and version[0] == 5
    sources, claims = _held(older)
    assert (sources, claims) == _held(synced)
    assert any("黑豹" in str(row[1]) for row in sources)  # Chinese bigrams, not one clause token
    assert all("raw" not in str(row[2]) for row in sources)  # every context recomputed
    assert claims and all(row[1] for row in claims)  # the claim's statement has its terms
    answers = _answers(older)
    assert answers == _answers(synced)
    assert all(answers), answers  # every question finds something after the migration
