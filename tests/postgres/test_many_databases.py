"""Issue 17, acceptance 1 and 2: four SQLite databases, 1,000 persons, one PostgreSQL.

1. After a sync, for every person, ``memories`` (every page, paged small so the cursor is used),
   ``history`` of every claim id, ``get`` of every record id the person was ever given and a set
   of searches answer from the replica with the same live records, excerpts and citations as from
   the source databases (search order may differ: the replica ranks for recall).
2. ``zkr-postgres sync`` killed with SIGKILL at random points 20 times, then resumed, leaves the
   replica equal, row for row, to a clean sync (no loss, no duplicates).

Both run on each layout of :data:`tests.postgres.conftest.LAYOUTS` (plain tables, and 16 hash
partitions by scope, which the killed runs ask for with ``--partitions 16`` themselves); the
source databases are built once for both.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from psycopg import Connection

from tests.postgres.builders import Person
from tests.postgres.conftest import LAYOUT_IDS, LAYOUTS, fresh_database
from tests.postgres.test_reads import all_pages
from zkr import models as m
from zkr.db import MemoryDb
from zkr.errors import NotFound
from zkr_postgres._db import connect
from zkr_postgres.api import Replica
from zkr_postgres.schema import SCOPED_TABLES
from zkr_postgres.sync import sync_database, upstream_of
from zkr_postgres.testing import LocalServer

# Minutes on two cores: `nox -s postgres` runs these, the isolated tox run skips them.
pytestmark = pytest.mark.slow

DATABASES = 4
PERSONS = 1_000
KILLS = 20


def _scopes(index: int) -> list[tuple[str, str]]:
    """The scopes of database *index*: persons spread over tenants, with awkward names too."""
    per_db = PERSONS // DATABASES
    tenants = ["acme", "globex", "tenant é", "x"]
    return [
        (tenants[n % len(tenants)], f"person-{index}-{n}" if n % 50 else f"pérson ☃ {index} {n}")
        for n in range(per_db)
    ]


def _start_build(path: Path, index: int) -> subprocess.Popen[str]:
    """Build database *index* in a child process (``tests.postgres.builders`` as a script)."""
    command = [sys.executable, "-m", "tests.postgres.builders", str(path), str(17 + index)]
    command.append(json.dumps(_scopes(index)))
    root = Path(__file__).resolve().parents[2]
    return subprocess.Popen(command, cwd=root, stdout=subprocess.PIPE, text=True)


Sources = list[tuple[Path, list[Person]]]


@pytest.fixture(scope="module", params=LAYOUTS, ids=LAYOUT_IDS)
def layout(request: pytest.FixtureRequest) -> int | None:
    """The number of hash partitions of the replicas (None: plain tables)."""
    partitions: int | None = request.param
    return partitions


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> Sources:
    """Four databases of 250 persons each, built two at a time (CI has two cores)."""
    folder = tmp_path_factory.mktemp("sources")
    paths = [folder / f"machine-{i}.db" for i in range(DATABASES)]
    built: list[list[Person]] = []
    for pair in (paths[:2], paths[2:]):
        children = [_start_build(path, paths.index(path)) for path in pair]
        for child in children:
            out, _ = child.communicate()
            assert child.returncode == 0
            built.append([Person(**p) for p in json.loads(out)])
    assert sum(len(group) for group in built) == PERSONS
    return list(zip(paths, built, strict=True))


@pytest.fixture(scope="module")
def clean_replica(pg_server: LocalServer, sources: Sources, layout: int | None) -> str:
    dsn = fresh_database(pg_server, layout)
    with connect(dsn) as conn:
        for path, _ in sources:
            db = MemoryDb(path)
            try:
                sync_database(conn, db, upstream_of(str(path)).name)
            finally:
                db.close()
        conn.execute("ANALYZE")  # as autovacuum would after a large load
    return dsn


def _get(run: Any, scope: dict[str, str], kind: str, target_id: str) -> m.RetrievalItem | None:
    request = m.GetRequest(**scope, target=m.TargetRef(kind=m.TargetKind(kind), id=target_id))
    try:
        item = run(request)
    except NotFound:
        return None
    assert isinstance(item, m.RetrievalItem)
    return item


def _cited(pack: m.RetrievalPack) -> set[tuple[str, str, str, tuple[str, ...]]]:
    return {
        (i.memory.kind.value, i.memory.id, i.excerpt, tuple(i.evidence_ids)) for i in pack.items
    }


def test_every_person_reads_the_same_live_records(sources: Sources, clean_replica: str) -> None:
    compared_items = compared_hits = listed = versions = 0
    with Replica(clean_replica) as replica:
        dbs = [MemoryDb(path) for path, _ in sources]
        try:
            for db, person in (
                (db, p) for db, (_, ps) in zip(dbs, sources, strict=True) for p in ps
            ):
                scope = {"tenant_id": person.tenant_id, "person_id": person.person_id}
                for listing in ({**scope, "limit": 100}, {**scope, "limit": 3}):
                    expected_pages = all_pages(db.memories, listing)
                    assert all_pages(replica.memories, listing) == expected_pages, person
                    listed += sum(len(page.items) for page in expected_pages)
                for claim_id in person.claims:
                    chain = db.history(m.HistoryRequest(**scope, claim_id=claim_id))
                    assert replica.history(m.HistoryRequest(**scope, claim_id=claim_id)) == chain
                    versions += len(chain.versions)
                # Evidence items are the source's text under the evidence id: sources and
                # claims are the two ways an item is materialised.
                for kind, ids in (("source", person.sources), ("claim", person.claims)):
                    for target_id in ids:
                        expected = _get(db.get, scope, kind, target_id)
                        assert _get(replica.get, scope, kind, target_id) == expected, (
                            person,
                            kind,
                            target_id,
                        )
                        compared_items += expected is not None
                for query in (person.word, f"{person.word} number"):
                    request = m.SearchRequest(**scope, query=query, limit=100)
                    expected_hits = _cited(db.search(request))
                    assert _cited(replica.search(request)) == expected_hits, (person, query)
                    compared_hits += len(expected_hits)
        finally:
            for db in dbs:
                db.close()
    print(
        f"compared {compared_items} live items, {compared_hits} search hits,"
        f" {listed} listed memories and {versions} claim versions"
    )
    assert compared_items > PERSONS * 2
    assert listed > PERSONS * 2 * 4
    assert versions >= sum(len(p.claims) for _, ps in sources for p in ps)
    assert compared_hits > PERSONS * 3


def _dump(dsn: str, scopes: set[tuple[str, str]]) -> dict[str, list[tuple[Any, ...]]]:
    """Every replica table's rows of *scopes*, sorted, without the wall-clock columns (every
    table's first two columns are tenant_id and person_id) and without arrival numbers."""
    # `seq` numbers rows in arrival order across the whole server (a killed transaction also uses
    # numbers up): its values differ between runs, the order it gives within a scope (compared
    # through `context`, which it decides) does not.
    clock = {"applied_at", "updated_at", "seq"}
    tables: dict[str, list[tuple[Any, ...]]] = {}
    with connect(dsn) as conn:
        for table in SCOPED_TABLES:
            columns = [
                str(row[0])
                for row in conn.execute(
                    "SELECT column_name FROM information_schema.columns"
                    " WHERE table_schema = 'zkr' AND table_name = %s ORDER BY ordinal_position",
                    (table,),
                ).fetchall()
                if row[0] not in clock
            ]
            listed = ", ".join(f'"{c}"::text' for c in columns)
            rows = conn.execute(f"SELECT {listed} FROM zkr.{table}").fetchall()  # type: ignore[arg-type]
            tables[table] = sorted(tuple(row) for row in rows if (row[0], row[1]) in scopes)
    return tables


