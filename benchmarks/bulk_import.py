"""``zkr import`` speed against its floor and against a baseline checkout (issue 27.1).

```
python benchmarks/bulk_import.py [--sizes 10000,100000] [--baseline-src DIR] [--out PATH]
                                 [--seed 1] [--cache-dir .bench] [--no-baseline-above N]
```

For each size: a deterministic file of *size* ``remember`` lines (the benchmark corpus's texts,
claims, locators, keys and second person, ``corpus.TextGenerator``; cached under ``--cache-dir``),
then, in one run and in this order:

* ``baseline``: ``zkr --db NEW import FILE`` with the code of ``--baseline-src`` (a checkout of the
  commit to compare with, e.g. ``git worktree add /tmp/old main``: its ``zkr-core/src`` and
  ``zkr-cli/src`` go first on ``PYTHONPATH``); skipped above ``--no-baseline-above`` lines;
* ``zkr``: the same command with this checkout's code (or ``--src``'s, put first the same way);
* ``floor``: the rows that import wrote (every table's, the feed and both FTS tables' contents
  included), read back beforehand, written into a fresh database of the same schema with one
  ``executemany`` per table in one transaction: what SQLite itself needs to store them (the CPU
  of each table's step beside it); then ``floor_journals_in_memory``, the same with SQLite's
  statement journals kept in memory, as ``zkr import`` keeps them (``zkr.writes.bulk``).

Both imports run as installed (bytecode caches written by an untimed run before, whatever
``PYTHONDONTWRITEBYTECODE`` says).

Each figure is wall time and CPU time (the child's user + system from ``wait4``; the floor's from
``time.process_time``), rows per CPU-second, and the ratios the issue asks for (``zkr`` over
``baseline`` in rows per CPU-second, ``zkr`` over ``floor`` in CPU time), with the load average.
Both imports must store the same number of sources and commits, or the run fails.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import corpus  # (importable thanks to the line above when run as a script)

ROOT = Path(__file__).resolve().parent.parent
#: Bump when the generated lines change (cache key, with corpus.code_version()).
LINES_VERSION = 1

# The tables an import writes, in an order their triggers accept (sources' origins set last).
FLOOR_TABLES = (
    "sources",
    "evidence",
    "evidence_locators",
    "claims",
    "claim_evidence",
    "memory_commits",
    "memory_export_events",
)


def log(message: str) -> None:
    print(f"[bulk_import {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def load_average() -> list[float]:
    return [round(value, 2) for value in os.getloadavg()]


def requests(size: int, generator: corpus.TextGenerator) -> Iterator[dict[str, Any]]:
    """*size* remember requests, the benchmark corpus's mix, drawn from *generator*'s ``rng``."""
    rng = generator.rng
    clock = corpus.START_TIME
    for index in range(size):
        clock += rng.randint(30, 2400)
        person = (
            corpus.OTHER_PERSON_ID if rng.random() < corpus.OTHER_PERSON_SHARE else corpus.PERSON_ID
        )
        memory = generator.with_claim() if rng.random() < corpus.CLAIM_SHARE else generator.raw()
        line: dict[str, Any] = {
            "tenant_id": corpus.TENANT_ID,
            "person_id": person,
            "kind": memory.kind,
            "text": memory.text,
            "captured_at": clock,
            "recorded_at": clock + rng.randint(0, 25),
        }
        if memory.kind == "conversation" and rng.random() < 0.4:
            line["ingestion_key"] = f"session-{index // 20}:turn-{index % 20}"
        if memory.claim is not None:
            line["claim"] = {
                "subject": memory.claim.subject,
                "predicate": memory.claim.predicate,
                "value": memory.claim.value,
                "kind": memory.claim.kind,
                "valid_from": clock,
            }
        if memory.locator:
            line["locator"] = memory.locator
        yield line


def write_lines(path: Path, size: int, seed: int) -> None:
    """*size* remember requests as JSON lines, the benchmark corpus's mix."""
    generator = corpus.TextGenerator(random.Random(seed))
    partial = path.with_suffix(".partial")
    with partial.open("w", encoding="utf-8") as out:
        for line in requests(size, generator):
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
    partial.rename(path)


def lines_meta(size: int, seed: int) -> dict[str, Any]:
    """What the searches of a corpus imported from ``lines_file(size, seed)`` draw their queries
    from, as ``corpus.build_corpus`` returns it: the scope, the made-up words used at most three
    times, up to 400 claim-less texts of the first person (the phrase queries' samples, chosen by
    their own seeded draw so the lines stay the file's) and the last clock."""
    generator = corpus.TextGenerator(random.Random(seed))
    pick = random.Random(seed + 5)
    samples: list[str] = []
    clock = corpus.START_TIME
    for line in requests(size, generator):
        clock = line["captured_at"]
        wanted = "claim" not in line and line["person_id"] == corpus.PERSON_ID
        if wanted and len(samples) < 400 and pick.random() < 0.05:
            samples.append(line["text"])
    rare = sorted(word for word, count in generator.rare_counts.items() if count <= 3)
    return {
        "size": size,
        "seed": seed,
        "tenant_id": corpus.TENANT_ID,
        "person_id": corpus.PERSON_ID,
        "rare_words": rare[:2000],
        "phrase_samples": samples,
        "clock": clock,
    }


