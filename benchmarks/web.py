"""zkr-web page latency at scale, over real HTTP on 127.0.0.1.

    python benchmarks/web.py [--size 100000] [--requests 200] [--out bench-web-report.json]

Builds (once, cached in ``.bench/``) the deterministic benchmark corpus of ``corpus.py`` with
*size* memories, starts the real ``zkr-web`` console script on it (a separate process, port chosen
by the OS), and times, one request at a time on a kept-alive connection, the pages a person opens:
the timeline (first page and pages deep in the list), claim pages (current, superseded) and search.
Reports median / p90 / max in milliseconds per page, and each median's ratio to the floor measured
in the same run: the same server refusing a request without the token (HTTP, uvicorn and the
token guard, no page work).
The issue's target: timeline and claim pages at most 100 ms median at 100,000 memories.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpus  # noqa: E402

ROOT = HERE.parent
TARGET_MS = 100.0


def log(message: str) -> None:
    print(f"[bench-web] {message}", file=sys.stderr, flush=True)


def ensure_corpus(cache: Path, size: int, seed: int) -> tuple[Path, dict[str, Any]]:
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"web-corpus-{size}-s{seed}-{corpus.code_version()}.db"
    meta_path = path.with_suffix(".json")
    if not (path.exists() and meta_path.exists()):
        building = path.with_suffix(".building.db")
        for suffix in ("", "-wal", "-shm"):
            Path(f"{building}{suffix}").unlink(missing_ok=True)
        log(f"building a corpus of {size} memories (cached for later runs)")
        meta = corpus.build_corpus(building, size, seed, progress=log)
        building.rename(path)
        meta_path.write_text(json.dumps(meta))
    return path, json.loads(meta_path.read_text())


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "median_ms": round(statistics.median(ordered) * 1000, 2),
        "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))] * 1000, 2),
        "max_ms": round(ordered[-1] * 1000, 2),
        "count": len(ordered),
    }


class Client:
    """One kept-alive HTTP connection to the server, authenticated with the bearer token."""

    def __init__(self, port: int, token: str) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.headers = {"Authorization": f"Bearer {token}"}

    def get(self, path: str, *, auth: bool = True) -> tuple[float, int, str]:
        started = time.perf_counter()
        self.conn.request("GET", path, headers=self.headers if auth else {})
        response = self.conn.getresponse()
        body = response.read().decode("utf-8")
        return time.perf_counter() - started, response.status, body


def start_server(db: Path, meta: dict[str, Any]) -> tuple[subprocess.Popen[str], int, str]:
    exe = shutil.which("zkr-web", path=str(Path(sys.executable).parent)) or "zkr-web"
    process = subprocess.Popen(
        [
            exe,
            "--db",
            str(db),
            "--tenant",
            meta["tenant_id"],
            "--person",
            meta["person_id"],
            "--port",
            "0",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    deadline = time.monotonic() + 600  # a first open may migrate the file
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        found = re.search(r"http://127\.0\.0\.1:(\d+)/\?token=(\S+)", line)
        if found:
            return process, int(found.group(1)), found.group(2)
    process.kill()
    raise RuntimeError("zkr-web did not start")


def links(body: str, prefix: str) -> list[str]:
    return sorted(set(re.findall(rf'href="({re.escape(prefix)}[^"?]+)"', body)))


def measure(
    client: Client, paths: list[str], rounds: int, *, auth: bool = True, expect: int = 200
) -> dict[str, float]:
    samples = []
    for index in range(rounds):
        seconds, status, _ = client.get(paths[index % len(paths)], auth=auth)
        if status != expect:
            raise RuntimeError(f"{paths[index % len(paths)]} answered {status}")
        samples.append(seconds)
    return summary(samples)


def run(size: int, rounds: int, seed: int, cache: Path) -> dict[str, Any]:
    db, meta = ensure_corpus(cache, size, seed)
    work = cache / "web-work.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{work}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(db, work)
    process, port, token = start_server(work, meta)
    try:
        client = Client(port, token)
        rng = random.Random(seed)
        report: dict[str, Any] = {"size": size, "rounds": rounds, "pages": {}}
        for _ in range(20):  # warm the connection, the page cache and the templates
            client.get("/static/style.css")
            client.get("/")
        # The floor: HTTP, uvicorn and the token guard answering 401, no page work at all.
        report["pages"]["refused_floor"] = measure(client, ["/"], rounds, auth=False, expect=401)
        report["pages"]["static_file"] = measure(client, ["/static/style.css"], rounds)

        # The timeline: its first page, then pages reached by following "older" links.
        first = client.get("/")[2]
        if 'class="timeline"' in first:
            report["pages"]["timeline_first"] = measure(client, ["/"], rounds)
            deep: list[str] = []
            body, path = first, "/"
            for _ in range(40):
                older = re.search(r'<a rel="next" href="([^"]+)"', body)
                if not older:
                    break
                path = older.group(1).replace("&amp;", "&")
                deep.append(path)
                body = client.get(path)[2]
            if deep:
                report["pages"]["timeline_deep"] = measure(client, deep, rounds)
                report["timeline_pages_followed"] = len(deep)
            kinds = ["fact", "preference", "task"]
            filtered = [f"/?{urlencode({'kind': kind})}" for kind in kinds]
            report["pages"]["timeline_filtered"] = measure(client, filtered, rounds)
        else:
            report["timeline"] = "not available (no memories operation in this zkr-core)"

        # Claim pages: claims listed by the timeline (following "older" links through the claim
        # kinds), else found by searching the corpus's own words.
        claims: list[str] = []
        searches = [f"/search?{urlencode({'q': q})}" for q in meta["rare_words"][:200]]
        for kind in ("fact", "preference", "task", "profile_fact", "skill"):
            path: str | None = f"/?{urlencode({'kind': kind})}"
            for _ in range(3):
                if path is None or len(claims) >= 400:
                    break
                body = client.get(path)[2]
                claims += links(body, "/claim/")
                older = re.search(r'<a rel="next" href="([^"]+)"', body)
                path = older.group(1).replace("&amp;", "&") if older else None
        for path in searches:
            if len(claims) >= 200:
                break
            claims += links(client.get(path)[2], "/claim/")
        claims = sorted(set(claims))
        rng.shuffle(claims)
        if not claims:
            raise RuntimeError("no claim found to open")
        report["pages"]["claim"] = measure(client, claims[:200], rounds)
        report["claims_sampled"] = len(claims[:200])
        report["pages"]["search"] = measure(client, searches, rounds)
        floor = report["pages"]["refused_floor"]["median_ms"]
        for figures in report["pages"].values():
            figures["ratio_to_floor"] = round(figures["median_ms"] / floor, 2) if floor else None
        report["target_median_ms"] = TARGET_MS
        report["met"] = {
            name: report["pages"][name]["median_ms"] <= TARGET_MS
            for name in ("timeline_first", "timeline_deep", "timeline_filtered", "claim")
            if name in report["pages"]
        }
        return report
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--cache", default=str(ROOT / ".bench"))
    parser.add_argument("--out", default="bench-web-report.json")
    parser.add_argument("--build-only", action="store_true", help="build the corpus and stop")
    args = parser.parse_args()
    if args.build_only:
        ensure_corpus(Path(args.cache), args.size, args.seed)
        return 0
    report = run(args.size, args.requests, args.seed, Path(args.cache))
    report["python"] = sys.version.split()[0]
    report["cpus"] = os.cpu_count()
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0 if all(report["met"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
