"""Acceptance 4 without Hermes: gateway-style provider instances in one process and another
process writing the same database at the same time lose nothing and never report a locked
database. (The real ``zkr`` CLI variant is in tests/integration/hermes.)"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path

from tests.hermes.conftest import rows
from zkr_hermes.provider import ZkrMemoryProvider

WRITER = textwrap.dedent(
    """
    import sys
    from zkr import operations
    from zkr.db import MemoryDb

    db = MemoryDb(sys.argv[1])
    for i in range(int(sys.argv[2])):
        operations.run(db, "remember", {
            "tenant_id": "hermes", "person_id": "writer", "kind": "document",
            "text": f"external note {i}", "captured_at": 1, "recorded_at": 1,
        })
    print("done", flush=True)
    """
)

USERS = 4
EACH = 8
EXTERNAL = 40


def test_providers_and_another_process_write_together(
    tmp_path: Path, db_path: Path, make_provider: Callable[..., ZkrMemoryProvider]
) -> None:
    # Gateway sessions: one provider per chat, each with its own user id, started together on a
    # database that does not exist yet.
    providers: list[ZkrMemoryProvider] = [None] * USERS  # type: ignore[list-item]
    errors: list[str] = []

    def start(i: int) -> None:
        try:
            providers[i] = make_provider(
                session_id=f"chat-{i}", user_id=f"user-{i}", platform="telegram"
            )
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(repr(exc))

    starters = [threading.Thread(target=start, args=(i,)) for i in range(USERS)]
    for thread in starters:
        thread.start()
    for thread in starters:
        thread.join()
    assert errors == []

    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    writer = subprocess.Popen(
        [sys.executable, str(script), str(db_path), str(EXTERNAL)],
        stdout=subprocess.PIPE,
        text=True,
    )

    def chat(i: int) -> None:
        provider = providers[i]
        for n in range(EACH):
            result = json.loads(
                provider.handle_tool_call("zkr_store", {"content": f"user-{i} fact {n}"})
            )
            if "error" in result:
                errors.append(json.dumps(result))
            provider.sync_turn(f"user-{i} turn {n}", "ok")
            provider.prefetch(f"fact {n}")

    chats = [threading.Thread(target=chat, args=(i,)) for i in range(USERS)]
    for thread in chats:
        thread.start()
    for thread in chats:
        thread.join()
    assert writer.communicate(timeout=60)[0].strip() == "done"
    assert writer.returncode == 0
    for provider in providers:
        provider.shutdown()

    assert errors == []
    per_person = dict(rows(db_path, "SELECT person_id, count(*) FROM sources GROUP BY person_id"))
    assert per_person == {**{f"user-{i}": 2 * EACH for i in range(USERS)}, "writer": EXTERNAL}
    queue = db_path.with_name("zkr.db.queue")
    assert rows(queue, "SELECT count(*) FROM pending_turns") == [(0,)]
    assert rows(queue, "SELECT count(*) FROM failed_turns") == [(0,)]
