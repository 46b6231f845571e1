"""Acceptance 1: the SDK's real client drives a real ``zkr-mcp`` process, over stdio and over
streamable HTTP on 127.0.0.1: list tools, remember, search finds it with citations, correct then
history shows both versions, forget then search finds nothing. Also get, as_of, the resources,
the prompt, and delete.

``history`` and ``forget`` (and ``memories``) are operations of the person's-view work: their
tests skip, saying so, until the table offers them, and run with no change here once it does.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.mcp.conftest import http_server, settings_for, stdio_params
from zkr_mcp.tools import mcp_tools

TOOL = {entry.operation.name: name for name, entry in mcp_tools().items()}


def _ok(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    structured: dict[str, Any] = result.structured_content
    # The text block carries the same JSON, for clients that ignore structured content.
    assert json.loads(result.content[0].text) == structured
    return structured


PERSONS_VIEW = ("memories", "history", "forget")


async def _remember_lisbon(client: Client) -> dict[str, Any]:
    """A past capture with explicit times (100): explicit times are accepted."""
    return _ok(
        await client.call_tool(
            TOOL["remember"],
            {
                "kind": "conversation",
                "text": "I moved to Lisbon in May",
                "captured_at": 100,
                "recorded_at": 100,
                "claim": {
                    "subject": "me",
                    "predicate": "lives_in",
                    "value": "Lisbon",
                    "kind": "fact",
                    "valid_from": 100,
                },
            },
        )
    )


async def _correct_to_porto(client: Client, claim: str) -> dict[str, Any]:
    """With the server's "now" for valid_at and recorded_at (the model leaves them out)."""
    corrected = _ok(
        await client.call_tool(
            TOOL["correct"],
            {"claim_id": claim, "text": "Actually I moved to Porto", "value": "Porto"},
        )
    )
    assert corrected["superseded_claim_id"] == claim
    return corrected


async def _finds_nothing(client: Client) -> None:
    for query in ("Lisbon", "Porto", "moved"):
        gone = _ok(await client.call_tool(TOOL["search"], {"query": query}))
        assert gone["items"] == [], gone


async def scenario(client: Client) -> None:
    listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(TOOL.values()) == set(listed)
    assert all(tool.output_schema for tool in listed.values())

    stored = await _remember_lisbon(client)
    lisbon = stored["claim_id"]
    found = _ok(await client.call_tool(TOOL["search"], {"query": "Lisbon"}))
    (item,) = [item for item in found["items"] if item["memory"]["id"] == lisbon]
    assert item["evidence_ids"] == [stored["evidence_id"]]
    assert "Lisbon" in item["excerpt"]

    got = _ok(await client.call_tool(TOOL["get"], {"target": {"kind": "claim", "id": lisbon}}))
    assert got["evidence_ids"] == [stored["evidence_id"]]
    resource = await client.read_resource(f"zkr://claim/{lisbon}")
    assert json.loads(resource.contents[0].text)["memory"]["id"] == lisbon  # type: ignore[union-attr]

    corrected = await _correct_to_porto(client, lisbon)
    # as_of before the correction still sees Lisbon; now sees Porto only.
    past = {"valid_at": 150, "recorded_at": 150}
    then = _ok(await client.call_tool(TOOL["search"], {"query": "Lisbon Porto", "as_of": past}))
    assert [i["memory"]["id"] for i in then["items"] if i["memory"]["kind"] == "claim"] == [lisbon]
    now = _ok(await client.call_tool(TOOL["search"], {"query": "Lisbon Porto"}))
    claims = [i["memory"]["id"] for i in now["items"] if i["memory"]["kind"] == "claim"]
    assert claims == [corrected["claim_id"]]

    prompt = await client.get_prompt("what_do_you_remember")
    assert "What do you remember about me?" in prompt.messages[0].content.text  # type: ignore[union-attr]

    # delete both captures (in the same second as the correction, with the server's "now"):
    # search finds nothing about either any more.
    for source in (stored["source_id"], corrected["source_id"]):
        _ok(await client.call_tool(TOOL["delete"], {"source_id": source}))
    await _finds_nothing(client)


async def persons_view_scenario(client: Client) -> None:
    """correct, then history shows both versions; forget, then search finds nothing."""
    stored = await _remember_lisbon(client)
    lisbon = stored["claim_id"]
    corrected = await _correct_to_porto(client, lisbon)
    history = _ok(await client.call_tool(TOOL["history"], {"claim_id": lisbon}))
    versions = [version["claim"] for version in history["versions"]]
    assert [(v["id"], v["value"], v["status"]) for v in versions] == [
        (lisbon, "Lisbon", "superseded"),
        (corrected["claim_id"], "Porto", "accepted"),
    ]
    listed = _ok(await client.call_tool(TOOL["memories"], {}))
    assert corrected["claim_id"] in {i["memory"]["id"] for i in listed["items"]}
    later = int(time.time()) + 5  # strictly after the correction, as for delete above
    for source in (stored["source_id"], corrected["source_id"]):
        _ok(await client.call_tool(TOOL["forget"], {"source_id": source, "erased_at": later}))
    await _finds_nothing(client)


def _needs_persons_view() -> None:
    missing = [operation for operation in PERSONS_VIEW if operation not in TOOL]
    if missing:
        pytest.skip(f"the operation table offers no {', '.join(missing)} tool yet")


async def _stdio(db: Path, run: Any) -> None:
    async with Client(stdio_params(settings_for(db))) as client:
        await run(client)


def _http(db: Path, run: Any) -> None:
    with http_server(settings_for(db)) as (url, _):

        async def main() -> None:
            async with Client(url) as client:
                await run(client)

        anyio.run(main)


def test_stdio_subprocess(tmp_path: Path) -> None:
    anyio.run(_stdio, tmp_path / "memory.db", scenario)


def test_streamable_http_on_localhost(tmp_path: Path) -> None:
    _http(tmp_path / "memory.db", scenario)


def test_history_and_forget_over_stdio(tmp_path: Path) -> None:
    _needs_persons_view()
    anyio.run(_stdio, tmp_path / "memory.db", persons_view_scenario)


def test_history_and_forget_over_streamable_http(tmp_path: Path) -> None:
    _needs_persons_view()
    _http(tmp_path / "memory.db", persons_view_scenario)
