"""``zkr-postgres``'s refusals are one line on stderr, never a traceback (issue 26).

Before: ``sync`` printed Python tracebacks for a file that is not a database, for a SQLite file
without zkr's feed (which ``MemoryDb`` would also have filled with zkr's tables), and for a server
that cannot be reached. None of these needs a running PostgreSQL.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

UNREACHABLE = "postgresql://zkr@127.0.0.1:1/none?connect_timeout=5"


def _run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    script = Path(sys.executable).parent / "zkr-postgres"
    return subprocess.run(
        [str(script), *args], input=stdin, capture_output=True, timeout=60, check=False
    )


def _one_line_refusal(done: subprocess.CompletedProcess[bytes], needle: str) -> None:
    assert done.returncode == 1, done
    assert b"Traceback" not in done.stderr, done.stderr.decode()
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("zkr-postgres: "), lines
    assert needle in lines[0], lines


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"not a database\n" * 100)
    _one_line_refusal(_run("sync", "--dsn", UNREACHABLE, "--db", str(path)), "not a zkr database")
    assert path.read_bytes() == b"not a database\n" * 100


def test_a_sqlite_file_without_the_feed_is_refused_and_left_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t(x)")
    before = path.read_bytes()
    _one_line_refusal(_run("sync", "--dsn", UNREACHABLE, "--db", str(path)), "no export feed")
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    "args",
    [
        ["migrate", "--dsn", UNREACHABLE],
        ["rebuild", "--dsn", UNREACHABLE, "--embedder", "m/1"],
        ["serve", "--dsn", UNREACHABLE],
        ["analyze", "--dsn", UNREACHABLE],
    ],
)
def test_an_unreachable_server_is_one_line(args: list[str]) -> None:
    _one_line_refusal(_run(*args), "cannot use PostgreSQL")


def test_sync_to_an_unreachable_server_is_one_line(tmp_path: Path) -> None:
    from zkr.db import MemoryDb

    with MemoryDb(tmp_path / "m.db"):
        pass
    done = _run("sync", "--dsn", UNREACHABLE, "--db", str(tmp_path / "m.db"))
    _one_line_refusal(done, "cannot use PostgreSQL")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["migrate", "--dsn", "not a dsn"], "PostgreSQL error"),
        (["rebuild", "--dsn", "x", "--embedder", "m/1", "--batch-size", "0"], "--batch-size"),
        (["sync", "--dsn", "x", "--db", "m.db", "--follow", "--interval", "nan"], "--interval"),
    ],
)
def test_bad_arguments_are_one_line(args: list[str], needle: str) -> None:
    _one_line_refusal(_run(*args), needle)
