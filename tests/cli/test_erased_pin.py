"""An erased 4-digit PIN cannot be recovered from anything ``forget`` leaves (issue 26, point 3).

The independent reproduction: ``zkr import`` keyed a line without ``ingestion_key`` by a SHA-256
of the whole request, text included, and ``forget`` kept that key - the PIN was recovered offline
in 4,822 guesses. Here the attacker tries all 10,000 PINs: each guess is turned into the key
``zkr import`` would derive for it, and looked for in everything forget leaves - every byte of
the database file and its WAL, of a replica fed through ``apply`` (file and WAL), and every export
page of both. Before the forget the same attack finds the PIN (so the attack works); after it,
none of the 10,000 guesses matches. Failed on b1744e7 (the PIN was found after the forget).

Also: a line whose own ``ingestion_key`` names the forgotten memory is dropped (counted), and the
derived key is replaced on the replica too (it applies the erasure).
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

from zkr import models as m
from zkr.db import MemoryDb
from zkr.feed.apply import sync
from zkr_cli.importing import derived_key, import_lines

SCOPE = {"tenant_id": "a", "person_id": "sam"}
PIN = "4821"
HEX = re.compile(rb"[0-9a-f]{64}")


def line(pin: str) -> dict[str, Any]:
    return {
        **SCOPE,
        "kind": "conversation",
        "text": f"my card PIN is {pin}",
        "captured_at": 1_700_000_000,
        "recorded_at": 1_700_000_000,
    }


def guess_keys() -> dict[bytes, str]:
    """The key ``zkr import`` derives for every possible PIN's line, as its hex digest."""
    keys = {}
    for number in range(10_000):
        pin = f"{number:04d}"
        key = derived_key(m.RememberRequest.model_validate(line(pin)))
        keys[key.split(":", 1)[1].encode()] = pin
    assert len(keys) == 10_000
    return keys


def file_bytes(path: Path) -> bytes:
    wal = Path(f"{path}-wal")
    return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def export_bytes(db: MemoryDb) -> bytes:
    page = db.export(
        m.ExportRequest(**SCOPE, export_format=1, after_commit=0, after_event_index=-1, limit=100)
    )
    assert page.complete
    return page.model_dump_json().encode()


def recovered(keys: dict[bytes, str], *blobs: bytes) -> set[str]:
    """The PINs whose derived key occurs anywhere in *blobs*."""
    return {keys[h] for blob in blobs for h in HEX.findall(blob) if h in keys}


def lines(*requests: dict[str, Any]) -> io.BytesIO:
    return io.BytesIO(b"".join(json.dumps(r).encode() + b"\n" for r in requests))


def test_no_pin_can_be_recovered_from_what_forget_leaves(tmp_path: Path) -> None:
    keys = guess_keys()
    up_path, replica_path = tmp_path / "up.db", tmp_path / "replica.db"
    with MemoryDb(up_path) as up, MemoryDb(replica_path) as replica:
        other = {**line("0000"), "text": "an ordinary note", "captured_at": 1_700_000_001}
        summary = import_lines(up, lines(line(PIN), other))  # type: ignore[arg-type]
        assert summary.stored == 2
        sync(up, replica, "a", "sam")

        def everything() -> set[str]:
            return recovered(
                keys,
                file_bytes(up_path),
                file_bytes(replica_path),
                export_bytes(up),
                export_bytes(replica),
            )

        assert everything() == {PIN}  # the attack works while the memory is there
        source_id = up.conn.execute(
            "SELECT id FROM sources WHERE content LIKE 'my card PIN%'"
        ).fetchone()[0]
        up.forget(m.ForgetRequest(**SCOPE, source_id=source_id, erased_at=1_700_000_100))
        sync(up, replica, "a", "sam")
        replica.checkpoint()

        assert everything() == set()
        for db in (up, replica):
            assert db.conn.execute(
                "SELECT ingestion_key FROM sources WHERE id = ?", (source_id,)
            ).fetchone() == (f"import-erased:{source_id}",)
        # The other line keeps its derived key: a re-run is still a replay for it.
        again = import_lines(up, lines(other))  # type: ignore[arg-type]
        assert (again.stored, again.replayed, again.dropped) == (0, 1, 0)


def test_a_line_keyed_like_a_forgotten_memory_is_dropped(tmp_path: Path) -> None:
    with MemoryDb(tmp_path / "m.db") as db:
        keyed = {**line(PIN), "ingestion_key": "turn-7"}
        import_lines(db, lines(keyed))  # type: ignore[arg-type]
        source_id = db.conn.execute("SELECT id FROM sources").fetchone()[0]
        db.forget(m.ForgetRequest(**SCOPE, source_id=source_id, erased_at=1_700_000_100))
        summary = import_lines(db, lines(keyed, keyed))  # type: ignore[arg-type]
        assert summary.to_json() == {
            "lines": 2,
            "stored": 0,
            "replayed": 0,
            "dropped": 2,
            "refused": [],
            "refused_count": 0,
        }
        assert db.conn.execute("SELECT count(*), max(content) FROM sources").fetchone() == (1, "")
