"""Resources (profile, a day's review, a claim) in the server's scope only, and the failures that
are not the caller's: a bug answers ``internal error``; a write waits in line behind another
writer, and a database held past core's wait answers ``database is busy``; neither failure writes
or stops the server."""

from __future__ import annotations

import functools
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.mcp.conftest import in_process, settings_for, sync_client, table_rows
from zkr.db import MemoryDb
from zkr.store import database
from zkr.store.opening import begin_immediate
from zkr_mcp.calls import DATABASE_BUSY, INTERNAL_ERROR
from zkr_mcp.tools import mcp_tools

TOOL = {entry.operation.name: name for name, entry in mcp_tools().items()}
PROFILE_FACT = {
    "kind": "conversation",
    "text": "My name is Ana",
    "claim": {"subject": "me", "predicate": "name", "value": "Ana", "kind": "profile_fact"},
}


async def _read(client: Client, uri: str) -> Any:
    result = await client.read_resource(uri)
    return json.loads(result.contents[0].text)  # type: ignore[union-attr]


def test_resources_read_the_servers_scope_only(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    with sync_client(settings_for(db, "t", "other")) as (_, other):
        foreign = other.call(TOOL["remember"], PROFILE_FACT).structured_content
    assert foreign is not None

    async def main() -> None:
        async with in_process(settings_for(db, "t", "me")) as (app, client):
            stored = (await client.call_tool(TOOL["remember"], PROFILE_FACT)).structured_content
            assert stored is not None
            scope = {"tenant_id": "t", "person_id": "me"}
            app.db.run(
                "profile",
                {
                    **scope,
                    "stability": "stable",
                    "claim_id": stored["claim_id"],
                    "recorded_at": 2**40,
                },
            )
            review = {"day": "2026-12-01", "summary": "Told me her name.",
                      "evidence_ids": [stored["evidence_id"]]}  # fmt: skip
            assert not (await client.call_tool(TOOL["review"], review)).is_error

            templates = await client.list_resource_templates()
            assert {t.uri_template for t in templates.resource_templates} == {
                "zkr://claim/{id}",
                "zkr://review/{day}",
            }
            profile = await _read(client, "zkr://profile")
            assert [(e["key"], e["value"], e["person_id"]) for e in profile] == [
                ("name", "Ana", "me")
            ]
            day = await _read(client, "zkr://review/2026-12-01")
            assert day["evidence_ids"] == [stored["evidence_id"]]
            for later in range(1, 106):  # more newer days than one page of reviews holds
                newer = {**review, "day": f"2027-{1 + later // 28:02d}-{1 + later % 28:02d}"}
                assert not (await client.call_tool(TOOL["review"], newer)).is_error
            day = await _read(client, "zkr://review/2026-12-01")
            assert day["day"] == "2026-12-01"
            claim = await _read(client, f"zkr://claim/{stored['claim_id']}")
            assert claim["memory"]["id"] == stored["claim_id"]
            for uri in (
                f"zkr://claim/{foreign['claim_id']}",  # another person's claim
                "zkr://review/1999-01-01",
                "zkr://nothing/here",
            ):
                with pytest.raises(MCPError):
                    await client.read_resource(uri)
            prompt = await client.get_prompt("what_do_you_remember")
            assert "- name: Ana (stable" in prompt.messages[0].content.text  # type: ignore[union-attr]

    anyio.run(main)


def test_a_bug_answers_internal_error_and_the_server_keeps_serving(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "memory.db"
    with sync_client(settings_for(db)) as (app, client):
        real_run = app.db.run

        def broken(operation: Any, request: Any) -> Any:
            raise RuntimeError("secret detail that must not reach the client")

        monkeypatch.setattr(app.db, "run", broken)
        before = table_rows(db)
        result = client.call(TOOL["remember"], {"kind": "conversation", "text": "x"})
        assert result.is_error and result.content[0].text == INTERNAL_ERROR  # type: ignore[union-attr]
        assert table_rows(db) == before
        monkeypatch.setattr(app.db, "run", real_run)
        assert not client.call(TOOL["remember"], {"kind": "conversation", "text": "x"}).is_error


def test_a_write_waits_in_line_behind_another_writer(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    MemoryDb(db).close()
    with sync_client(settings_for(db)) as (_, client):
        holder = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
        holder.execute("BEGIN IMMEDIATE")  # another process in the middle of a write
        release = threading.Timer(1.0, holder.execute, ["ROLLBACK"])
        release.start()
        try:
            result = client.call(TOOL["remember"], {"kind": "conversation", "text": "in line"})
        finally:
            release.join()
            holder.close()
        assert not result.is_error, result.content


def test_a_database_held_too_long_answers_busy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "memory.db"
    MemoryDb(db).close()
    # Core waits up to 30 s in line for the write lock; half a second past the busy timeout here.
    monkeypatch.setattr(database, "begin_immediate", functools.partial(begin_immediate, wait=0.5))
    with sync_client(settings_for(db)) as (_, client):
        before = table_rows(db)
        holder = sqlite3.connect(db, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            result = client.call(TOOL["remember"], {"kind": "conversation", "text": "later"})
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert result.is_error and result.content[0].text == DATABASE_BUSY  # type: ignore[union-attr]
        assert table_rows(db) == before
        assert not client.call(TOOL["remember"], {"kind": "conversation", "text": "now"}).is_error
