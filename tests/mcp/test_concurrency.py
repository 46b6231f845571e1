"""Several servers and another zkr writer on one database; a killed server loses no acknowledged
write. Real ``zkr-mcp`` processes, driven by the SDK's client."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from tests.mcp.conftest import http_server, settings_for, stdio_params
from zkr.db import MemoryDb
from zkr.errors import NotFound
from zkr_mcp.tools import mcp_tools

TOOL = {entry.operation.name: name for name, entry in mcp_tools().items()}
PER_WRITER = 12

#: Another zkr writer: the library in a separate process, same scope, same file, writing until
#: the stop file appears.
LIBRARY_WRITER = textwrap.dedent(
    """
    import pathlib, sys, time
    from zkr.db import MemoryDb
    from zkr.models import RememberRequest
    stop = pathlib.Path(sys.argv[2])
    with MemoryDb(sys.argv[1]) as db:
        i = 0
        while not stop.exists():
            db.remember(RememberRequest(
                tenant_id="tenant-a", person_id="person-a", kind="conversation",
                text=f"library note {i}", captured_at=1, recorded_at=1))
            i += 1
            if i == 1:  # tell the test the library has written before any server
                pathlib.Path(sys.argv[3]).touch()
            time.sleep(0.01)
    print(i)
    """
)


def _memory(text: str) -> dict[str, Any]:
    return {"kind": "conversation", "text": text}


def _live_sources(db: Path, ids: list[str]) -> list[str]:
    """The ids among *ids* that the database holds as live sources of the served scope."""
    live = []
    with MemoryDb(db) as handle:
        for source in ids:
            scope = {"tenant_id": "tenant-a", "person_id": "person-a"}
            try:
                handle.run("get", {**scope, "target": {"kind": "source", "id": source}})
            except NotFound:
                continue
            live.append(source)
    return live


def test_two_servers_and_a_library_writer_share_one_database(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    settings = settings_for(db)
    acknowledged: list[str] = []

    async def server(name: str) -> None:
        async with Client(stdio_params(settings)) as client:
            for i in range(PER_WRITER):
                result = await client.call_tool(TOOL["remember"], _memory(f"{name} note {i}"))
                assert not result.is_error, result.content
                acknowledged.append((result.structured_content or {})["source_id"])

    stop = tmp_path / "stop"
    started = tmp_path / "started"
    writer = subprocess.Popen(
        [sys.executable, "-c", LIBRARY_WRITER, str(db), str(stop), str(started)],
        stdout=subprocess.PIPE,
    )
    # The servers start once the library has written (by construction, not by start-up speed:
    # a fast server start-up on an idle machine used to win the race now and then).
    deadline = time.monotonic() + 60
    while not started.exists():
        assert writer.poll() is None, "the library writer stopped before writing"
        assert time.monotonic() < deadline, "the library writer never wrote"
        time.sleep(0.01)

    async def main() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(server, "first")
            group.start_soon(server, "second")

    try:
        anyio.run(main)
    finally:
        stop.touch()
        out, _ = writer.communicate(timeout=60)
    assert writer.returncode == 0
    library = int(out)
    assert len(acknowledged) == 2 * PER_WRITER
    assert _live_sources(db, acknowledged) == acknowledged
    with MemoryDb(db) as handle:
        contents = [
            row[0] for row in handle.conn.execute("SELECT content FROM sources ORDER BY rowid")
        ]
    # Nothing lost, nothing doubled: every writer's every memory, once.
    assert sorted(contents) == sorted(
        [f"{name} note {i}" for name in ("first", "second") for i in range(PER_WRITER)]
        + [f"library note {i}" for i in range(library)]
    )
    # And they really ran at once: the library wrote before, between and after the servers' writes.
    served = [i for i, text in enumerate(contents) if not text.startswith("library")]
    between = contents[served[0] : served[-1]]
    assert contents[0].startswith("library") and contents[-1].startswith("library")
    assert any(text.startswith("library") for text in between)


def test_a_killed_server_loses_no_acknowledged_write(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    acknowledged: list[str] = []
    with http_server(settings_for(db)) as (url, process):

        async def main() -> None:
            async with Client(url) as client:
                for i in range(PER_WRITER):
                    result = await client.call_tool(TOOL["remember"], _memory(f"kept {i}"))
                    assert not result.is_error, result.content
                    acknowledged.append((result.structured_content or {})["source_id"])
                # The last answer is in: kill at once, no shutdown, no chance to flush.
                process.send_signal(signal.SIGKILL)

        anyio.run(main)
        assert process.wait(10) == -signal.SIGKILL
    assert _live_sources(db, acknowledged) == acknowledged
