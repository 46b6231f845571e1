"""``remember`` through ``serve`` at 100k: wall and CPU, beside contract-only and a baseline
checkout, in one run (issue 27.2, issue 29.5).

Usage (from the repository root, in the workspace environment)::

    python benchmarks/remember_serve.py [--size 100000] [--count 1000] \\
        [--baseline /tmp/base-remember] [--out benchmarks/reports/remember.json]

Up to three ``serve`` processes take the same ``remember`` requests (``benchmarks/run.py``'s
``remember`` section's requests: the synthetic corpus's mix of captures, claims and locators):

* ``measured``: this checkout's ``zkr serve`` (recall index kept);
* ``contract_only``: the same with the recall index's upkeep switched off (run.py's baseline);
* ``baseline``: ``zkr serve`` of another checkout (``--baseline``, its own ``.venv``), on its own
  copy of the corpus built by that checkout's code (the schema may differ);
* ``synchronous_normal`` (``--synchronous-normal``): this checkout's ``zkr serve`` with SQLite's
  ``PRAGMA synchronous = NORMAL`` instead of the shipped ``FULL`` (no fsync at each commit, only at
  checkpoints: a commit survives a crash of the process, not always a power loss). Not what zkr
  ships: a measurement of what the commit's fsync costs, for that decision.

They run side by side and take the requests in blocks of 50, the order rotated every block, so a
change in the machine's load falls on all alike. Per process: the sum of its round trips (wall)
and the CPU time the process spent (user + system, from ``/proc``) over exactly those requests,
so the rate per CPU-second does not depend on how busy the machine is; the load average before
and after is in the report. Since schema 15 ``remember`` defers its recall rows to a backlog
(:mod:`zkr.store.recall_backlog`) that every 64th ``remember``, every other write and every recall
search applies: one recall search closes each process's window (all alike), so the CPU figure
holds every deferred row (``closing_read_wall_s``: its round trip).
``search_after`` in the report: a recall search right after the ``--count`` remembers (it applies
what they left in the backlog) and the same search again, wall and CPU (``/proc``'s CPU clock
ticks: 10 ms). ``--repeats`` runs the whole comparison again on fresh copies.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run  # the corpus cache, the serve client and the contract-only server

_BLOCK = 50
_TICKS = os.sysconf("SC_CLK_TCK")


#: ``zkr serve`` with ``PRAGMA synchronous = NORMAL`` on its connection (``--synchronous-normal``).
SYNCHRONOUS_NORMAL_SERVE = (
    "import sys\n"
    "import zkr.store.database as database\n"
    "_open = database.Database.__init__\n"
    "def _normal(self, *args, **kwargs):\n"
    "    _open(self, *args, **kwargs)\n"
    "    self.conn.execute('PRAGMA synchronous = NORMAL')\n"
    "database.Database.__init__ = _normal\n"
    "from zkr_cli.__main__ import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process *pid* so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def checkout_python(checkout: Path) -> Path:
    """The Python of *checkout*'s own environment (``.venv``); for this very checkout without one
    (CI runs it in a nox environment), the running interpreter, whose environment serves it."""
    own = checkout / ".venv" / "bin" / "python"
    if own.exists() or checkout.resolve() != Path(__file__).resolve().parents[1]:
        return own
    return Path(sys.executable)


def baseline_corpus(checkout: Path, size: int, seed: int, cache: Path) -> Path:
    """The corpus built (or cached, in *cache*) by *checkout*'s own code and environment."""
    code = (
        "import sys; sys.path.insert(0, 'benchmarks'); import run; from pathlib import Path;"
        f" print(run.ensure_corpus(Path({str(cache)!r}), {size}, {seed}).path)"
    )
    python = checkout_python(checkout)
    out = subprocess.run(
        [str(python), "-c", code], cwd=checkout, check=True, capture_output=True, text=True
    )
    return Path(out.stdout.strip().splitlines()[-1])


def fresh_copy(source: Path, target: Path) -> Path:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(source, target)
    run._settle(target)
    return target


