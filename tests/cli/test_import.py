"""``zkr import FILE``: every good line stored once, each bad line reported, kill-safe (issue 14).

The real command in subprocesses on real SQLite files. 10,000 lines with bad ones mixed in (broken
JSON, blank text, a blank claim field that fails *inside* the transaction, a bad locator, a key
reused with another payload, an unknown kind); one run is killed with SIGKILL at a random point
(mid-batch, read but not committed) and re-run, and every table of the result (ids normalised to
what each row means, FTS and the feed included) equals a clean run's.
"""

from __future__ import annotations

import io
import json
import os
import pty
import random
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

LINES = 10_000
SCOPE = {"tenant_id": "a", "person_id": "sam"}
BAD = "BADLINE"  # only bad lines hold this word
ID = re.compile(r"\b[0-9a-f]{32}\b")
UNNAMED = "<unnamed id>"


def good(number: int) -> dict[str, Any]:
    line: dict[str, Any] = {
        **SCOPE,
        "kind": "conversation" if number % 4 else "document",
        "text": f"note {number} about topic{number % 37}",
        "captured_at": 1_700_000_000 + number,
        "recorded_at": 1_700_000_000 + number,
    }
    if number % 3 == 0:
        line["claim"] = {
            "subject": "Sam",
            "predicate": f"likes{number % 11}",
            "value": f"thing {number}",
            "kind": "preference",
            "valid_from": 1_700_000_000 + number,
        }
    if number % 2 == 0:
        line["ingestion_key"] = f"turn-{number}"
    return line


def bad(number: int) -> str:
    """A bad line of one of several kinds (chosen by *number*)."""
    base = {**good(number), "text": f"{BAD} {number}"}
    choice = number % 6
    if choice == 0:
        return '{"tenant_id": "a", ' + BAD
    if choice == 1:
        return json.dumps({**base, "text": "   "})
    if choice == 2:  # refused inside the transaction, after the source row was written
        claim = {"subject": " ", "predicate": "p", "value": "v", "kind": "fact", "valid_from": 1}
        return json.dumps({**base, "claim": claim})
    if choice == 3:
        locator = {
            "device_id": "d",
            "provider": "p",
            "stream_id": "s",
            "segment_id": "g",
            "start_ms": 5,
            "end_ms": 1,
        }
        return json.dumps({**base, "locator": locator})
    if choice == 4:  # an earlier good line's key with another payload
        return json.dumps({**base, "ingestion_key": "turn-2"})
    return json.dumps({**base, "kind": "telepathy"})


def write_input(path: Path) -> set[int]:
    """The 10,000-line file; returns the numbers of its bad lines."""
    rng = random.Random(14)
    bad_lines = set(rng.sample(range(3, LINES + 1), 300))
    with path.open("w", encoding="utf-8") as out:
        for number in range(1, LINES + 1):
            if number in bad_lines:
                out.write(bad(number) + "\n")
            elif number % 1000 == 500:
                out.write("\n")  # blank lines are skipped, not refused
            else:
                out.write(json.dumps(good(number)) + "\n")
    return bad_lines


def run_import(path: Path, db: Path, env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "zkr_cli", "--db", str(db), "import", str(path)],
        capture_output=True,
        env=env,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""  # not a terminal: no progress
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary


def normalised(db: Path) -> dict[str, list[Any]]:
    """Every table's rows with each random id replaced by what it names (its source's key or
    text), so two runs that stored the same memories in the same order compare equal."""
    conn = sqlite3.connect(db)
    names: dict[str, str] = {}
    for rowid, source_id, key, content, evidence_id, claim_id in conn.execute(
        "SELECT rowid, id, ingestion_key, content, origin_evidence_id, origin_claim_id FROM sources"
    ):
        label = f"{rowid}:{key}:{content}"
        names[source_id] = "S" + label
        names[evidence_id] = "E" + label
        if claim_id is not None:
            names[claim_id] = "C" + label

    def rename(value: Any) -> Any:
        if isinstance(value, str):
            return ID.sub(lambda found: names.get(found.group(0), UNNAMED + found.group(0)), value)
        return value

    tables = [
        row[0]
        for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    ]
    result: dict[str, list[Any]] = {}
    for table in tables:
        columns = "rowid, *" if table in ("sources", "source_fts") else "*"
        rows = conn.execute(f'SELECT {columns} FROM "{table}"').fetchall()
        result[table] = sorted((tuple(rename(v) for v in row) for row in rows), key=repr)
    conn.close()
    unnamed = [table for table, rows in result.items() if UNNAMED in repr(rows)]
    assert not unnamed, f"ids of no source in {unnamed}"
    return result


