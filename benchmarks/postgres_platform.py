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
import os
import platform
import random
import shutil
import statistics
import subprocess
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
from zkr_postgres.testing import (
    LocalServer,
    caught_up,
    existing_server,
    local_server,
    local_standby,
)

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


def measure_sync(
    conn: Conn, server_dir: Path, folder: Path, memories: int, tenant: str
) -> dict[str, Any]:
    """*memories* memories written to a new zkr file by ``remember`` (not timed), then synced
    (timed: wall, CPU of this process and of the server)."""
    db = MemoryDb(folder / f"sync-{tenant}.db")
    rng = random.Random(7)
    with db.atomic():
        for n in range(memories):
            db.remember(
                m.RememberRequest(
                    tenant_id=tenant,
                    person_id=f"p{n % 50}",
                    kind=m.SourceKind.conversation,
                    text=" ".join(rng.choices(WORDS, k=12)),
                    captured_at=1_700_000_000 + n * 60,
                    recorded_at=1_700_000_000 + n * 60,
                )
            )
    meter = Meter(server_dir)
    stats = sync_database(conn, db, f"bench-{tenant}")
    measured = meter.stop()
    db.close()
    cpu = measured["cpu_client_s"] + measured["cpu_server_s"]
    return {
        "memories": memories,
        "events": stats.events,
        "memories_per_s": round(memories / measured["wall_s"], 1),
        "memories_per_cpu_s": round(memories / cpu, 1),
        "metered": "sync_database alone",
        **measured,
    }


