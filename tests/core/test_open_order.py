"""Opening a file: look read-only first, then switch to WAL patiently (issue 18, 6, 7, 10).

* A file zkr refuses (too new, another application's) is left byte for byte as it was.
* The WAL switch waits for the lock like any other statement: a writer holding the file for a
  moment no longer makes an opening process fail at once with "database is locked".
* A read-only rollback-journal file can still be searched.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from zkr import errors
from zkr import models as m
from zkr.db import MemoryDb
from zkr.store.schema import SCHEMA_VERSION


def rollback_journal_file(path: Path, *, user_version: int = 0, application_id: int = 0) -> bytes:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE other_app(x)")
    conn.execute("INSERT INTO other_app VALUES (1)")
    conn.execute(f"PRAGMA user_version = {user_version}")
    conn.execute(f"PRAGMA application_id = {application_id}")
    conn.close()
    return path.read_bytes()


@pytest.mark.parametrize(
    ("user_version", "application_id", "error"),
    [
        (SCHEMA_VERSION + 1, 0, "SchemaVersionError"),
        (-1, 0, "SchemaVersionError"),
        (0, 0x47504B47, "ForeignDatabaseError"),
        (3, 1, "ForeignDatabaseError"),
    ],
)
def test_a_refused_file_is_not_modified(
    tmp_path: Path, user_version: int, application_id: int, error: str
) -> None:
    path = tmp_path / "refused.db"
    before = rollback_journal_file(path, user_version=user_version, application_id=application_id)
    with pytest.raises(getattr(errors, error, errors.ZkrError)):
        MemoryDb(path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["refused.db"]  # no -wal, no -shm


def test_the_wal_switch_waits_for_a_writer_instead_of_failing(tmp_path: Path) -> None:
    path = tmp_path / "rollback.db"
    with MemoryDb(path):
        pass
    plain = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    plain.execute("PRAGMA journal_mode = DELETE")  # as a zkr 0.2.3 file is
    plain.execute("BEGIN IMMEDIATE")  # a writer of that file, mid-transaction
    release = threading.Timer(0.3, lambda: plain.execute("COMMIT"))
    release.start()
    try:
        with MemoryDb(path) as db:
            assert db.conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    finally:
        release.join()
        plain.close()


READ_ONLY_SEARCH = """
import sys
from zkr import models as m
from zkr.db import MemoryDb
with MemoryDb(sys.argv[1]) as db:
    pack = db.search(m.SearchRequest(tenant_id="t", person_id="p", query="readable"))
    print(len(pack.items))
"""


def test_a_read_only_rollback_journal_file_is_still_searchable(tmp_path: Path) -> None:
    folder = Path(os.environ.get("TMPDIR", "/tmp")) / f"zkr-ro-{os.getpid()}-{tmp_path.name}"
    folder.mkdir()
    path = folder / "ro.db"
    try:
        with MemoryDb(path) as db:
            db.remember(
                m.RememberRequest(tenant_id="t", person_id="p", kind="document",
                                  text="still readable", captured_at=1, recorded_at=1)
            )  # fmt: skip
            db.conn.execute("PRAGMA journal_mode = DELETE")
        before = path.read_bytes()
        path.chmod(0o444)
        folder.chmod(0o555)
        # root ignores permission bits: read without the capabilities that let it.
        drop = "-dac_override,-dac_read_search"
        as_reader = (
            ["setpriv", f"--bounding-set={drop}", f"--inh-caps={drop}", "--"]
            if os.geteuid() == 0
            else []
        )
        done = subprocess.run(
            [*as_reader, sys.executable, "-c", READ_ONLY_SEARCH, str(path)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert (done.returncode, done.stdout.strip()) == (0, "1"), done.stderr
        assert path.read_bytes() == before
    finally:
        folder.chmod(0o755)
        path.chmod(0o644)
        for child in folder.iterdir():
            child.unlink()
        folder.rmdir()


def test_a_tilde_path_is_created_and_opened_in_the_same_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    with MemoryDb("~/nested/memory.db") as db:
        assert Path(db.path) == tmp_path / "nested" / "memory.db"
    assert (tmp_path / "nested" / "memory.db").is_file()
    assert not (tmp_path / "~").exists()


def test_a_file_checkpoints_its_wal_every_4000_pages(tmp_path: Path) -> None:
    # SQLite's default (1,000) checkpointed every ~28 remembers (~35 pages each), copying the same
    # hot pages back each time (issue 27.2; benchmarks/README). Every handle on a file sets it.
    from zkr.store.database import WAL_CHECKPOINT_PAGES

    with MemoryDb(tmp_path / "memory.db") as db:
        (pages,) = db.conn.execute("PRAGMA wal_autocheckpoint").fetchone()
    assert pages == WAL_CHECKPOINT_PAGES == 4000
