"""One test of "the database is busy", shared by the store's retries and every host."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from zkr.store.opening import is_busy

ROOT = Path(__file__).resolve().parents[2]


def test_locked_and_busy_are_waits_and_nothing_else_is() -> None:
    assert is_busy(sqlite3.OperationalError("database is locked"))
    assert is_busy(sqlite3.OperationalError("database table is locked"))
    assert is_busy(sqlite3.OperationalError("Database Busy"))
    assert not is_busy(sqlite3.OperationalError("no such table: sources"))
    assert not is_busy(sqlite3.DatabaseError("database disk image is malformed"))
    assert not is_busy(ValueError("database is locked"))


def test_busy_detection_is_written_once_across_the_distributions() -> None:
    found = [
        path.relative_to(ROOT).as_posix()
        for path in sorted(ROOT.glob("zkr-*/src/**/*.py"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if re.search(r"""["']locked["']\s+(?:not\s+)?in\b""", line)
    ]
    assert found == ["zkr-core/src/zkr/store/opening.py"], found
