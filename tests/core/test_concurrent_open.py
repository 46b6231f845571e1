"""Several processes opening (and so migrating) one new database at once all succeed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

OPEN_AND_WRITE = """
import sys
from zkr import MemoryDb
from zkr.models import RememberRequest
with MemoryDb(sys.argv[1]) as db:
    db.remember(RememberRequest(tenant_id="t", person_id="p", kind="conversation",
        text="opened by " + sys.argv[2], captured_at=1, recorded_at=1))
"""


def test_processes_racing_to_create_a_database_all_succeed(tmp_path: Path) -> None:
    path = tmp_path / "raced.db"
    children = [
        subprocess.Popen(
            [sys.executable, "-c", OPEN_AND_WRITE, str(path), str(i)], stderr=subprocess.PIPE
        )
        for i in range(6)
    ]
    failures = [(c.wait(), c.stderr.read().decode() if c.stderr else "") for c in children]
    assert [code for code, _ in failures] == [0] * 6, failures

    from zkr import MemoryDb

    with MemoryDb(path) as db:
        count = db.conn.execute("SELECT count(*) FROM sources").fetchone()[0]
        commits = db.conn.execute("SELECT count(*) FROM memory_commits").fetchone()[0]
    assert (count, commits) == (6, 6)