@pytest.fixture(scope="module")
def big_input(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, set[int]]:
    path = tmp_path_factory.mktemp("import") / "lines.jsonl"
    return path, write_input(path)


@pytest.fixture(scope="module")
def clean_run(
    big_input: tuple[Path, set[int]], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, Any]]:
    db = tmp_path_factory.mktemp("clean") / "memory.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZKR_")}
    return db, run_import(big_input[0], db, env)


def test_every_good_line_is_stored_once_and_every_bad_line_reported(
    big_input: tuple[Path, set[int]], clean_run: tuple[Path, dict[str, Any]]
) -> None:
    _, bad_lines = big_input
    db, summary = clean_run
    blanks = {n for n in range(500, LINES + 1, 1000) if n not in bad_lines}
    good_lines = LINES - len(bad_lines) - len(blanks)
    assert summary["lines"] == LINES
    assert summary["stored"] == good_lines and summary["replayed"] == 0
    assert [r["line"] for r in summary["refused"]] == sorted(bad_lines)
    reasons = {r["line"]: r["error"] for r in summary["refused"]}
    for number in bad_lines:
        expected = {
            1: "text must not be empty",
            2: "claim subject must not be empty",
            3: "locator end_ms must not precede start_ms",
            4: "ingestion_key conflicts with different memory payload",
        }.get(number % 6)
        if expected is not None:
            assert reasons[number] == expected, number
        elif number % 6 == 5:
            assert reasons[number].startswith("unknown variant `telepathy`"), reasons[number]
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM sources").fetchone() == (good_lines,)
    # No bad line left anything behind (the in-transaction failure included).
    assert conn.execute(
        "SELECT count(*) FROM sources WHERE content LIKE ?", (f"%{BAD}%",)
    ).fetchone() == (0,)
    assert conn.execute("SELECT count(*) FROM memory_commits").fetchone() == (good_lines,)
    # Keyless lines got a derived key, so a re-run can recognise them.
    assert conn.execute("SELECT count(*) FROM sources WHERE ingestion_key IS NULL").fetchone() == (
        0,
    )
    conn.close()


@pytest.mark.slow
def test_a_rerun_after_sigkill_equals_a_clean_run(
    big_input: tuple[Path, set[int]], clean_run: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """Killed mid-batch: the lines come through a pipe, the import is killed while it holds lines
    of a batch it has read but not committed (it waits for the rest of the batch), and a re-run
    of the whole file finishes the job. Deterministic, however fast the import is."""
    from zkr_cli.importing import BATCH_LINES

    path, bad_lines = big_input
    clean_db, clean_summary = clean_run
    db = tmp_path / "killed.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZKR_")}
    rng = random.Random()
    batches = rng.randrange(1, LINES // BATCH_LINES)  # committed before the kill
    sent = batches * BATCH_LINES + rng.randrange(1, BATCH_LINES)  # and part of the next batch
    committed_lines = range(1, batches * BATCH_LINES + 1)
    skipped = {n for n in committed_lines if n in bad_lines or n % 1000 == 500}
    expected = len(committed_lines) - len(skipped)
    lines = path.read_bytes().splitlines(keepends=True)
    process = subprocess.Popen(
        [sys.executable, "-m", "zkr_cli", "--db", str(db), "import", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert process.stdin is not None
    try:
        process.stdin.write(b"".join(lines[:sent]))
        process.stdin.flush()
        deadline = time.monotonic() + 900
        while _committed(db) < expected and process.poll() is None:
            assert time.monotonic() < deadline, "the import did not commit its batches"
            time.sleep(0.05)
        time.sleep(0.2)  # the rest of what was sent is read (and held, uncommitted)
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait()
    assert process.returncode == -signal.SIGKILL, "the import finished before it was killed"
    assert _committed(db) == expected

    summary = run_import(path, db, env)
    assert summary["replayed"] == expected
    assert summary["stored"] == clean_summary["stored"] - expected
    assert summary["refused"] == clean_summary["refused"]
    assert normalised(db) == normalised(clean_db)


def _committed(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            row = conn.execute("SELECT count(*) FROM sources").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return 0
    return int(row[0])


def test_stdin_progress_on_a_terminal_and_the_text_summary(tmp_path: Path) -> None:
    lines = [json.dumps(good(n)) for n in range(1, 30)] + ["{broken"]
    db = tmp_path / "memory.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZKR_")}
    master, slave = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "zkr_cli", "--db", str(db), "import", "-", "--format", "text"],
            input="\n".join(lines).encode(),
            stdout=subprocess.PIPE,
            stderr=slave,
            env=env,
            timeout=120,
            check=False,
        )
        os.close(slave)
        progress = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            progress += chunk
    finally:
        os.close(master)
    assert done.returncode == 0
    assert b"import: line 30: 29 stored, 0 replayed, 1 refused" in progress
    assert done.stdout.decode().splitlines() == [
        "30 line(s): 29 stored, 0 replayed, 1 refused",
        "    line 30: Expecting property name enclosed in double quotes at line 1 column 2",
    ]


