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
CLI_LOOPS, CLI_EACH = 2, 8


def test_gateway_sessions_and_zkr_cli_write_together(hermes_home: Path) -> None:
    db = hermes_home / "zkr.db"
    gateway = subprocess.Popen(
        [sys.executable, str(SCRIPTS / "gateway_load.py"), str(USERS), str(EACH)],
        env=hermes_env(hermes_home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    failures: list[str] = []

    def cli_writer(loop: int) -> None:
        for n in range(CLI_EACH):
            request = {
                "tenant_id": "hermes",
                "person_id": "cli",
                "kind": "document",
                "text": f"cli note {loop}-{n}",
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

    writers = [threading.Thread(target=cli_writer, args=(i,)) for i in range(CLI_LOOPS)]
    for thread in writers:
        thread.start()
    out, err = gateway.communicate(timeout=150)
    for thread in writers:
        thread.join()

    assert gateway.returncode == 0, err[-3000:]
    assert json.loads(out.strip().splitlines()[-1]) == {"errors": []}
    assert failures == []
    assert "database is locked" not in err
    per_person = dict(rows(db, "SELECT person_id, count(*) FROM sources GROUP BY person_id"))
    assert per_person == {
        **{f"user-{i}": 2 * EACH for i in range(USERS)},
        "cli": CLI_LOOPS * CLI_EACH,
    }
    queue = hermes_home / "zkr.db.queue"
    assert rows(queue, "SELECT count(*) FROM pending_turns") == [(0,)]
    assert rows(queue, "SELECT count(*) FROM failed_turns") == [(0,)]
