"""The 1,000,000-memory point (issue 27.6): import, recall lexical and hybrid, ``remember`` and
``serve``'s memory, on one database built by the bulk path.

Usage (from the repository root, in the workspace environment), one step per process so that the
build runs ``nice``-d and each timed step can hold the machine's benchmark lock on its own::

    nice -n 10 python benchmarks/million.py --steps build
    flock /work/heavy.lock python benchmarks/million.py --steps lexical
    flock /work/heavy.lock python benchmarks/million.py --steps hybrid
    flock /work/heavy.lock python benchmarks/million.py --steps remember --drop

Options: ``--size 1000000 --seed 1 --queries-per-class 15 --repeats 1 --remember-count 1000
--cache-dir .bench --out benchmarks/reports/million.json``. Each step merges its part into
``--out``; the database and its build record stay in ``--cache-dir``/work until ``--drop``.

* ``build``: ``zkr import`` of ``bulk_import.lines_file(size, seed)`` (the benchmark corpus's mix
  of captures, claims, locators, keys and a second person, one ``remember`` request a line) into a
  new database (``bulk_import.run_import``: the child's wall and CPU time, rows per second, load);
  then a lane of *size* vectors (``corpus.add_vectors``: seeded random unit 384-d vectors, lane
  ``bench-random``/``unit-384``, the first 200 through ``embed``, the rest its rows cloned in one
  ``executemany``) — timing-only vectors as ``benchmarks/run.py``'s; the embedder's own speed is
  measured by ``benchmarks/embedders.py``. Wall and CPU time of the lane's writing, file size.
* ``lexical`` / ``hybrid``: ``benchmarks/recall_floor.py``'s measurement (its query mix, request
  lines, floors and per-request statistics) through one ``zkr serve`` of the built database: first
  request, median and p95 wall per request, the serve process's CPU per request, the same run's
  floors and ratios, load before and after, and the serve process's VmHWM/VmRSS after the part
  (after ``hybrid``: with the lane loaded). The first hybrid request after the build also writes
  the lane's projection file beside the database (``<db>.zkr-projections/``, ``zkr.store.sidecars``)
  from the lane's rows: it is the first hybrid search a freshly built database answers.
* ``remember``: ``benchmarks/remember_serve.py``'s sequential request/answer loop (``run.py``'s
  ``remember`` requests) through one ``zkr serve``, into the built database itself (a copy of a
  million memories costs minutes of disk; the step refuses to run twice on one build, whose
  ingestion keys it would replay).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bulk_import  # importable thanks to the line above
import corpus
import floors
import recall_floor
import remember_serve
import run

STEPS = ("build", "lexical", "hybrid", "remember")
VECTORS_NOTE = (
    "seeded random unit 384-d float32 (lane bench-random/unit-384), for timing only, as"
    " benchmarks/run.py's; the embedder's speed is measured by benchmarks/embedders.py"
)


class Build:
    """The database of one size and seed, and the record of how it was built (a JSON file)."""

    def __init__(self, cache_dir: Path, size: int, seed: int) -> None:
        self.work = cache_dir / "work"
        self.db = self.work / f"million-{size}-s{seed}.db"
        self.record_path = self.work / f"million-{size}-s{seed}.json"
        self.record: dict[str, Any] = (
            json.loads(self.record_path.read_text()) if self.record_path.exists() else {}
        )

    @property
    def ready(self) -> bool:
        return self.db.exists() and "vectors" in self.record

    def save(self) -> None:
        self.record_path.write_text(json.dumps(self.record, indent=1) + "\n")

    def drop(self) -> None:
        from zkr.store.sidecars import SIDECAR_SUFFIX

        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.db}{suffix}").unlink(missing_ok=True)
        # The lane's projection file that serve's first hybrid search wrote (1.5 GB at 1M).
        shutil.rmtree(f"{self.db}{SIDECAR_SUFFIX}", ignore_errors=True)
        self.record_path.unlink(missing_ok=True)


def build(args: argparse.Namespace, target: Build) -> dict[str, Any]:
    """Import the lines, then write the lane; each figure saved as soon as it is measured."""
    lines = bulk_import.lines_file(args.cache_dir, args.size, args.seed)
    target.work.mkdir(parents=True, exist_ok=True)
    if "import" not in target.record or not target.db.exists():
        target.drop()
        target.record = {"lines_file": lines.name}
        before = run.load_average()
        run.log(f"million: importing {args.size} lines (load {before})")
        target.record["import"] = {
            **bulk_import.run_import(lines, target.db, None),
            "load_average_before": before,
        }
        target.save()
    if "vectors" not in target.record:
        before = run.load_average()
        run.log(f"million: writing the lane (load {before})")
        started, cpu_started = time.perf_counter(), time.process_time()
        vectors = corpus.add_vectors(target.db, args.size, args.seed, progress=run.log)
        target.record["vectors"] = {
            **vectors,
            "wall_s": round(time.perf_counter() - started, 2),
            "cpu_s": round(time.process_time() - cpu_started, 2),
            "load_average_before": before,
            "load_average_after": run.load_average(),
            "note": VECTORS_NOTE,
        }
        target.save()
    target.record["database"] = run.database_stats(target.db)
    target.save()
    meta(args, target)  # here, not in a timed step: the replay takes seconds at a million
    return target.record


def meta(args: argparse.Namespace, target: Build) -> dict[str, Any]:
    """The corpus metadata the query mix and the requests are drawn from (replayed, cached)."""
    if "meta" not in target.record:
        target.record["meta"] = bulk_import.lines_meta(args.size, args.seed)
        target.save()
    return {**target.record["meta"], "vectors": target.record["vectors"]}


def search(part: str, args: argparse.Namespace, target: Build) -> dict[str, Any]:
    """One of recall_floor's parts through one serve process of the built database."""
    corpus_meta = meta(args, target)
    queries = corpus.query_mix(corpus_meta, args.queries_per_class, args.seed)
    mix = [(name, query) for name, qs in queries.items() for query in qs]
    vectors = run._query_vectors(len(mix), args.seed)
    lexical_lines, hybrid_lines = recall_floor._lines(corpus_meta, mix, vectors)
    lane = floors.Lane(target.db, corpus_meta) if part == "hybrid" else None
    raw = sqlite3.connect(f"file:{target.db}?mode=ro", uri=True)
    command, env = recall_floor._serve_command(target.db, None)
    before = run.load_average()
    server = run.Serve(target.db, target.work, command, env)
    try:
        result = recall_floor._part(
            part, {"zkr": server}, raw, lane, mix, lexical_lines, hybrid_lines, args
        )
        result["serve_memory_mb"] = server.memory()
        result["serve_health"] = server.health()
    finally:
        server.close()
        raw.close()
    result["load_average_before"] = before
    result["load_average_after"] = run.load_average()
    return result