def bulk_load(conn: Conn, persons: int, per_person: int, dimension: int) -> dict[str, Any]:
    """The corpus, a batch of persons per statement (the words and vectors drawn in SQL): the
    sources, one evidence each and one vector each, written by one statement so that nothing
    is read back."""
    lane = create_lane_now(conn, dimension)
    statement, extra = bulk_statement(conn, lane, dimension)
    started = time.perf_counter()
    batch = max(1, 20_000 // per_person)
    for first in range(0, persons, batch):
        last = min(persons, first + batch)
        with conn.transaction():
            conn.execute(
                statement,
                {
                    "words": list(WORDS),
                    "nwords": len(WORDS),
                    "first": first,
                    "last": last,
                    "per": per_person,
                    **extra,
                },
            )
        if first // batch % 10 == 0:
            log(f"loaded {last}/{persons} persons")
    elapsed = time.perf_counter() - started
    return {
        "memories": persons * per_person,
        "seconds": round(elapsed, 1),
        "memories_per_s": round(persons * per_person / elapsed, 1),
    }


def bulk_statement(conn: Conn, lane: str, dimension: int) -> tuple[str, dict[str, Any]]:
    """The bulk statement for the replica's schema, and its parameters besides the batch.

    A replica whose sources hold zkr's recall ``terms`` (schema 5) gets what ``apply`` writes:
    each capture's terms (each word's terms as zkr_postgres.terms computes them for the
    vocabulary's texts) and, as context, the terms of the recall index's window of neighbours.
    An older one gets the neighbours' text (the two captures before and after within 3 hours).
    """
    has_terms = conn.execute(
        "SELECT 1 FROM pg_attribute WHERE attrelid = 'zkr.sources'::regclass"
        " AND attname = 'terms' AND NOT attisdropped"
    ).fetchone()
    if has_terms is None:
        context = _context_sql("content", (-2, -1, 1, 2), 10_800)
        return _BULK_SQL.format(
            lane=lane, dimension=dimension, terms_column="", terms="", context=context
        ), {}
    from zkr.retrieval import replica_parts as core  # schema 5's window and gap

    offsets = (*range(-core.BEFORE, 0), *range(1, core.AFTER + 1))
    context = _context_sql("terms", offsets, core.SESSION_GAP_SECONDS)
    return _BULK_SQL.format(
        lane=lane,
        dimension=dimension,
        terms_column=", terms",
        terms=", " + _joined("terms") + " AS terms",
        context=context,
    ), {"terms": vocabulary_terms()}


def vocabulary_terms() -> list[str]:
    """Each word's recall terms (one per word, read from one text of the whole vocabulary: the
    language analysis reads a text, not a word), checked against whole generated texts."""
    from zkr_postgres.terms import terms_of

    terms = terms_of([" ".join(WORDS)])[0].split(" ")
    if len(terms) != len(WORDS):
        raise SystemExit(f"the vocabulary gives {len(terms)} terms for {len(WORDS)} words")
    rng = random.Random(5)
    for _ in range(50):
        drawn = rng.choices(range(len(WORDS)), k=13)
        text = " ".join(WORDS[i] for i in drawn)
        if terms_of([text])[0] != " ".join(terms[i] for i in drawn):
            raise SystemExit(f"the word-by-word terms differ from zkr's for {text!r}")
    return terms


def _joined(array: str) -> str:
    """The words (or their terms) of the drawn indexes ``ix``, space-separated, in order."""
    return (
        f"array_to_string(ARRAY(SELECT (%({array})s::text[])[i]"
        " FROM unnest(ix) WITH ORDINALITY u(i, o) ORDER BY o), ' ')"
    )


def _context_sql(column: str, offsets: tuple[int, ...], gap: int) -> str:
    """concat_ws of the *column* of the neighbours at *offsets* within *gap* seconds."""
    parts = []
    for offset in offsets:
        function = "lag" if offset < 0 else "lead"
        near = f"{function}(at, {abs(offset)}) OVER w"
        value = f"nullif({function}({column}, {abs(offset)}) OVER w, '')"
        parts.append(f"CASE WHEN abs(at - {near}) <= {gap} THEN {value} END")
    return "concat_ws(' ', " + ", ".join(parts) + ")"


# The captures of persons first..last-1 (12-14 words each, a day's ten ten minutes apart), their
# neighbour context as ``apply`` computes it, one evidence quoting each and one random vector each.
_BULK_SQL = (
    """
WITH s AS (
  INSERT INTO zkr.sources(tenant_id, person_id, id, upstream, revision, kind,
    content, captured_at, recorded_at, context{terms_column})
  SELECT tenant, person, id, 'bulk', 1, 'conversation', content, at, at,
    {context}{terms_column}
  FROM (
    SELECT tenant, person, id, at, """
    + _joined("words")
    + """ AS content{terms}
      FROM (
        SELECT 't' || (p %% 20) AS tenant, 'person-' || p AS person,
          md5(p || ':' || n) AS id,
          1700000000 + n * 600 + (n / 10) * 86400 AS at,
          ARRAY(SELECT 1 + floor(random() * %(nwords)s)::int
                  FROM generate_series(1, 12 + (n %% 3)) g WHERE g > 0 * p * n) AS ix
        FROM generate_series(%(first)s, %(last)s - 1) p,
             generate_series(0, %(per)s - 1) n) r) x
  WINDOW w AS (PARTITION BY tenant, person ORDER BY at, id)
  RETURNING tenant_id, person_id, id, content, recorded_at),
e AS (
  INSERT INTO zkr.evidence(tenant_id, person_id, id, source_id, source_revision, quote,
    recorded_at)
  SELECT tenant_id, person_id, md5('e' || id), id, 1, content, recorded_at FROM s)
INSERT INTO zkr.{lane}(tenant_id, person_id, target_kind, target_id, input_hash, embedding)
SELECT tenant_id, person_id, 'source', id, md5(content),
  (SELECT array_agg(random() - 0.5)::vector
     FROM generate_series(1, {dimension}) g WHERE g > 0 * length(id))
FROM s
"""
)


def create_lane_now(conn: Conn, dimension: int) -> str:
    with conn.transaction():
        return create_lane(conn, MODEL, VERSION, dimension, "none", "cosine")


def measure_search(
    server: LocalServer, persons: int, queries: int, dimension: int, seed: int
) -> dict[str, Any]:
    """*queries* lexical searches, then as many hybrid ones, each for a random person (the
    same persons and words for both), after 20 unmeasured ones that prepare the statements;
    each kind's wall time per search and CPU time (this process and the server) per search."""
    rng = random.Random(seed)
    requests: list[tuple[str, str, str, list[float]]] = []
    for _ in range(queries + 20):
        person = rng.randrange(persons)
        vector = [rng.random() - 0.5 for _ in range(dimension)]
        requests.append(
            (f"t{person % 20}", f"person-{person}", " ".join(rng.sample(WORDS, 2)), vector)
        )
    report: dict[str, Any] = {}
    with Replica(server.dsn) as replica:
        for kind in ("lexical", "hybrid"):
            times: list[float] = []
            found = 0
            meter: Meter | None = None
            for n, (tenant, person_id, query, vector) in enumerate(requests):
                if n == 20:  # the first requests prepare the statements
                    meter = Meter(server.data_dir)
                embedding = (
                    m.QueryEmbedding(model=MODEL, version=VERSION, vector=vector)
                    if kind == "hybrid"
                    else None
                )
                request = m.SearchRequest(
                    tenant_id=tenant,
                    person_id=person_id,
                    query=query,
                    limit=10,
                    query_embedding=embedding,
                )
                started = time.perf_counter()
                pack = replica.search(request)
                took = time.perf_counter() - started
                if n >= 20:
                    times.append(took)
                    found += bool(pack.items)
            assert meter is not None
            measured = meter.stop()
            cpu = measured["cpu_client_s"] + measured["cpu_server_s"]
            report[kind] = {
                **_summary(times),
                "cpu_ms_per_search": round(cpu / queries * 1000, 2),
                "found_share": round(found / queries, 3),
                **measured,
            }
    return report


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


def statistics_study(dsn: str, conn: Conn, args: argparse.Namespace) -> dict[str, Any]:
    """The searches' plans and times right after the load (no statistics taken since: a sync
    that outran autovacuum), after ANALYZE of every partition (what autovacuum does in time) and
    after a database-wide ANALYZE (the partitioned parents too, which autovacuum never
    analyzes)."""
    leaves = [
        str(row[0])
        for row in conn.execute(
            "SELECT i.inhrelid::regclass::text FROM pg_inherits i"
            " JOIN pg_class c ON c.oid = i.inhparent JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = 'zkr'"
        ).fetchall()
    ]
    study: dict[str, Any] = {}
    for state, statement in (
        ("after_load", None),
        ("partitions_analyzed", "ANALYZE " + ", ".join(leaves) if leaves else None),
        ("all_analyzed", "ANALYZE"),
    ):
        if statement is not None:
            started = time.perf_counter()
            conn.execute(statement)
            analyze_s = round(time.perf_counter() - started, 1)
        else:
            analyze_s = 0.0
        log(f"statistics: {state}")
        study[state] = {"analyze_s": analyze_s, **first_searches(dsn, args)}
    return study


def first_searches(dsn: str, args: argparse.Namespace) -> dict[str, Any]:
    """A new connection's first searches (at most 60 s of them) and the lexical plan."""
    rng = random.Random(11)
    times: dict[str, list[float]] = {"lexical": [], "hybrid": []}
    with Replica(dsn) as replica:
        replica.conn.execute("SET statement_timeout = '120s'")
        plan = explain_search(replica.conn)
        began = time.perf_counter()
        while len(times["hybrid"]) < 10 and time.perf_counter() - began < 60:
            person = rng.randrange(args.persons)
            tenant, person_id = f"t{person % 20}", f"person-{person}"
            query = " ".join(rng.sample(WORDS, 2))
            vector = [rng.random() - 0.5 for _ in range(args.dimension)]
            embedding = m.QueryEmbedding(model=MODEL, version=VERSION, vector=vector)
            for kind, dense in (("lexical", None), ("hybrid", embedding)):
                request = m.SearchRequest(
                    tenant_id=tenant,
                    person_id=person_id,
                    query=query,
                    limit=10,
                    query_embedding=dense,
                )
                started = time.perf_counter()
                replica.search(request)
                times[kind].append(time.perf_counter() - started)
    return {
        "lexical_plan": plan,
        **{
            f"{kind}_ms": {
                "first": round(values[0] * 1000, 1),
                "median_of_rest": round(statistics.median(values[1:]) * 1000, 1)
                if len(values) > 1
                else None,
                "n": len(values),
            }
            for kind, values in times.items()
        },
    }


def explain_search(conn: Conn) -> dict[str, Any]:
    """EXPLAIN ANALYZE of the lexical search statement (generic plan, as the serving role)."""
    from zkr_postgres.retrieval import scoped

    params = {"t": "t3", "p": "person-3", **lexical_params("coffee piano", 50)}
    with scoped(conn, "t3", "person-3"):
        row = conn.execute(
            "EXPLAIN (ANALYZE, COSTS ON, FORMAT JSON) " + lexical_sql_now(), params
        ).fetchone()
    assert row is not None
    top = row[0][0]
    scans: list[str] = []

    def walk(plan: dict[str, Any]) -> None:
        if "Relation Name" in plan and plan.get("Actual Loops", 0) > 0:
            index = f" using {plan['Index Name']}" if "Index Name" in plan else ""
            scans.append(f"{plan['Node Type']} on {plan['Relation Name']}{index}")
        for child in plan.get("Plans", []):
            walk(child)

    walk(top["Plan"])
    return {
        "planning_ms": round(top.get("Planning Time", 0.0), 1),
        "execution_ms": round(top.get("Execution Time", 0.0), 1),
        "scans": sorted(set(scans)),
    }


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


class Meter:
    """Wall time, CPU time (this process and every server process) and the load average of
    one phase. A server's CPU time is its postmaster's (which counts the backends it reaped)
    plus its live children's, read from /proc."""

    def __init__(self, *data_dirs: Path) -> None:
        self.data_dirs = data_dirs
        self.wall = time.perf_counter()
        self.client = time.process_time()
        self.server = sum(server_cpu(d) for d in data_dirs)
        self.load_start = os.getloadavg()

    def stop(self) -> dict[str, Any]:
        wall = time.perf_counter() - self.wall
        server = sum(server_cpu(d) for d in self.data_dirs) - self.server
        client = time.process_time() - self.client
        return {
            "wall_s": round(wall, 2),
            "cpu_client_s": round(client, 2),
            "cpu_server_s": round(server, 2),
            "load_average_start": [round(v, 2) for v in self.load_start],
            "load_average_end": [round(v, 2) for v in os.getloadavg()],
        }


def server_cpu(data_dir: Path) -> float:
    """CPU seconds of the server running in *data_dir* so far (0 when none runs there)."""
    pid_file = data_dir / "postmaster.pid"
    if not pid_file.is_file():
        return 0.0
    postmaster = int(pid_file.read_text().split()[0])
    ticks = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the process ended meanwhile
        pid, ppid = int(stat.parent.name), int(fields[1])
        if pid == postmaster or ppid == postmaster:
            ticks += sum(int(v) for v in fields[11:15])  # utime stime cutime cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def machine() -> dict[str, Any]:
    model = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    memory = next(
        line.split()[1]
        for line in Path("/proc/meminfo").read_text().splitlines()
        if line.startswith("MemTotal")
    )
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "memory_gib": round(int(memory) / 2**20, 1),
        "python": platform.python_version(),
        "system": platform.platform(),
    }