def _applied(conn: Connection[Any]) -> int:
    row = conn.execute("SELECT count(*) FROM zkr.commits").fetchone()
    return int(row[0]) if row else 0


def _sync_command(dsn: str, paths: list[Path], layout: int | None) -> list[str]:
    args = [sys.executable, "-m", "zkr_postgres", "sync", "--dsn", dsn]
    if layout is not None:  # the layout the replica already has: the option keeps it
        args += ["--partitions", str(layout)]
    for path in paths:
        args += ["--db", str(path)]
    return args


def test_sigkill_twenty_times_then_resume_equals_a_clean_sync(
    pg_server: LocalServer, sources: Sources, clean_replica: str, layout: int | None
) -> None:
    # Two of the four databases (500 persons): the kills need a long sync, not all of them.
    killed_sources = sources[:2]
    paths = [path for path, _ in killed_sources]
    scopes = {(p.tenant_id, p.person_id) for _, persons in killed_sources for p in persons}
    clean = _dump(clean_replica, scopes)
    dsn = fresh_database(pg_server, layout)
    rng = random.Random(2026)
    command = _sync_command(dsn, paths, layout)
    total = len(clean["commits"])
    progress: list[int] = []
    held = 0
    # Each run is killed once it has applied a random number of further commits: the kill lands
    # while it works (wherever it is in its page), however slow the machine is to start it.
    for _ in range(KILLS):
        target = held + rng.randint(1, max(1, total // (KILLS * 3)))
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with connect(dsn) as conn:
            while process.poll() is None and held < target:
                time.sleep(rng.uniform(0.0, 0.02))
                held = _applied(conn)
        assert process.poll() is None, "the sync finished before it was killed"
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        with connect(dsn) as conn:
            held = _applied(conn)
        progress.append(held)
    finished = subprocess.run(command, capture_output=True, text=True, check=False)
    assert finished.returncode == 0, finished.stderr
    print(f"{KILLS} kills; commits held after each (of {total}): {progress}")
    assert progress == sorted(progress) and progress[-1] < total
    assert _dump(dsn, scopes) == clean