def test_an_unreadable_file_is_an_error(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZKR_")}
    done = subprocess.run(
        [sys.executable, "-m", "zkr_cli", "--db", str(tmp_path / "m.db"), "import", "missing"],
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1 and done.stdout == b""
    assert json.loads(done.stderr) == {"error": "cannot read missing: No such file or directory"}


class _OnlyBoundedReads:
    """A file that hands out lines only through ``readline(size)`` with a size, and keeps the
    largest piece it handed out: an import must never hold a whole over-long line."""

    def __init__(self, data: bytes) -> None:
        self.inner = io.BytesIO(data)
        self.largest = 0

    def readline(self, size: int = -1) -> bytes:
        assert size is not None and size >= 0, "an unbounded readline holds the whole line"
        out = self.inner.readline(size)
        self.largest = max(self.largest, len(out))
        return out

    def __iter__(self) -> Any:
        raise AssertionError("iterating a file reads whole lines, however long")


def test_an_over_long_line_is_refused_without_being_held(tmp_path: Path) -> None:
    # A file with one 16 MiB line (or 16 GiB) used to be read whole: memory grew with the line.
    from zkr.db import MemoryDb
    from zkr.operations import MAX_REQUEST_BYTES
    from zkr_cli.importing import import_lines

    line = json.dumps({**good(1), "ingestion_key": "edge"})
    exact = line[:-1] + " " * (MAX_REQUEST_BYTES - len(line)) + "}"  # the cap exactly: stored
    over = line[:-1] + " " * (MAX_REQUEST_BYTES + 1 - len(line)) + "}"
    data = b"\n".join(
        [b"x" * (16 << 20), exact.encode(), over.encode(), json.dumps(good(2)).encode(), b""]
    )
    stream = _OnlyBoundedReads(data)
    with MemoryDb(tmp_path / "m.db") as db:
        summary = import_lines(db, stream)  # type: ignore[arg-type]
    too_big = f"request exceeds {MAX_REQUEST_BYTES} bytes"
    assert summary.to_json() == {
        "lines": 4,
        "stored": 2,
        "replayed": 0,
        "dropped": 0,
        "refused": [{"line": 1, "error": too_big}, {"line": 3, "error": too_big}],
        "refused_count": 2,
    }
    assert stream.largest <= MAX_REQUEST_BYTES + 3


def test_a_file_of_many_bad_lines_keeps_a_bounded_list_of_reasons(tmp_path: Path) -> None:
    # Every refused line's reason was kept: a file of millions of bad lines (a few bytes each)
    # grew the summary, in memory and in the one output line, without bound.
    from zkr.db import MemoryDb
    from zkr_cli.importing import MAX_REFUSED_LISTED, import_lines

    lines = 3 * MAX_REFUSED_LISTED
    data = b"x\n" * lines + json.dumps(good(1)).encode() + b"\n"
    with MemoryDb(tmp_path / "m.db") as db:
        summary = import_lines(db, io.BytesIO(data)).to_json()
    assert summary["lines"] == lines + 1 and summary["stored"] == 1
    assert summary["refused_count"] == lines
    assert len(summary["refused"]) == MAX_REFUSED_LISTED  # the first ones, in line order
    assert [r["line"] for r in summary["refused"]] == list(range(1, MAX_REFUSED_LISTED + 1))
