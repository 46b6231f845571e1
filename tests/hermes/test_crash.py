"""Acceptance 2 without Hermes: a process SIGKILLed after sync_turn returned loses nothing, and the
turn is stored exactly once after restart (the real-Hermes variant is in tests/integration)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hermes.conftest import rows, write_locked
from zkr_hermes.provider import ZkrMemoryProvider

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")

CHILD = textwrap.dedent(
    """
    import os, signal, sys, time
    from zkr_hermes.provider import ZkrMemoryProvider
    from zkr_hermes import queue as queue_module

    home, marker, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    if mode == "after-apply":
        # Die in the worst place: the turn is in zkr but its queue row is not yet forgotten.
        queue_module.TurnQueue.remove = lambda self, turn_id: os.kill(os.getpid(), signal.SIGKILL)
    provider = ZkrMemoryProvider()
    provider.initialize("crash", hermes_home=home, platform="cli", agent_context="primary",
                        agent_identity="default", agent_workspace="hermes")
    provider.sync_turn(f"remember {marker}", "ok")
    print("SYNCED", flush=True)
    time.sleep(60)
    """
)


def run_child(tmp_path: Path, home: Path, marker: str, mode: str) -> subprocess.Popen[str]:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    return subprocess.Popen(
        [sys.executable, str(script), str(home), marker, mode],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "HERMES_HOME": str(home)},
    )


def count(db_path: Path, marker: str) -> int:
    return int(
        rows(db_path, "SELECT count(*) FROM sources WHERE instr(content, ?) > 0", (marker,))[0][0]
    )


def restart_and_count(
    make_provider: Callable[..., ZkrMemoryProvider], db_path: Path, marker: str
) -> int:
    provider = make_provider(session_id=f"after-{marker}")
    assert provider._flush(10)
    provider.shutdown()
    return count(db_path, marker)


def test_kill_before_the_worker_applied(
    tmp_path: Path,
    hermes_home: Path,
    db_path: Path,
    make_provider: Callable[..., ZkrMemoryProvider],
) -> None:
    for attempt in range(3):
        marker = f"locked-{attempt}"
        with write_locked(db_path):  # the child's worker cannot apply the turn
            child = run_child(tmp_path, hermes_home, marker, "normal")
            assert child.stdout is not None and child.stdout.readline().strip() == "SYNCED"
            child.send_signal(signal.SIGKILL)
            child.wait()
        assert count(db_path, marker) == 0
        assert rows(db_path.with_name("zkr.db.queue"), "SELECT count(*) FROM pending_turns") == [
            (1,)
        ]
        assert restart_and_count(make_provider, db_path, marker) == 1


def test_kill_at_any_moment_stores_each_turn_exactly_once(
    tmp_path: Path,
    hermes_home: Path,
    db_path: Path,
    make_provider: Callable[..., ZkrMemoryProvider],
) -> None:
    rng = random.Random(8)
    for attempt in range(4):
        marker = f"racy-{attempt}"
        child = run_child(tmp_path, hermes_home, marker, "normal")
        assert child.stdout is not None and child.stdout.readline().strip() == "SYNCED"
        child.stdout.close()
        # Anywhere from "not yet applied" to "applied and forgotten".
        time.sleep(rng.uniform(0, 0.05))
        child.send_signal(signal.SIGKILL)
        child.wait()
        assert restart_and_count(make_provider, db_path, marker) == 1


def test_kill_between_applying_and_forgetting_replays_idempotently(
    tmp_path: Path,
    hermes_home: Path,
    db_path: Path,
    make_provider: Callable[..., ZkrMemoryProvider],
) -> None:
    marker = "after-apply"
    child = run_child(tmp_path, hermes_home, marker, "after-apply")
    child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL
    assert count(db_path, marker) == 1
    assert rows(db_path.with_name("zkr.db.queue"), "SELECT count(*) FROM pending_turns") == [(1,)]
    assert restart_and_count(make_provider, db_path, marker) == 1
    assert rows(db_path.with_name("zkr.db.queue"), "SELECT count(*) FROM failed_turns") == [(0,)]
