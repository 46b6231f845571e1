"""Recall search through ``serve`` against its floors, at one corpus size (issue 27.5).

Usage (from the repository root, in the workspace environment)::

    python benchmarks/recall_floor.py [--size 100000] [--baseline-src DIR] [--repeats 2]
                                      [--part lexical|hybrid|both] [--out PATH]

For each query of the benchmark's query mix (``corpus.query_mix``: rare words, common questions,
keywords, phrases), in turn and interleaved so that load changes hit every figure alike:

* ``zkr``: ``{"ranking": "recall", "limit": 10}`` through one ``zkr serve`` process (the request
  line written, the answer line read), lexical and then hybrid (the query mix's 384-dimension
  query vectors, the lane loaded by warm-up requests first);
* ``baseline`` (with ``--baseline-src``): the same requests through a ``serve`` process running the
  code of that checkout (``zkr-core/src`` and ``zkr-cli/src`` first on ``PYTHONPATH``), on a copy
  of the same database;
* the **lexical floor**: the one stemmed FTS5 statement a recall search cannot do without, in this
  process — ``MATCH`` of the same expression (``recall_match``) over the same index, bm25 with the
  same column weights, ``ORDER BY … LIMIT`` the search's first page (64 rows for limit 10);
* the **hybrid floor**: the lexical floor of the hybrid search's first page (it ranks 40
  candidates: 160 rows) plus the numpy scan of the same lane (this process loads it with zkr's
  own ``load_lane``): the matrix product with the query vector (cosine: over the norms) and the
  top 80 rows by ``argpartition`` — what any dense search over that lane pays.

The floors pay no pipe, no JSON and no answer: the ratios are upper bounds of what zkr adds.
Wall time per request and the serve process's CPU time per request (``/proc/PID/stat``) are
reported with medians and p95, ratios of medians and of p95s taken in the same run, the load
average before and after, and the serve processes' resident memory (VmRSS, VmHWM) with the lane
loaded.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus  # importable thanks to the line above
import floors
import run

TICKS = os.sysconf("SC_CLK_TCK")


def stats(seconds: list[float]) -> dict[str, Any]:
    """Median and p95 in milliseconds, and the sample count."""
    if not seconds:
        return {"n": 0, "median_ms": None, "p95_ms": None}
    ordered = sorted(seconds)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "n": len(ordered),
        "median_ms": round(statistics.median(ordered) * 1000, 3),
        "p95_ms": round(p95 * 1000, 3),
    }


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process *pid* so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def _lines(meta: dict[str, Any], mix: list[tuple[str, str]], vectors: list[list[float]]) -> Any:
    lexical, hybrid = [], []
    lane = meta["vectors"]
    for (_, query), vector in zip(mix, vectors, strict=True):
        request = {**run.scope(meta), "query": query, "limit": 10, "ranking": "recall"}
        lexical.append(run.Serve.line("search", request))
        embedding = {"model": lane["model"], "version": lane["version"], "vector": vector}
        hybrid.append(run.Serve.line("search", {**request, "query_embedding": embedding}))
    return lexical, hybrid


def _serve_command(db: Path, src: Path | None) -> tuple[list[str], dict[str, str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZKR_")}
    if src is None:
        return [run.zkr_executable(), "--db", str(db), "serve"], env
    paths = [str(src / "zkr-core" / "src"), str(src / "zkr-cli" / "src")]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return [sys.executable, "-m", "zkr_cli", "--db", str(db), "serve"], env


def measure(args: argparse.Namespace) -> dict[str, Any]:
    built = run.ensure_corpus(Path(args.cache_dir), args.size, args.seed)
    meta = built.meta
    work = Path(args.cache_dir) / "work"
    work.mkdir(parents=True, exist_ok=True)
    queries = corpus.query_mix(meta, args.queries_per_class, args.seed)
    mix = [(name, q) for name, qs in queries.items() for q in qs]
    lexical_lines, hybrid_lines = _lines(meta, mix, run._query_vectors(len(mix), args.seed))
    parts = ("lexical", "hybrid") if args.part == "both" else (args.part,)
    names = ["zkr"] + (["baseline"] if args.baseline_src else [])
    servers: dict[str, run.Serve] = {}
    copies: dict[str, Path] = {}
    for name in names:
        db = work / f"recall-floor-{name}-{args.size}.db"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        shutil.copyfile(built.path, db)
        copies[name] = db
        command, env = _serve_command(db, args.baseline_src if name == "baseline" else None)
        servers[name] = run.Serve(db, work, command, env)
    raw = sqlite3.connect(f"file:{built.path}?mode=ro", uri=True)
    lane = floors.Lane(copies["zkr"], meta) if "hybrid" in parts else None
    report: dict[str, Any] = {"size": args.size}
    try:
        for part in parts:
            before = run.load_average()
            report[part] = _part(part, servers, raw, lane, mix, lexical_lines, hybrid_lines, args)
            report[part]["load_average_before"] = before
            report[part]["load_average_after"] = run.load_average()
            # Resident memory after this part: after the hybrid part, with the lane loaded.
            report[part]["serve_memory_mb"] = {n: server.memory() for n, server in servers.items()}
            report[part]["serve_health"] = {n: server.health() for n, server in servers.items()}
    finally:
        for server in servers.values():
            server.close()
        raw.close()
    report["corpus"] = {"key": built.key, "sources": args.size, "vectors": meta.get("vectors")}
    report["machine"] = {"cpus": os.cpu_count(), "sqlite": sqlite3.sqlite_version}
    report["commits"] = {"zkr": _commit(run.ROOT), "baseline": _commit(args.baseline_src)}
    report["settings"] = {"queries_per_class": args.queries_per_class, "repeats": args.repeats}
    return report


def _commit(src: Path | None) -> str | None:
    if src is None:
        return None
    done = subprocess.run(
        ["git", "-C", str(src), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return done.stdout.strip() or None


def _floor(part: str, raw: Any, lane: floors.Lane | None, query: str, vector: list[float]) -> float:
    if part == "lexical":
        return floors.raw_recall(raw, query, floors.LEXICAL_PAGE)[0]
    assert lane is not None
    return floors.hybrid_floor(raw, lane, query, vector)


def _part(
    part: str,
    servers: dict[str, run.Serve],
    raw: Any,
    lane: floors.Lane | None,
    mix: list[tuple[str, str]],
    lexical_lines: list[bytes],
    hybrid_lines: list[bytes],
    args: argparse.Namespace,
) -> dict[str, Any]:
    lines = lexical_lines if part == "lexical" else hybrid_lines
    vectors = [
        json.loads(line)["request"].get("query_embedding", {}).get("vector") for line in lines
    ]
    started = {}
    for name, server in servers.items():
        began = time.perf_counter()
        server.call_raw(lines[0])  # the first hybrid request loads the lane
        started[name] = round((time.perf_counter() - began) * 1000, 1)
        for line in lines[1:4]:
            server.call_raw(line)
    wall: dict[str, list[float]] = {name: [] for name in [*servers, "floor"]}
    cpu: dict[str, list[float]] = {name: [] for name in servers}
    by_class: dict[str, dict[str, list[float]]] = {}
    floor_cpu = 0.0
    for _ in range(args.repeats):
        for index, ((klass, query), line) in enumerate(zip(mix, lines, strict=True)):
            for name, server in servers.items():
                before = cpu_seconds(server.process.pid)
                elapsed, _ = server.call_raw(line)
                cpu[name].append(cpu_seconds(server.process.pid) - before)
                wall[name].append(elapsed)
                by_class.setdefault(klass, {}).setdefault(name, []).append(elapsed)
            began = time.process_time()
            elapsed = _floor(part, raw, lane, query, vectors[index] or [])
            floor_cpu += time.process_time() - began
            wall["floor"].append(elapsed)
            by_class[klass].setdefault("floor", []).append(elapsed)
    result: dict[str, Any] = {
        "first_request_ms": started,
        "wall": {name: stats(values) for name, values in wall.items()},
        "serve_cpu_ms_per_request": {
            name: round(1000 * sum(values) / len(values), 3) for name, values in cpu.items()
        },
        "floor_cpu_ms_per_request": round(1000 * floor_cpu / len(wall["floor"]), 3),
        "by_class": {
            klass: {name: stats(values)["median_ms"] for name, values in figures.items()}
            for klass, figures in by_class.items()
        },
    }
    for name in servers:
        result[f"{name}_over_floor"] = {
            "median": run.ratio(
                result["wall"][name]["median_ms"], result["wall"]["floor"]["median_ms"]
            ),
            "p95": run.ratio(result["wall"][name]["p95_ms"], result["wall"]["floor"]["p95_ms"]),
        }
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--queries-per-class", type=int, default=15)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--part", choices=("lexical", "hybrid", "both"), default="both")
    parser.add_argument("--baseline-src", type=Path, help="a checkout of the commit to compare")
    parser.add_argument("--cache-dir", default=str(run.ROOT / ".bench"))
    parser.add_argument("--out", type=Path, help="write (merge) the report here")
    args = parser.parse_args(argv)
    report = measure(args)
    text = json.dumps(report, indent=1, sort_keys=True)
    print(text)
    if args.out:
        merged = json.loads(args.out.read_text()) if args.out.exists() else {}
        merged.update({key: value for key, value in report.items() if key != "size"})
        args.out.write_text(json.dumps(merged, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