def compare(
    servers: dict[str, list[str]],
    dbs: dict[str, Path],
    lines: list[bytes],
    work: Path,
    meta: dict[str, Any],
) -> dict[str, Any]:
    """One side-by-side run of *servers* (name -> command) over *lines*."""
    times: dict[str, list[float]] = {name: [] for name in servers}
    cpu: dict[str, float] = {}
    health: dict[str, Any] = {}
    settled: dict[str, float] = {}
    load_before = run.load_average()
    warm = run.Serve.line("locator", {**run.scope(meta), "evidence_id": "warm-up"})
    opened = {name: run.Serve(dbs[name], work, command) for name, command in servers.items()}
    try:
        closing = closing_search(meta)
        for server in opened.values():
            server.call_raw(warm)
            server.call_raw(closing)  # the search's imports are paid before the window
        started = {name: cpu_seconds(server.process.pid) for name, server in opened.items()}
        names = list(opened)
        for number, first in enumerate(range(0, len(lines), _BLOCK)):
            shift = number % len(names)
            for name in names[shift:] + names[:shift]:
                for line in lines[first : first + _BLOCK]:
                    times[name].append(opened[name].call_raw(line)[0])
        # One recall search ends the window: it applies the recall rows remember deferred
        # (schema 15, zkr.store.recall_backlog), so their cost is in the CPU figure too. Every
        # process pays for the search itself alike (a few ms against a second of remembers).
        for name, server in opened.items():
            settled[name] = server.call_raw(closing)[0]
            cpu[name] = cpu_seconds(server.process.pid) - started[name]
            health[name] = server.health()
    finally:
        for server in opened.values():
            server.close()
    figures: dict[str, Any] = {}
    for name in servers:
        wall = sum(times[name])
        figures[name] = {
            "count": len(times[name]),
            "wall_s": round(wall, 3),
            "per_second_wall": round(len(times[name]) / wall, 1),
            "cpu_s": round(cpu[name], 3),
            "cpu_ms_per_remember": round(1000 * cpu[name] / len(times[name]), 3),
            "per_cpu_second": round(len(times[name]) / cpu[name], 1) if cpu[name] else None,
            "per_request": run.summary(times[name]),
            "closing_read_wall_s": round(settled[name], 4),
            "serve_health": health[name],
        }
    measured = figures["measured"]
    if "synchronous_normal" in figures:
        normal = figures["synchronous_normal"]
        normal["ratio_to_measured_cpu"] = run.ratio(
            normal["per_cpu_second"], measured["per_cpu_second"]
        )
        normal["ratio_to_measured_wall"] = run.ratio(
            normal["per_second_wall"], measured["per_second_wall"]
        )
    for other in ("contract_only", "baseline"):
        if other in figures:
            measured[f"ratio_to_{other}_wall"] = run.ratio(
                measured["per_second_wall"], figures[other]["per_second_wall"]
            )
            measured[f"ratio_to_{other}_cpu"] = run.ratio(
                measured["per_cpu_second"], figures[other]["per_cpu_second"]
            )
    figures["load_average_before"] = load_before
    figures["load_average_after"] = run.load_average()
    return figures


SEARCH_AFTER_QUERY = "coffee meeting"


def closing_search(meta: dict[str, Any]) -> bytes:
    """A recall search (the kind of read that applies the recall backlog)."""
    return run.Serve.line(
        "search", {**run.scope(meta), "query": SEARCH_AFTER_QUERY, "ranking": "recall"}
    )