def lines_file(cache_dir: Path, size: int, seed: int) -> Path:
    path = cache_dir / f"import-{size}-s{seed}-{corpus.code_version()}-l{LINES_VERSION}.jsonl"
    if not path.exists():
        started = time.perf_counter()
        cache_dir.mkdir(parents=True, exist_ok=True)
        write_lines(path, size, seed)
        log(f"wrote {path.name} in {time.perf_counter() - started:.1f} s")
    return path


def run_import(lines: Path, db: Path, src: Path | None) -> dict[str, Any]:
    """One ``zkr import`` process; wall and CPU time from ``wait4``."""
    # As installed: with bytecode caches (a PYTHONDONTWRITEBYTECODE in the harness's environment
    # had every run compile ~170 modules from source, 0.35 CPU-seconds no user pays; run.py's
    # start-up section does the same).
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("ZKR_") and k != "PYTHONDONTWRITEBYTECODE"
    }
    # No installed plugin is loaded on either side: an import needs none, and the workspace's
    # plugins are today's code, which an older baseline's zkr-core cannot load.
    env["ZKR_LOAD_PLUGINS"] = ""
    if src is not None:
        paths = [str(src / "zkr-core" / "src"), str(src / "zkr-cli" / "src")]
        env["PYTHONPATH"] = os.pathsep.join(paths)
    probe = subprocess.run(
        [sys.executable, "-c", "import zkr, zkr_cli; print(zkr.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    # One untimed import of nothing first: it writes the bytecode caches of every module the
    # timed run imports.
    warm = db.with_name(db.name + ".warm")
    subprocess.run(
        [sys.executable, "-m", "zkr_cli", "--db", str(warm), "import", os.devnull],
        env=env,
        capture_output=True,
        check=True,
    )
    for suffix in ("", "-wal", "-shm"):
        Path(f"{warm}{suffix}").unlink(missing_ok=True)
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "zkr_cli", "--db", str(db), "import", str(lines)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    out = process.stdout.read()
    err = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"import failed: {err.decode(errors='replace')[-2000:]}")
    summary = json.loads(out)
    cpu = usage.ru_utime + usage.ru_stime
    return {
        "code": probe.stdout.strip(),
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "rows_per_cpu_s": round(summary["stored"] / cpu, 1),
        "rows_per_wall_s": round(summary["stored"] / wall, 1),
        "stored": summary["stored"],
        "refused_count": summary["refused_count"],
        "load_average": load_average(),
    }


def counts(db: Path) -> dict[str, int]:
    conn = sqlite3.connect(db)
    try:
        return {
            table: conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
            for table in (*FLOOR_TABLES, "recall_fts", "source_fts")
        }
    finally:
        conn.close()


def floor(imported: Path, fresh: Path, *, journals_in_memory: bool = False) -> dict[str, Any]:
    """Write the rows *imported* holds into *fresh* (a new database of the same schema) with one
    ``executemany`` per table in one transaction; CPU and wall time of the writing alone (each
    table is read beforehand, untimed, and dropped once written, so a million rows fit), and the
    CPU of each step (where the floor's own time goes). With *journals_in_memory*, SQLite keeps
    its statement journals in memory (``PRAGMA temp_store = MEMORY``), as ``zkr import`` does."""
    from zkr.db import MemoryDb

    MemoryDb(fresh).close()  # the schema, created as zkr creates it
    source = sqlite3.connect(imported)
    steps: list[tuple[str, str]] = []
    for table in FLOOR_TABLES:
        columns = [row[1] for row in source.execute(f'PRAGMA table_info("{table}")')]
        if table == "sources":
            columns = ["rowid"] + [
                c for c in columns if c not in ("origin_evidence_id", "origin_claim_id")
            ]
        names = ", ".join(columns)
        marks = ", ".join("?" for _ in columns)
        steps.append(
            (
                f'SELECT {names} FROM "{table}" ORDER BY rowid',
                f'INSERT INTO "{table}"({names}) VALUES ({marks})',
            )
        )
    steps.append(
        (
            "SELECT origin_evidence_id, origin_claim_id, id FROM sources ORDER BY rowid",
            "UPDATE sources SET origin_evidence_id = ?, origin_claim_id = ? WHERE id = ?",
        )
    )
    for table, fts_columns in (
        ("source_fts", "rowid, source_id, tenant_id, person_id, content"),
        ("recall_fts", "rowid, content, statement, context"),
    ):
        marks = ", ".join("?" for _ in fts_columns.split(", "))
        steps.append(
            (
                f"SELECT {fts_columns} FROM {table} ORDER BY rowid",
                f"INSERT INTO {table}({fts_columns}) VALUES ({marks})",
            )
        )
    conn = sqlite3.connect(fresh, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    if journals_in_memory:
        conn.execute("PRAGMA temp_store = MEMORY")
    wall = cpu = 0.0
    step_cpu: dict[str, float] = {}
    conn.execute("BEGIN IMMEDIATE")
    for read, write in steps:
        data = source.execute(read).fetchall()
        started, cpu_started = time.perf_counter(), time.process_time()
        conn.executemany(write, data)
        spent = time.process_time() - cpu_started
        cpu += spent
        wall += time.perf_counter() - started
        step_cpu[" ".join(write.split()[:3])] = round(spent, 3)
        del data
    started, cpu_started = time.perf_counter(), time.process_time()
    conn.execute("COMMIT")
    step_cpu["COMMIT"] = round(time.process_time() - cpu_started, 3)
    cpu += step_cpu["COMMIT"]
    wall += time.perf_counter() - started
    (stored,) = conn.execute("SELECT count(*) FROM sources").fetchone()
    conn.close()
    source.close()
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "rows_per_cpu_s": round(stored / cpu, 1),
        "stored": stored,
        "step_cpu_s": step_cpu,
        "load_average": load_average(),
    }


def measure(
    size: int,
    lines: Path,
    work: Path,
    baseline_src: Path | None,
    run_baseline: bool,
    src: Path | None = None,
) -> dict[str, Any]:
    result: dict[str, Any] = {"lines": size}
    paths = {name: work / f"import-{size}-{name}.db" for name in ("baseline", "zkr", "floor")}
    for path in paths.values():
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    if baseline_src is not None and run_baseline:
        log(f"{size}: baseline import (load {load_average()})")
        result["baseline"] = run_import(lines, paths["baseline"], baseline_src)
        log(f"{size}: baseline {result['baseline']}")
    log(f"{size}: zkr import (load {load_average()})")
    result["zkr"] = run_import(lines, paths["zkr"], src)
    log(f"{size}: zkr {result['zkr']}")
    result["counts"] = counts(paths["zkr"])
    if "baseline" in result and counts(paths["baseline"]) != result["counts"]:
        raise RuntimeError(f"baseline stored other rows: {counts(paths['baseline'])}")
    log(f"{size}: floor (load {load_average()})")
    result["floor"] = floor(paths["zkr"], paths["floor"])
    log(f"{size}: floor {result['floor']}")
    for suffix in ("", "-wal", "-shm"):
        Path(f"{paths['floor']}{suffix}").unlink(missing_ok=True)
    result["floor_journals_in_memory"] = floor(
        paths["zkr"], paths["floor"], journals_in_memory=True
    )
    log(f"{size}: floor, journals in memory {result['floor_journals_in_memory']}")
    zkr_run = result["zkr"]
    result["zkr_cpu_over_floor"] = round(zkr_run["cpu_s"] / result["floor"]["cpu_s"], 2)
    result["zkr_cpu_over_floor_journals_in_memory"] = round(
        zkr_run["cpu_s"] / result["floor_journals_in_memory"]["cpu_s"], 2
    )
    if "baseline" in result:
        result["speedup_rows_per_cpu_s"] = round(
            zkr_run["rows_per_cpu_s"] / result["baseline"]["rows_per_cpu_s"], 2
        )
        result["speedup_wall"] = round(result["baseline"]["wall_s"] / zkr_run["wall_s"], 2)
    result["database_bytes"] = paths["zkr"].stat().st_size
    for name in ("baseline", "floor"):
        for suffix in ("", "-wal", "-shm"):
            Path(f"{paths[name]}{suffix}").unlink(missing_ok=True)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--baseline-src", type=Path, help="a checkout of the commit to compare")
    parser.add_argument(
        "--src", type=Path, help="a checkout of the code to measure (default: the installed one)"
    )
    parser.add_argument("--no-baseline-above", type=int, default=100_000)
    parser.add_argument("--out", type=Path, default=Path("bulk-import-report.json"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cache-dir", type=Path, default=ROOT / ".bench")
    parser.add_argument("--keep", action="store_true", help="keep the imported databases")
    args = parser.parse_args(argv)
    work = args.cache_dir / "work"
    work.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=args.src or ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    baseline_commit = None
    if args.baseline_src is not None:
        baseline_commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=args.baseline_src,
            capture_output=True,
            text=True,
        ).stdout.strip()
    report: dict[str, Any] = {
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "commit": commit,
        "baseline_commit": baseline_commit,
        "machine": {
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
            "sqlite": sqlite3.sqlite_version,
            "load_average_at_start": load_average(),
        },
        "sizes": {},
    }
    for size in (int(text) for text in args.sizes.split(",")):
        lines = lines_file(args.cache_dir, size, args.seed)
        run_baseline = size <= args.no_baseline_above
        result = measure(size, lines, work, args.baseline_src, run_baseline, args.src)
        report["sizes"][str(size)] = result
        if not args.keep:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{work / f'import-{size}-zkr.db'}{suffix}").unlink(missing_ok=True)
    report["machine"]["load_average_at_end"] = load_average()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    log(f"report written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
