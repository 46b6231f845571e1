"""How long a new process takes to load a dense lane, and what ``serve`` holds with it loaded.

    python benchmarks/lane_load.py --db CORPUS.db [--baseline-src OLD/zkr-core/src]
                                   [--out benchmarks/reports/lane-load.json]

CORPUS is a ``run.py`` corpus (``.bench/corpus-100000-….db``: 100,000 vectors of 384 dimensions
in the lane ``bench-random``/``unit-384`` of ``bench``/``me``); it is copied, never changed.

* ``load``: in fresh interpreters, ``load_lane`` on a new ``MemoryDb`` — from SQLite (a full
  build; ``LaneTuning(file_rows=0)``) and from the lane file a first build saved — 3 times each,
  wall and CPU seconds (``time.process_time``: every thread of the process).
* ``serve``: two ``zkr serve`` processes one after the other on the same copy, each answering one
  hybrid search with a random 384-d vector: the first builds the lane (and saves its file), the
  second reads the file. First-request wall time, the process's CPU seconds (``/proc/PID/stat``)
  and its VmHWM/VmRSS after the request.
* ``--baseline-src``: the same ``load`` (from SQLite) and ``serve`` with that source tree first on
  ``PYTHONPATH`` (e.g. a ``git worktree`` of main), in the same run, for ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

LANE = ("bench", "me", "bench-random", "unit-384")
_LOAD = """
import json, sys, time
import zkr.embeddings.dense as dense
from zkr.db import MemoryDb
db = MemoryDb(sys.argv[1])
tuning = dense.LaneTuning(file_rows=int(sys.argv[2])) if hasattr(dense, "LaneTuning") else None
with db.atomic(write=False) as conn:
    wall, cpu = time.perf_counter(), time.process_time()
    extra = {"tuning": tuning} if tuning is not None else {}
    lane = dense.load_lane(db, conn, *json.loads(sys.argv[3]), **extra)
    print(json.dumps([time.perf_counter() - wall, time.process_time() - cpu, len(lane)]))
"""


def _env(src: str | None) -> dict[str, str]:
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    return env


def load_times(db: Path, file_rows: int, src: str | None, repeat: int) -> dict[str, Any]:
    runs = []
    for _ in range(repeat):
        done = subprocess.run(
            [sys.executable, "-c", _LOAD, str(db), str(file_rows), json.dumps(LANE)],
            env=_env(src),
            capture_output=True,
            text=True,
            check=True,
        )
        runs.append(json.loads(done.stdout))
    walls, cpus = sorted(r[0] for r in runs), sorted(r[1] for r in runs)
    return {
        "rows": runs[0][2],
        "wall_s": [round(w, 3) for w in walls],
        "cpu_s": [round(c, 3) for c in cpus],
        "median_wall_s": round(walls[len(walls) // 2], 3),
        "median_cpu_s": round(cpus[len(cpus) // 2], 3),
    }


def _proc(pid: int) -> dict[str, float]:
    status = Path(f"/proc/{pid}/status").read_text()
    values = {}
    for line in status.splitlines():
        if line.startswith(("VmHWM:", "VmRSS:")):
            values[line.split(":")[0]] = round(int(line.split()[1]) / 1024, 1)
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    values["cpu_s"] = round((int(fields[11]) + int(fields[12])) / ticks, 3)
    return values


def serve_once(db: Path, src: str | None) -> dict[str, Any]:
    zkr = shutil.which("zkr") or str(Path(sys.executable).with_name("zkr"))
    process = subprocess.Popen(
        [sys.executable, zkr, "--db", str(db), "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=_env(src),
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        rng = random.Random(7)
        vector = [rng.gauss(0, 1) for _ in range(384)]
        norm = sum(v * v for v in vector) ** 0.5
        request = {
            "tenant_id": LANE[0],
            "person_id": LANE[1],
            "query": "coffee with the neighbours",
            "limit": 10,
            "query_embedding": {
                "model": LANE[2],
                "version": LANE[3],
                "vector": [v / norm for v in vector],
            },
        }
        process.stdin.write((json.dumps({"command": "search", "request": request}) + "\n").encode())
        wall = time.perf_counter()
        process.stdin.flush()
        answer = json.loads(process.stdout.readline())
        wall = time.perf_counter() - wall
        figures = _proc(process.pid)
        return {"first_request_s": round(wall, 3), "items": len(answer.get("items", [])), **figures}
    finally:
        process.stdin.close()
        process.wait(timeout=60)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--baseline-src")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("lane-load-report.json"))
    args = parser.parse_args(argv)
    report: dict[str, Any] = {"load_average_at_start": list(os.getloadavg()), "lane": LANE}
    with tempfile.TemporaryDirectory(prefix="zkr-lane-") as scratch:
        copy = Path(scratch) / "corpus.db"
        for label, src in [("baseline", args.baseline_src), ("this", None)]:
            if label == "baseline" and not src:
                continue
            shutil.rmtree(str(copy) + ".zkr-projections", ignore_errors=True)
            shutil.copyfile(args.db, copy)
            block: dict[str, Any] = {"serve_first": serve_once(copy, src)}
            block["serve_second"] = serve_once(copy, src)
            block["load_sqlite"] = load_times(copy, 0, src, args.repeat)
            if label == "this":
                block["load_file"] = load_times(copy, 1, src, args.repeat)
            report[label] = block
            print(label, json.dumps(block), file=sys.stderr)
    if "baseline" in report:
        base, this = report["baseline"], report["this"]
        report["ratios"] = {
            "load_file_cpu_over_baseline": round(
                this["load_file"]["median_cpu_s"] / base["load_sqlite"]["median_cpu_s"], 3
            ),
            "load_sqlite_cpu_over_baseline": round(
                this["load_sqlite"]["median_cpu_s"] / base["load_sqlite"]["median_cpu_s"], 3
            ),
        }
    report["load_average_at_end"] = list(os.getloadavg())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
