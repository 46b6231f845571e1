"""zkr-postgres at platform size (issue 30, point 5): the partitioned replica with a standby.

Usage (from the repository root, in the workspace environment with the postgres group)::

    python benchmarks/postgres_platform.py [--persons 10000] [--per-person 100] [--partitions 16]
        [--dimension 384] [--queries 300] [--sync-memories 5000] [--out report.json]

What one run measures, on this machine:

* **sync rate**: ``--sync-memories`` memories written to a zkr SQLite file with zkr's own
  ``remember``, then ``sync_database`` into the partitioned replica: memories per second (the
  real path, every record through ``apply``);
* **the corpus** of ``--persons`` x ``--per-person`` memories is then written **directly with
  bulk SQL** (sources, one evidence each, and one vector each in a lane of ``--dimension``):
  sync at 1,000,000 memories would take hours on two cores, and what a search reads is the same
  rows. The neighbour context that ``apply`` computes is computed the same way here (the two
  captures before and after, same person and kind, within 3 hours, with window functions). The
  texts draw words from a fixed vocabulary; vectors are seeded random unit vectors (a search's
  time does not depend on what they mean);
* a **streaming standby** made with ``pg_basebackup -R -X stream`` after the load;
* **search** through the library (``zkr_postgres.api.Replica``, generic plans as ``serve`` makes
  them), one random person per request: median and p95, lexical and hybrid, from the primary and
  from the standby;
* **partition pruning**: the partitions the search statements read (``EXPLAIN ANALYZE`` with the
  generic plan);
* **disk per memory**: the size of every table and index of the schema over the memories held.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from zkr import models as m
from zkr.db import MemoryDb
from zkr_postgres._db import Conn, connect
from zkr_postgres.api import Replica
from zkr_postgres.retrieval import lexical_params, lexical_sql
from zkr_postgres.schema import create_lane, migrate
from zkr_postgres.sync import sync_database
from zkr_postgres.testing import caught_up, local_server, local_standby

WORDS = (
    "hiking",
    "coffee",
    "piano",
    "garden",
    "dentist",
    "marathon",
    "recipe",
    "lisbon",
    "berlin",
    "kayak",
    "violin",
    "novel",
    "chess",
    "pottery",
    "tennis",
    "sushi",
    "museum",
    "camping",
    "yoga",
    "guitar",
    "painting",
    "jazz",
    "bakery",
    "football",
    "sister",
    "brother",
    "meeting",
    "project",
    "deadline",
    "birthday",
    "vacation",
    "doctor",
    "school",
    "train",
    "flight",
    "weather",
    "dinner",
    "lunch",
    "breakfast",
    "movie",
    "concert",
    "book",
    "friend",
    "colleague",
    "manager",
    "apartment",
    "rent",
    "car",
    "bike",
    "running",
    "swimming",
    "climbing",
    "photography",
    "camera",
    "phone",
    "laptop",
    "tomato",
    "basil",
)
MODEL, VERSION = "bench-random", "1"


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def _summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "median_ms": round(statistics.median(ordered) * 1000, 2),
        "p95_ms": round(ordered[int(len(ordered) * 0.95) - 1] * 1000, 2),
        "n": len(ordered),
    }


def measure_sync(conn: Conn, folder: Path, memories: int) -> dict[str, Any]:
    db = MemoryDb(folder / "sync.db")
    rng = random.Random(7)
    for n in range(memories):
        db.remember(
            m.RememberRequest(
                tenant_id="sync",
                person_id=f"p{n % 50}",
                kind=m.SourceKind.conversation,
                text=" ".join(rng.choices(WORDS, k=12)),
                captured_at=1_700_000_000 + n * 60,
                recorded_at=1_700_000_000 + n * 60,
            )
        )
    started = time.perf_counter()
    stats = sync_database(conn, db, "bench-sync")
    elapsed = time.perf_counter() - started
    db.close()
    return {
        "memories": memories,
        "events": stats.events,
        "seconds": round(elapsed, 2),
        "memories_per_s": round(memories / elapsed, 1),
    }


def bulk_load(conn: Conn, persons: int, per_person: int, dimension: int) -> dict[str, Any]:
    """The corpus, one person at a time in batches (the words and vectors drawn in SQL)."""
    lane = create_lane_now(conn, dimension)
    words = list(WORDS)
    started = time.perf_counter()
    batch = max(1, 20_000 // per_person)
    for first in range(0, persons, batch):
        last = min(persons, first + batch)
        with conn.transaction():
            conn.execute(
                """
                INSERT INTO zkr.sources(tenant_id, person_id, id, upstream, revision, kind,
                  content, captured_at, recorded_at, context)
                SELECT tenant, person, id, 'bulk', 1, 'conversation', content, at, at,
                  concat_ws(' ',
                    CASE WHEN at - lag(at, 2) OVER w <= 10800 THEN lag(content, 2) OVER w END,
                    CASE WHEN at - lag(at, 1) OVER w <= 10800 THEN lag(content, 1) OVER w END,
                    CASE WHEN lead(at, 1) OVER w - at <= 10800 THEN lead(content, 1) OVER w END,
                    CASE WHEN lead(at, 2) OVER w - at <= 10800 THEN lead(content, 2) OVER w END)
                FROM (
                  SELECT 't' || (p %% 20) AS tenant, 'person-' || p AS person,
                    md5(p || ':' || n) AS id,
                    1700000000 + n * 600 + (n / 10) * 86400 AS at,
                    (SELECT string_agg(
                       (%(words)s::text[])[1 + floor(random() * %(nwords)s)::int], ' ')
                       FROM generate_series(1, 12 + (n %% 3)) g WHERE g > 0 * p * n) AS content
                  FROM generate_series(%(first)s, %(last)s - 1) p,
                       generate_series(0, %(per)s - 1) n) s
                WINDOW w AS (PARTITION BY tenant, person ORDER BY at, id)
                """,
                {
                    "words": words,
                    "nwords": len(words),
                    "first": first,
                    "last": last,
                    "per": per_person,
                },
            )
            conn.execute(
                """
                INSERT INTO zkr.evidence(tenant_id, person_id, id, source_id, source_revision,
                  quote, recorded_at)
                SELECT tenant_id, person_id, md5('e' || id), id, 1, content, recorded_at
                FROM zkr.sources
                WHERE upstream = 'bulk' AND person_id = ANY(%(persons)s)
                """,
                {"persons": [f"person-{p}" for p in range(first, last)]},
            )
            conn.execute(
                f"""
                INSERT INTO zkr.{lane}(tenant_id, person_id, target_kind, target_id, input_hash,
                  embedding)
                SELECT tenant_id, person_id, 'source', id, md5(content),
                  (SELECT array_agg(random() - 0.5)::vector
                     FROM generate_series(1, {dimension}) g WHERE g > 0 * length(id))
                FROM zkr.sources
                WHERE upstream = 'bulk' AND person_id = ANY(%(persons)s)
                """,
                {"persons": [f"person-{p}" for p in range(first, last)]},
            )
        if first // batch % 10 == 0:
            log(f"loaded {last}/{persons} persons")
    elapsed = time.perf_counter() - started
    conn.execute("ANALYZE")
    return {
        "memories": persons * per_person,
        "seconds": round(elapsed, 1),
        "memories_per_s": round(persons * per_person / elapsed, 1),
    }


def create_lane_now(conn: Conn, dimension: int) -> str:
    with conn.transaction():
        return create_lane(conn, MODEL, VERSION, dimension, "none", "cosine")


def measure_search(
    dsn: str, persons: int, queries: int, dimension: int, seed: int
) -> dict[str, Any]:
    rng = random.Random(seed)
    lexical: list[float] = []
    hybrid: list[float] = []
    found = 0
    with Replica(dsn) as replica:
        for n in range(queries + 20):
            person = rng.randrange(persons)
            tenant, person_id = f"t{person % 20}", f"person-{person}"
            query = " ".join(rng.sample(WORDS, 2))
            started = time.perf_counter()
            pack = replica.search(
                m.SearchRequest(tenant_id=tenant, person_id=person_id, query=query, limit=10)
            )
            took = time.perf_counter() - started
            vector = [rng.random() - 0.5 for _ in range(dimension)]
            embedding = m.QueryEmbedding(model=MODEL, version=VERSION, vector=vector)
            started = time.perf_counter()
            replica.search(
                m.SearchRequest(
                    tenant_id=tenant,
                    person_id=person_id,
                    query=query,
                    limit=10,
                    query_embedding=embedding,
                )
            )
            took_hybrid = time.perf_counter() - started
            if n >= 20:  # the first requests prepare the statements
                lexical.append(took)
                hybrid.append(took_hybrid)
                found += bool(pack.items)
    return {
        "lexical": _summary(lexical),
        "hybrid": _summary(hybrid),
        "lexical_found_share": round(found / queries, 3),
    }


def measure_pruning(dsn: str) -> dict[str, Any]:
    scope = {"t": "t3", "p": "person-3"}
    params = {**scope, **lexical_params("coffee piano", 50)}
    with connect(dsn) as conn, conn.transaction():
        conn.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        row = conn.execute(
            "EXPLAIN (ANALYZE, COSTS OFF, FORMAT JSON) " + lexical_sql_now(),
            params,
        ).fetchone()
    assert row is not None
    read: set[str] = set()

    def walk(plan: dict[str, Any]) -> None:
        if "Relation Name" in plan and plan.get("Actual Loops", 0) > 0:
            read.add(str(plan["Relation Name"]))
        for child in plan.get("Plans", []):
            walk(child)

    walk(row[0][0]["Plan"])
    return {"lexical_search_reads": sorted(read)}


def lexical_sql_now() -> str:
    from zkr_postgres.retrieval import _Rules

    return lexical_sql(_Rules(None))


def disk(conn: Conn, memories: int) -> dict[str, Any]:
    row = conn.execute(
        "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c"
        " JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = 'zkr' AND c.relkind = 'r'"
    ).fetchone()
    total = int(row[0]) if row and row[0] else 0
    return {"bytes": total, "bytes_per_memory": round(total / max(memories, 1))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--persons", type=int, default=10_000)
    parser.add_argument("--per-person", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=16)
    parser.add_argument("--dimension", type=int, default=384)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--sync-memories", type=int, default=5_000)
    parser.add_argument("--out", type=Path, default=Path("bench-postgres-platform.json"))
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="zkr-platform-bench-"))
    report: dict[str, Any] = {"args": {k: str(v) for k, v in vars(args).items()}}
    try:
        with local_server(folder / "primary") as primary:
            with connect(primary.dsn) as conn:
                migrate(conn, args.partitions)
                log("sync rate")
                report["sync"] = measure_sync(conn, folder, args.sync_memories)
                log(f"bulk load {args.persons} x {args.per_person}")
                report["load"] = bulk_load(conn, args.persons, args.per_person, args.dimension)
                memories = args.persons * args.per_person + args.sync_memories
                report["disk"] = disk(conn, memories)
            log("standby")
            with local_standby(primary, folder / "standby" / "data") as standby:
                report["standby_catch_up_s"] = round(caught_up(primary.dsn, standby.dsn), 3)
                report["pruning"] = measure_pruning(primary.dsn)
                log("search from the primary")
                report["search_primary"] = measure_search(
                    primary.dsn, args.persons, args.queries, args.dimension, 1
                )
                log("search from the standby")
                report["search_standby"] = measure_search(
                    standby.dsn, args.persons, args.queries, args.dimension, 2
                )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
