"""Erasure is absorbing: an old copy of forgotten content never brings it back (issue 26, point 1).

The independent reproduction: after ``forget``, applying a page that was exported *before* the
forget - another device of the same person that has not seen the forget yet, an old backup of the
file, the same feed under another upstream name - brought the text back, live and searchable, on
a replica and on the very database that ran the forget. Each test here failed on b1744e7.

The files are real SQLite files in WAL mode; "no byte" means the database file and its WAL, every
search ranking, every export page from the start, memories, profiles and reviews
(:func:`tests.core.test_forget.everything`).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.core.test_forget import SCOPE, _rows, everything, file_bytes, fill, found_secrets
from zkr import models as m
from zkr.db import MemoryDb
from zkr.feed.apply import sync

NOWHERE = {place: [] for place in ("file", "search", "export", "memories", "profiles", "reviews")}


def backup(db: MemoryDb, path: Path) -> MemoryDb:
    """A copy of *db* as it is now (SQLite's online backup), opened."""
    target = sqlite3.connect(path)
    db.conn.backup(target)
    target.close()
    return MemoryDb(path)


def forget(db: MemoryDb, source_id: str) -> None:
    db.forget(m.ForgetRequest(**SCOPE, source_id=source_id, erased_at=300))


def test_an_old_page_applied_on_a_replica_after_the_forget_drops_the_text(tmp_path: Path) -> None:
    with (
        MemoryDb(tmp_path / "laptop.db") as laptop,
        MemoryDb(tmp_path / "phone.db") as phone,
        MemoryDb(tmp_path / "replica.db") as replica,
    ):
        secret = fill(laptop)
        # The phone has the memory and has not seen the forget yet; so has an old backup.
        sync(laptop, phone, "a", "sam", upstream="laptop")
        with backup(laptop, tmp_path / "old-backup.db") as old:
            forget(laptop, secret.source_id)
            sync(laptop, replica, "a", "sam", upstream="laptop", limit=7)
            assert everything(replica, tmp_path / "replica.db") == NOWHERE

            # Checked after each: a later erasure replayed must not be what hides the text.
            late_phone = sync(phone, replica, "a", "sam", upstream="phone", limit=7)
            assert everything(replica, tmp_path / "replica.db") == NOWHERE
            late_backup = sync(old, replica, "a", "sam", upstream="old-backup", limit=3)
            assert everything(replica, tmp_path / "replica.db") == NOWHERE
            # The same feed under another upstream name, and the phone's again (a duplicate).
            renamed = sync(laptop, replica, "a", "sam", upstream="laptop-again", limit=5)
            sync(phone, replica, "a", "sam", upstream="phone", limit=7)

        assert found_secrets(file_bytes(tmp_path / "phone.db"))  # the old copy had it
        assert everything(replica, tmp_path / "replica.db") == NOWHERE
        assert _rows(replica) == _rows(laptop)
        # Source, evidence, claim, profile entry and review of the old copies were dropped.
        assert late_phone.dropped_events >= 5 and late_backup.dropped_events >= 5
        assert renamed.dropped_events == 0  # laptop's own feed was rewritten: nothing to drop


def test_an_old_page_applied_on_the_database_that_forgot_drops_the_text(tmp_path: Path) -> None:
    path = tmp_path / "laptop.db"
    with MemoryDb(path) as laptop, MemoryDb(tmp_path / "phone.db") as phone:
        secret = fill(laptop)
        sync(laptop, phone, "a", "sam", upstream="laptop")
        with backup(laptop, tmp_path / "old-backup.db") as old:
            rows = _rows(laptop)
            forget(laptop, secret.source_id)
            after_forget = _rows(laptop)
            assert after_forget != rows

            from_phone = sync(phone, laptop, "a", "sam", upstream="phone", limit=4)
            assert everything(laptop, path) == NOWHERE
            from_backup = sync(old, laptop, "a", "sam", upstream="old-backup", limit=100)

        assert everything(laptop, path) == NOWHERE
        assert _rows(laptop) == after_forget
        assert from_phone.dropped_events >= 5 and from_backup.dropped_events >= 5
        # A forget repeated afterwards still answers the first result and the page count holds.
        again = laptop.forget(m.ForgetRequest(**SCOPE, source_id=secret.source_id, erased_at=400))
        assert again.erased_at == 300
