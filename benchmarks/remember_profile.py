"""Where one ``remember`` through ``serve`` spends its CPU, in process (issue 27.2).

Usage (from the repository root, in the workspace environment)::

    python benchmarks/remember_profile.py [--size 100000] [--count 1000] [--profile out.prof]
        [--contract-only] [--statements] [--pages]

Runs the very code ``zkr serve`` runs for each line (:func:`zkr_cli.serve.handle_line`) on a fresh
copy of the cached corpus (``benchmarks/run.py``'s; the requests of ``remember_serve.py``) and
prints, per ``remember``: CPU time (``time.process_time``), SQL statements run (counted with
SQLite's trace callback), with ``--pages`` the pages each ``remember`` writes to the WAL by table or
index (the write-ahead log is not checkpointed during that run; a count that does not depend on the
machine's load: each page is two ``pwrite`` calls at the commit, its share of the ``fsync`` and a
page copied at the next checkpoint) and, with ``--profile``, a cProfile of the whole run.
``--contract-only`` switches the recall index's upkeep off as ``run.py``'s contract-only server
does. Nothing here is a timing target; it is the breakdown behind one.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run  # the corpus cache and the request lines
from remember_serve import fresh_copy

_LITERAL = re.compile(r"'(?:[^']|'')*'|\b\d+\b")


def _shape(sql: str) -> str:
    """A statement as written, its bound values (expanded by the trace callback) back to ``?``."""
    return " ".join(_LITERAL.sub("?", sql).split())


def _wal_pages(conn: Any, wal: Path, start: int) -> Counter[str]:
    """The pages of the frames appended to *wal* after byte *start*, by the table or index that
    holds each page now (``dbstat``; a page freed and reused since counts for its new owner)."""
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    owner = dict(conn.execute("SELECT pageno, name FROM dbstat").fetchall())
    data = wal.read_bytes()
    pages: Counter[str] = Counter()
    for offset in range(max(start, 32), len(data) - 23, 24 + page_size):
        number = int.from_bytes(data[offset : offset + 4], "big")
        pages[owner.get(number, "(free)")] += 1
    return pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cache-dir", type=Path, default=run.ROOT / ".bench")
    parser.add_argument("--profile", type=Path, help="write a cProfile of the run here")
    parser.add_argument("--contract-only", action="store_true")
    parser.add_argument("--statements", action="store_true", help="print the statements run")
    parser.add_argument("--pages", action="store_true", help="print the pages written to the WAL")
    args = parser.parse_args(argv)
    os.environ["ZKR_RANKING"] = "contract"  # as remember_serve.py
    if args.contract_only:
        exec(run.CONTRACT_ONLY_SERVE.split("from zkr_cli")[0])  # the same switch, in process
    from zkr.db import MemoryDb
    from zkr_cli.serve import handle_line

    built = run.ensure_corpus(args.cache_dir, args.size, args.seed)
    work = args.cache_dir / "work"
    work.mkdir(parents=True, exist_ok=True)
    db_path = fresh_copy(built.path, work / "profile-remember.db")
    lines = run.remember_lines(built.meta, args.count, args.seed)
    statements: Counter[str] = Counter()
    pages: Counter[str] = Counter()
    with MemoryDb(db_path) as db:
        handle_line(db, run.Serve.line("locator", {**run.scope(built.meta), "evidence_id": "w"}))
        if args.pages:
            db.conn.execute("PRAGMA wal_autocheckpoint = 0")
        wal_start = Path(f"{db_path}-wal").stat().st_size
        if args.statements:  # the callback costs CPU of its own: not while timing
            db.conn.set_trace_callback(lambda sql: statements.update([_shape(sql)]))
        profiler = cProfile.Profile(time.process_time) if args.profile else None
        started = time.process_time()
        wall = time.perf_counter()
        if profiler is not None:
            profiler.enable()
        for line in lines:
            answer = handle_line(db, line)
            assert answer is not None and b'"error"' not in answer, answer
        if profiler is not None:
            profiler.disable()
        cpu = time.process_time() - started
        wall = time.perf_counter() - wall
        db.conn.set_trace_callback(None)
        if args.pages:
            pages = _wal_pages(db.conn, Path(f"{db_path}-wal"), wal_start)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)
    count = len(lines)
    print(
        f"{count} remembers: CPU {1000 * cpu / count:.3f} ms each, wall {1000 * wall / count:.3f}"
        f" ms each, {sum(statements.values()) / count:.2f} statements each (with triggers'"
        " and FTS5's own)"
        f" (load {run.load_average()})"
    )
    if args.statements:
        for sql, n in statements.most_common():
            print(f"{n / count:6.2f}  {' '.join(sql.split())[:150]}")
    if args.pages:
        print(f"{sum(pages.values()) / count:.2f} pages written to the WAL per remember:")
        for name, n in pages.most_common():
            print(f"{n / count:6.2f}  {name}")
    if profiler is not None:
        profiler.dump_stats(args.profile)
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(45)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