def search_after(db: Path, lines: list[bytes], work: Path, meta: dict[str, Any]) -> dict[str, Any]:
    """A recall search right after the remembers (it applies the recall rows they deferred),
    then the same search again: wall and CPU of each, on this checkout's ``serve``."""
    search = closing_search(meta)
    server = run.Serve(db, work, [run.zkr_executable(), "--db", str(db), "serve"])
    try:
        server.call_raw(search)  # warm: the first search's imports are not the flush's cost
        for line in lines:
            server.call_raw(line)
        figures: dict[str, Any] = {"query": SEARCH_AFTER_QUERY, "remembers_before": len(lines)}
        for label in ("first_search", "second_search"):
            before = cpu_seconds(server.process.pid)
            wall, _ = server.call_raw(search)
            figures[label] = {
                "wall_ms": round(1000 * wall, 2),
                "cpu_ms": round(1000 * (cpu_seconds(server.process.pid) - before), 2),
            }
    finally:
        server.close()
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--baseline", type=Path, help="another checkout with its own .venv")
    parser.add_argument("--cache-dir", type=Path, default=run.ROOT / ".bench")
    parser.add_argument(
        "--synchronous-normal",
        action="store_true",
        help="also a serve with PRAGMA synchronous = NORMAL (not what zkr ships)",
    )
    parser.add_argument("--out", type=Path, default=Path("remember-report.json"))
    args = parser.parse_args(argv)
    os.environ["ZKR_RANKING"] = "contract"  # as run.py: the figures do not depend on it
    built = run.ensure_corpus(args.cache_dir, args.size, args.seed)
    work = args.cache_dir / "work"
    work.mkdir(parents=True, exist_ok=True)
    lines = run.remember_lines(built.meta, args.count, args.seed)
    sources = {"measured": built.path, "contract_only": built.path}
    if args.synchronous_normal:
        sources["synchronous_normal"] = built.path
    if args.baseline is not None:
        # Its own cache folder: a cache removes corpora of the same size built by other code.
        cache = (args.cache_dir / "baseline").resolve()
        sources["baseline"] = baseline_corpus(args.baseline.resolve(), args.size, args.seed, cache)
    report: dict[str, Any] = {
        "machine": run.machine_info(),
        "size": args.size,
        "count": args.count,
        "baseline": None if args.baseline is None else _describe(args.baseline.resolve()),
        "mode": (
            "sequential request/answer, each its own transaction; serve processes side by side,"
            f" the same requests in rotating blocks of {_BLOCK}; per_second_wall = requests /"
            " sum of their round trips; cpu_s = the serve process's user + system time over"
            " those requests and one closing recall search that applies the recall backlog (/proc);"
            " ratios are measured over the other process"
        ),
        "runs": [],
    }
    for repeat in range(args.repeats):
        dbs = {
            name: fresh_copy(path, work / f"remember-{name}.db") for name, path in sources.items()
        }
        servers = {
            "measured": [run.zkr_executable(), "--db", str(dbs["measured"]), "serve"],
            "contract_only": run.contract_only_serve(dbs["contract_only"]),
        }
        if args.synchronous_normal:
            servers["synchronous_normal"] = [
                sys.executable,
                "-c",
                SYNCHRONOUS_NORMAL_SERVE,
                "--db",
                str(dbs["synchronous_normal"]),
                "serve",
            ]
        if args.baseline is not None:
            python = checkout_python(args.baseline.resolve())
            servers["baseline"] = [
                str(python),
                "-m",
                "zkr_cli",
                "--db",
                str(dbs["baseline"]),
                "serve",
            ]
        run.log(f"run {repeat + 1}/{args.repeats} (load {run.load_average()})")
        report["runs"].append(compare(servers, dbs, lines, work, built.meta))
        run.log(
            json.dumps(
                {
                    k: v.get("per_cpu_second")
                    for k, v in report["runs"][-1].items()
                    if isinstance(v, dict)
                }
            )
        )
        for db in dbs.values():
            for suffix in ("", "-wal", "-shm"):
                Path(f"{db}{suffix}").unlink(missing_ok=True)
    copy = fresh_copy(built.path, work / "remember-search-after.db")
    report["search_after"] = search_after(copy, lines, work, built.meta)
    run.log(json.dumps(report["search_after"]))
    for suffix in ("", "-wal", "-shm"):
        Path(f"{copy}{suffix}").unlink(missing_ok=True)
    args.out.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    return 0


def _describe(checkout: Path) -> dict[str, Any]:
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=checkout, capture_output=True, text=True, check=False
    ).stdout.strip()
    return {"path": str(checkout), "git_commit": commit}


if __name__ == "__main__":
    raise SystemExit(main())
