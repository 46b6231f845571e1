"""Acceptance 1: the SDK's real client drives a real ``zkr-mcp`` process, over stdio and over
streamable HTTP on 127.0.0.1: list tools, remember, search finds it with citations, correct then
history shows both versions, forget then search finds nothing. Also the resources and the prompt.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
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


async def scenario(client: Client) -> None:
    listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(TOOL.values()) == set(listed)
    for operation in ("remember", "search", "get", "memories", "history", "correct", "delete",
                      "forget"):  # fmt: skip
        assert operation in TOOL, f"the table offers no {operation} tool"

    # Explicit times are accepted (a past capture); "now" fields are filled when left out.
    stored = _ok(
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
    lisbon = stored["claim_id"]
    found = _ok(await client.call_tool(TOOL["search"], {"query": "Lisbon"}))
    (item,) = [item for item in found["items"] if item["memory"]["id"] == lisbon]
    assert item["evidence_ids"] == [stored["evidence_id"]]
    assert "Lisbon" in item["excerpt"]

    got = _ok(await client.call_tool(TOOL["get"], {"target": {"kind": "claim", "id": lisbon}}))
    assert got["evidence_ids"] == [stored["evidence_id"]]
    resource = await client.read_resource(f"zkr://claim/{lisbon}")
    assert json.loads(resource.contents[0].text)["memory"]["id"] == lisbon  # type: ignore[union-attr]

    # correct with the server's "now" (after 100), then the history holds both versions.
    corrected = _ok(
        await client.call_tool(
            TOOL["correct"],
            {"claim_id": lisbon, "text": "Actually I moved to Porto", "value": "Porto"},
        )
    )
    assert corrected["superseded_claim_id"] == lisbon
    history = _ok(await client.call_tool(TOOL["history"], {"claim_id": lisbon}))
    versions = [version["claim"] for version in history["versions"]]
    assert [(v["id"], v["value"], v["status"]) for v in versions] == [
        (lisbon, "Lisbon", "superseded"),
        (corrected["claim_id"], "Porto", "accepted"),
    ]
    assert history["current_claim_id"] == corrected["claim_id"]
    # as_of before the correction still sees Lisbon; now sees Porto only.
    past = {"valid_at": 150, "recorded_at": 150}
    then = _ok(await client.call_tool(TOOL["search"], {"query": "Lisbon Porto", "as_of": past}))
    assert [i["memory"]["id"] for i in then["items"] if i["memory"]["kind"] == "claim"] == [lisbon]
    now = _ok(await client.call_tool(TOOL["search"], {"query": "Lisbon Porto"}))
    claims = [i["memory"]["id"] for i in now["items"] if i["memory"]["kind"] == "claim"]
    assert claims == [corrected["claim_id"]]
    listed_memories = _ok(await client.call_tool(TOOL["memories"], {}))
    assert corrected["claim_id"] in {i["memory"]["id"] for i in listed_memories["items"]}

    prompt = await client.get_prompt("what_do_you_remember")
    assert "What do you remember about me?" in prompt.messages[0].content.text  # type: ignore[union-attr]

    # forget both captures: nothing about Lisbon or Porto can be found any more.
    for source in (stored["source_id"], corrected["source_id"]):
        _ok(await client.call_tool(TOOL["forget"], {"source_id": source}))
    for query in ("Lisbon", "Porto", "moved"):
        gone = _ok(await client.call_tool(TOOL["search"], {"query": query}))
        assert gone["items"] == [], gone


def test_stdio_subprocess(tmp_path: Path) -> None:
    async def main() -> None:
        async with Client(stdio_params(settings_for(tmp_path / "memory.db"))) as client:
            await scenario(client)

    anyio.run(main)


def test_streamable_http_on_localhost(tmp_path: Path) -> None:
    with http_server(settings_for(tmp_path / "memory.db")) as (url, _):

        async def main() -> None:
            async with Client(url) as client:
                await scenario(client)

        anyio.run(main)
