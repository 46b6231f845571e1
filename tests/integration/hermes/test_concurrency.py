"""Acceptance 4 with real Hermes: gateway sessions in one Hermes process and the ``zkr`` CLI write
the same database at once; nothing is lost and no "database is locked" error surfaces."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

from tests.integration.hermes.conftest import SCRIPTS, bin_path, hermes_env, needs_hermes, rows

pytestmark = needs_hermes

USERS, EACH = 4, 8
CLI_WRITERS = 2


def test_gateway_sessions_and_zkr_cli_write_together(hermes_home: Path) -> None:
    db = hermes_home / "zkr.db"
    gateway = subprocess.Popen(
        [sys.executable, str(SCRIPTS / "gateway_load.py"), str(USERS), str(EACH)],
        env=hermes_env(hermes_home),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert gateway.stdin is not None and gateway.stdout is not None
    assert gateway.stdout.readline().strip() == "READY"
    failures: list[str] = []
    written = [0] * CLI_WRITERS
    first_done = [threading.Event() for _ in range(CLI_WRITERS)]
    gateway_done = threading.Event()

    def remember(loop: int) -> None:
        request = {
            "tenant_id": "hermes",
            "person_id": "cli",
            "kind": "document",
            "text": f"cli note {loop}-{written[loop]}",
            "captured_at": 1,
            "recorded_at": 1,
        }
        done = subprocess.run(
            [bin_path("zkr"), "--db", str(db), "remember"],
            input=json.dumps(request),
            capture_output=True,
            text=True,
            timeout=60,
        )
        if done.returncode != 0:
            failures.append(done.stderr)
        written[loop] += 1

    def cli_writer(loop: int) -> None:
        # One write before the gateway starts, writes all the while it runs, one after it ended:
        # the CLI's writing interval contains the gateway's (checked in the database below).
        remember(loop)
        first_done[loop].set()
        while not gateway_done.is_set() and written[loop] < 200:
            remember(loop)
        remember(loop)

    writers = [threading.Thread(target=cli_writer, args=(i,)) for i in range(CLI_WRITERS)]
    for thread in writers:
        thread.start()
    for event in first_done:
        assert event.wait(60)
    gateway.stdin.write("GO\n")
    gateway.stdin.close()
    out = gateway.stdout.read()
    err = gateway.stderr.read() if gateway.stderr is not None else ""
    gateway.wait(timeout=150)
    gateway_done.set()
    for thread in writers:
        thread.join()

    assert gateway.returncode == 0, err[-3000:]
    assert json.loads(out.strip().splitlines()[-1]) == {"errors": []}
    assert failures == []
    assert "database is locked" not in err
    per_person = dict(rows(db, "SELECT person_id, count(*) FROM sources GROUP BY person_id"))
    assert per_person == {**{f"user-{i}": 2 * EACH for i in range(USERS)}, "cli": sum(written)}
    queue = hermes_home / "zkr.db.queue"
    assert rows(queue, "SELECT count(*) FROM pending_turns") == [(0,)]
    assert rows(queue, "SELECT count(*) FROM failed_turns") == [(0,)]
    # Overlap, in the database's own insertion order: CLI writes came before the first gateway
    # write and after the last one, and (this is what makes it concurrent) in between.
    order = [person for (person,) in rows(db, "SELECT person_id FROM sources ORDER BY rowid")]
    gateway_at = [k for k, person in enumerate(order) if person != "cli"]
    cli_at = [k for k, person in enumerate(order) if person == "cli"]
    assert cli_at[0] < gateway_at[0] and gateway_at[-1] < cli_at[-1]
    assert any(gateway_at[0] < k < gateway_at[-1] for k in cli_at)
