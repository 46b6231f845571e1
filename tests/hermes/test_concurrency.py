"""Acceptance 4 without Hermes: gateway-style provider instances in one process and another
process writing the same database at the same time lose nothing and never report a locked
database. (The real ``zkr`` CLI variant is in tests/integration/hermes.)"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

from tests.hermes.conftest import rows
from zkr_hermes.provider import ZkrMemoryProvider

WRITER = textwrap.dedent(
    """
    import os, sys, time
    from zkr import operations
    from zkr.db import MemoryDb

    db, stop = MemoryDb(sys.argv[1]), sys.argv[2]
    written = 0
    while written < 5000:
        stopping = os.path.exists(stop)
        operations.run(db, "remember", {
            "tenant_id": "hermes", "person_id": "writer", "kind": "document",
            "text": f"external note {written}", "captured_at": 1, "recorded_at": 1,
        })
        written += 1
        if written == 1:
            print("STARTED", flush=True)
        if stopping:  # this write began after the stop file appeared: it follows every chat's
            break
        time.sleep(0.005)  # a busy client, not a lock hog
    print(written, flush=True)
    """
)

USERS = 4
EACH = 8


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
    stop = tmp_path / "stop"
    writer = subprocess.Popen(
        [sys.executable, str(script), str(db_path), str(stop)],
        stdout=subprocess.PIPE,
        text=True,
    )
    # Start barrier: the other process is writing before any chat starts, and goes on writing
    # until every chat is done, so the writes overlap by construction (checked below).
    assert writer.stdout is not None and writer.stdout.readline().strip() == "STARTED"

    def chat(i: int, turns: range) -> None:
        provider = providers[i]
        for n in turns:
            result = json.loads(
                provider.handle_tool_call("zkr_store", {"text": f"user-{i} fact {n}"})
            )
            if "error" in result:
                errors.append(json.dumps(result))
            provider.sync_turn(f"user-{i} turn {n}", "ok")
            provider.prefetch(f"fact {n}")

    def chats(turns: range) -> None:
        threads = [threading.Thread(target=chat, args=(i, turns)) for i in range(USERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def writer_rows() -> int:
        return int(rows(db_path, "SELECT count(*) FROM sources WHERE person_id = 'writer'")[0][0])

    chats(range(EACH // 2))
    # Middle barrier: the other process writes again before the second half of the chats, so
    # one of its writes lies between the providers' first and last by construction too (on a
    # busy machine the chats could otherwise all land while it waited for a core).
    seen, deadline = writer_rows(), time.monotonic() + 30
    while writer_rows() == seen:
        assert time.monotonic() < deadline, "the other process stopped writing"
        time.sleep(0.01)
    chats(range(EACH // 2, EACH))
    for provider in providers:
        assert provider._flush(30)
    stop.touch()
    written = int(writer.communicate(timeout=60)[0].strip())
    assert writer.returncode == 0
    for provider in providers:
        provider.shutdown()

    assert errors == []
    per_person = dict(rows(db_path, "SELECT person_id, count(*) FROM sources GROUP BY person_id"))
    assert per_person == {**{f"user-{i}": 2 * EACH for i in range(USERS)}, "writer": written}
    queue = db_path.with_name("zkr.db.queue")
    assert rows(queue, "SELECT count(*) FROM pending_turns") == [(0,)]
    assert rows(queue, "SELECT count(*) FROM failed_turns") == [(0,)]
    # Overlap, read from the database's own insertion order: the other process wrote before the
    # first and after the last provider write, and in between them.
    order = [person for (person,) in rows(db_path, "SELECT person_id FROM sources ORDER BY rowid")]
    providers_at = [k for k, person in enumerate(order) if person != "writer"]
    writer_at = [k for k, person in enumerate(order) if person == "writer"]
    assert writer_at[0] < providers_at[0] and providers_at[-1] < writer_at[-1]
    assert any(providers_at[0] < k < providers_at[-1] for k in writer_at)