def remember(args: argparse.Namespace, target: Build) -> dict[str, Any]:
    if target.record.get("remembered"):
        raise SystemExit("this build already took the remember step: --steps build after --drop")
    corpus_meta = meta(args, target)
    lines = run.remember_lines(corpus_meta, args.remember_count, args.seed)
    command = [run.zkr_executable(), "--db", str(target.db), "serve"]
    target.record["remembered"] = len(lines)  # before: a run cut short has written some
    target.save()
    figures = remember_serve.compare(
        {"measured": command}, {"measured": target.db}, lines, target.work, corpus_meta
    )
    result: dict[str, Any] = figures.pop("measured")
    return {**result, **figures, "database_sources_before": args.size}


def _commit() -> str:
    done = subprocess.run(
        ["git", "-C", str(run.ROOT), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--steps", default=",".join(STEPS), help="comma-separated, in order")
    parser.add_argument("--queries-per-class", type=int, default=15)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--remember-count", type=int, default=1000)
    parser.add_argument("--cache-dir", type=Path, default=run.ROOT / ".bench")
    parser.add_argument("--out", type=Path, default=Path("million-report.json"))
    parser.add_argument("--drop", action="store_true", help="delete the database when done")
    args = parser.parse_args(argv)
    steps = [step for step in args.steps.split(",") if step]
    unknown = sorted(set(steps) - set(STEPS))
    if unknown:
        parser.error(f"unknown steps: {', '.join(unknown)}")
    target = Build(args.cache_dir, args.size, args.seed)
    report: dict[str, Any] = json.loads(args.out.read_text()) if args.out.exists() else {}
    if report.get("size") not in (None, args.size):
        report = {}  # another size's report: start over rather than mix the two
    report["size"] = args.size
    for step in steps:
        if step != "build" and not target.ready:
            raise SystemExit(f"no built database of {args.size} memories: --steps build first")
        run.log(f"million: {step} (load {run.load_average()})")
        if step == "build":
            record = build(args, target)
            report["build"] = {k: v for k, v in record.items() if k != "meta"}
        elif step == "remember":
            report["remember"] = remember(args, target)
        else:
            report[step] = search(step, args, target)
            report[step]["settings"] = {
                "queries_per_class": args.queries_per_class,
                "repeats": args.repeats,
            }
        report.setdefault("commits", {})[step] = _commit()
        report.setdefault("started_at", {})[step] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        report["machine"] = {
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
            "sqlite": sqlite3.sqlite_version,
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    if args.drop:
        target.drop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
