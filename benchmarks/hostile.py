"""Resource benchmark of hostile requests (issue 18): the worst searches, pages and requests under
the 1 MiB request cap, each as a one-shot ``zkr`` process, with wall time and peak RSS, as ratios
to an ordinary query measured in the same run.

Usage (from the repository root, in the workspace environment)::

    python benchmarks/hostile.py [--sources 20000] [--out hostile-report.json] [--repeat 3]

The corpus is 20,000 short sources of common English words in another tenant's scope (the shape
of the adversarial run that found defect 2), built once under ``.bench/``. Every case runs in a
fresh process (``os.wait4`` gives its peak RSS); the median of ``--repeat`` runs is reported.
Acceptance 2 of issue 18 is the ``search_1mib_common_words_other_tenant`` case: within 2 s and
200 MB peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MAX_REQUEST_BYTES = 1_048_576
COMMON = [
    "the",
    "of",
    "and",
    "to",
    "a",
    "in",
    "is",
    "it",
    "you",
    "that",
    "he",
    "was",
    "for",
    "on",
    "are",
    "with",
    "as",
    "his",
    "they",
    "be",
    "at",
    "one",
    "have",
    "this",
    "from",
]
VICTIM = {"tenant_id": "victim", "person_id": "v"}
ATTACKER = {"tenant_id": "attacker", "person_id": "a"}


def log(message: str) -> None:
    print(f"[hostile] {message}", file=sys.stderr, flush=True)


def build_corpus(path: Path, sources: int) -> None:
    """*sources* short sources of common words for the victim, written by the real operation."""
    from zkr import models as m
    from zkr.db import MemoryDb

    rng = random.Random(18)
    with MemoryDb(path) as db, db.atomic():
        for index in range(sources):
            text = " ".join(rng.choice(COMMON) for _ in range(rng.randint(6, 18)))
            db.remember(
                m.RememberRequest(
                    **VICTIM, kind="conversation", text=text, captured_at=index, recorded_at=index
                )
            )


def repeated(words: list[str], size: int) -> str:
    """Words repeated up to *size* characters."""
    out: list[str] = []
    length = 0
    index = 0
    while length < size:
        word = words[index % len(words)]
        out.append(word)
        length += len(word) + 1
        index += 1
    return " ".join(out)[:size]


def fill(request: dict[str, Any], field: str, text_size: int) -> dict[str, Any]:
    """*request* with its *field* grown so that the compact request is just under 1 MiB."""
    overhead = len(json.dumps({**request, field: ""}, separators=(",", ":")).encode())
    return {**request, field: text_size and repeated(COMMON, MAX_REQUEST_BYTES - overhead - 16)}


def one_shot(
    db: Path, command: str, request: bytes, scratch: Path
) -> tuple[float, float, int, int, bytes]:
    """(seconds, CPU seconds, peak RSS in bytes, exit status, stdout) of one ``zkr --db DB command``
    process (CPU time too: on a loaded machine wall time also counts the wait for a core).

    stdin and stdout are files, not pipes, so ``os.wait4`` reaps the child and reports its own
    ``ru_maxrss``.
    """
    stdin_path, stdout_path = scratch / "stdin", scratch / "stdout"
    stdin_path.write_bytes(request)
    with stdin_path.open("rb") as stdin, stdout_path.open("wb") as stdout:
        started = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, "-m", "zkr_cli", "--db", str(db), command],
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.DEVNULL,
        )
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    return elapsed, cpu, usage.ru_maxrss * 1024, child.returncode, stdout_path.read_bytes()


def measure(db: Path, command: str, request: Any, repeat: int) -> dict[str, Any]:
    raw = request if isinstance(request, bytes) else json.dumps(request, ensure_ascii=False)
    raw = raw if isinstance(raw, bytes) else raw.encode()
    times: list[float] = []
    cpus: list[float] = []
    peaks: list[int] = []
    answer = b""
    for _ in range(repeat):
        elapsed, cpu, peak, code, answer = one_shot(db, command, raw, db.parent)
        times.append(elapsed)
        cpus.append(cpu)
        peaks.append(peak)
        assert code in (0, 1), code
    return {
        "command": command,
        "request_bytes": len(raw),
        "seconds_median": statistics.median(times),
        "seconds_max": max(times),
        "cpu_seconds_median": statistics.median(cpus),
        "peak_rss_mb": max(peaks) / 2**20,
        "outcome": "answer" if answer else "error",
    }


def cases(peer_page: dict[str, Any]) -> dict[str, tuple[str, Any]]:
    big = repeated(COMMON, MAX_REQUEST_BYTES - 200)
    unique = " ".join(f"w{index:06x}" for index in range(MAX_REQUEST_BYTES // 9 - 40))
    accented = repeated(["été", "déjà", "café"], (MAX_REQUEST_BYTES - 200) // 2)
    return {
        "search_1mib_common_words_other_tenant": ("search", {**ATTACKER, "query": big}),
        "search_1mib_common_words_own_scope": ("search", {**VICTIM, "query": big}),
        "search_1mib_common_words_other_tenant_recall": (
            "search",
            {**ATTACKER, "query": big, "ranking": "recall"},
        ),
        "search_1mib_common_words_own_scope_recall": (
            "search",
            {**VICTIM, "query": big, "ranking": "recall"},
        ),
        "search_256_word_phrase_own_scope": (
            "search",
            {**VICTIM, "query": repeated(COMMON, 256 * 4)[: 256 * 3]},
        ),
        "search_1mib_unique_words_own_scope": ("search", {**VICTIM, "query": unique}),
        "search_1mib_non_ascii_own_scope": ("search", {**VICTIM, "query": accented}),
        "search_limit_100_common_word": ("search", {**VICTIM, "query": "the", "limit": 100}),
        "remember_1mib_text": (
            "remember",
            {
                **ATTACKER,
                "kind": "document",
                "text": repeated(COMMON, MAX_REQUEST_BYTES - 300),
                "captured_at": 1,
                "recorded_at": 1,
            },
        ),
        "apply_hostile_page_i64_sequence": (
            "apply",
            {
                **ATTACKER,
                "upstream": "hostile",
                "after_commit": 0,
                "after_event_index": -1,
                "page": peer_page,
            },
        ),
        "request_1mib_whitespace_padding": (
            "search",
            (
                "{"
                + json.dumps(VICTIM)[1:-1]
                + ","
                + " " * (MAX_REQUEST_BYTES - 100)
                + '"query":"the"}'
            ).encode(),
        ),
        "deep_nesting_in_ignored_field": (
            "search",
            (
                '{"tenant_id":"victim","person_id":"v","query":"the","x":'
                + "[" * 400_000
                + "]" * 400_000
                + "}"
            ).encode(),
        ),
    }


def hostile_page(work: Path) -> dict[str, Any]:
    from zkr.db import MemoryDb

    with MemoryDb(work / "peer.db") as peer:
        peer.run(
            "remember",
            {
                **ATTACKER,
                "kind": "conversation",
                "text": repeated(COMMON, 900_000),
                "captured_at": 1,
                "recorded_at": 1,
            },
        )
        page = peer.run("export", {**ATTACKER, "export_format": 1}).model_dump(
            mode="json", by_alias=True
        )
    page["commits"][0]["sequence"] = 2**63 - 1
    page["high_water_mark"] = page["next_after_commit"] = 2**63 - 1
    return page


def main() -> int:
    # The searches that name no ranking are the contract ranking's figures (compared across
    # rounds since issue 7); recall has rows of its own that name it. Pinned for this process and
    # every zkr process it starts, whatever the shell says (zkr's default is recall).
    os.environ["ZKR_RANKING"] = "contract"
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default="hostile-report.json")
    parser.add_argument("--cache-dir", default=str(ROOT / ".bench"))
    args = parser.parse_args()

    cache = Path(args.cache_dir)
    cache.mkdir(parents=True, exist_ok=True)
    corpus = cache / f"hostile-{args.sources}.db"
    if not corpus.exists():
        log(f"building {args.sources} sources of common words")
        build_corpus(corpus.with_suffix(".tmp"), args.sources)
        corpus.with_suffix(".tmp").rename(corpus)
    work = cache / "hostile-work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    page = hostile_page(work)

    baseline_db = work / "baseline.db"
    shutil.copy(corpus, baseline_db)
    log("baseline: an ordinary query")
    baseline = measure(
        baseline_db, "search", {**VICTIM, "query": "coffee with the team"}, args.repeat
    )
    report: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
            "cpus": os.cpu_count(),
            "load": os.getloadavg(),
        },
        "sources": args.sources,
        "baseline_ordinary_search": baseline,
        "cases": {},
    }
    for name, (command, request) in cases(page).items():
        db = work / f"{name}.db"
        shutil.copy(corpus, db)  # writes (remember, apply) must not leak into the next case
        log(name)
        figures = measure(db, command, request, args.repeat)
        figures["time_ratio"] = figures["seconds_median"] / baseline["seconds_median"]
        figures["cpu_ratio"] = figures["cpu_seconds_median"] / baseline["cpu_seconds_median"]
        figures["rss_ratio"] = figures["peak_rss_mb"] / baseline["peak_rss_mb"]
        report["cases"][name] = figures
        db.unlink()
    accept = report["cases"]["search_1mib_common_words_other_tenant"]
    report["acceptance_2"] = {
        "seconds": accept["seconds_median"],
        "seconds_max": accept["seconds_max"],
        "cpu_seconds": accept["cpu_seconds_median"],
        "peak_rss_mb": accept["peak_rss_mb"],
        "met": accept["seconds_max"] <= 2.0 and accept["peak_rss_mb"] <= 200,
    }
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    for name, figures in report["cases"].items():
        log(
            f"{name}: {figures['seconds_median']:.2f} s ({figures['time_ratio']:.1f}x),"
            f" CPU {figures['cpu_seconds_median']:.2f} s ({figures['cpu_ratio']:.1f}x),"
            f" {figures['peak_rss_mb']:.0f} MB ({figures['rss_ratio']:.1f}x), {figures['outcome']}"
        )
    log(f"acceptance 2: {report['acceptance_2']}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