def commit() -> str:
    result = subprocess.run(
        ["git", "describe", "--always", "--dirty"],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).parent,
    )
    return result.stdout.strip()


def load(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    """A fresh primary with the sync sample and the corpus, statistics taken, and its standby
    (both left in *folder* for :func:`measure`)."""
    report: dict[str, Any] = {}
    with local_server(folder / "primary") as primary:
        with connect(primary.dsn) as conn:
            migrate(conn, args.partitions)
            log("sync rate")
            report["sync"] = measure_sync(
                conn, primary.data_dir, folder, args.sync_memories, "sync"
            )
            log(f"bulk load {args.persons} x {args.per_person}")
            # Autovacuum off while loading: the statistics study below sees the replica as a
            # sync that outran autovacuum leaves it.
            set_autovacuum(conn, on=False)
            meter = Meter(primary.data_dir)
            report["load"] = bulk_load(conn, args.persons, args.per_person, args.dimension)
            report["load"].update(meter.stop())
            log("statistics study")
            report["statistics"] = statistics_study(primary.dsn, conn, args)
            set_autovacuum(conn, on=True)
            memories = args.persons * args.per_person + args.sync_memories
            report["disk"] = disk(conn, memories)
        log("standby")
        standby_dir = folder / "standby" / "data"
        meter = Meter(primary.data_dir)
        with local_standby(primary, standby_dir) as standby:
            report["standby"] = {"catch_up_s": round(caught_up(primary.dsn, standby.dsn), 3)}
            report["standby"].update(meter.stop())
    return report


def set_autovacuum(conn: Conn, *, on: bool) -> None:
    conn.execute(f"ALTER SYSTEM SET autovacuum = {'on' if on else 'off'}")
    conn.execute("SELECT pg_reload_conf()")


def measure(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    """Pruning and the search medians from the primary and the standby of *folder*."""
    report: dict[str, Any] = {}
    with (
        existing_server(folder / "primary") as primary,
        existing_server(folder / "standby" / "data", primary=primary) as standby,
    ):
        report["standby_catch_up_s"] = round(caught_up(primary.dsn, standby.dsn), 3)
        report["pruning"] = measure_pruning(primary.dsn)
        for name, server, seed in (("primary", primary, 1), ("standby", standby, 2)):
            log(f"search from the {name}")
            report[f"search_{name}"] = measure_search(
                server, args.persons, args.queries, args.dimension, seed
            )
        log("sync into the loaded replica")
        with connect(primary.dsn) as conn:
            tenant = f"sync-{time.strftime('%Y%m%d%H%M%S')}"  # a new one each run
            report["sync_loaded"] = measure_sync(
                conn, primary.data_dir, folder, args.sync_memories, tenant
            )
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--persons", type=int, default=10_000)
    parser.add_argument("--per-person", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=16)
    parser.add_argument("--dimension", type=int, default=384)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--sync-memories", type=int, default=5_000)
    parser.add_argument(
        "--data-dir",
        type=Path,
        help="keep the clusters here (outside any checkout) instead of a temporary folder",
    )
    parser.add_argument(
        "--phase",
        choices=("all", "load", "search"),
        default="all",
        help="load: build the clusters in --data-dir and stop; search: measure the clusters a"
        " load left there (the load's figures are read back from its load.json)",
    )
    parser.add_argument("--out", type=Path, default=Path("bench-postgres-platform.json"))
    args = parser.parse_args(argv)
    if args.phase != "all" and args.data_dir is None:
        parser.error(f"--phase {args.phase} needs --data-dir")
    folder = args.data_dir or Path(tempfile.mkdtemp(prefix="zkr-platform-bench-"))
    report: dict[str, Any] = {"machine": machine()}
    try:
        if args.phase in ("all", "load"):
            folder.mkdir(parents=True, exist_ok=True)
            loaded = {
                "args": {k: str(v) for k, v in vars(args).items()},
                "load_commit": commit(),
                **load(args, folder),
            }
            (folder / "load.json").write_text(json.dumps(loaded, indent=2) + "\n")
        loaded = json.loads((folder / "load.json").read_text())
        if "metered" not in loaded.get("sync", {"metered": None}):
            loaded["sync"]["note"] = (
                "an older load: wall_s and cpu_*_s include writing the memories with remember;"
                " seconds and memories_per_s are the sync's (sync_loaded meters the sync alone)"
            )
        report.update(loaded)
        if args.phase in ("all", "search"):
            report["search_commit"] = commit()
            report["search_args"] = {"queries": args.queries, "persons": args.persons}
            report.update(measure(args, folder))
    finally:
        if args.data_dir is None:
            shutil.rmtree(folder, ignore_errors=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
