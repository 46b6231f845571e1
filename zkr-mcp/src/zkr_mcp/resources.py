"""Resources (a claim, the profile, a day's review) and the "what do you remember" prompt.

Resources are what a client can attach to a conversation without a model's tool call. Each read
is one zkr read operation in the server's scope; an id of another scope reads like a missing one.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mcp import types
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter

from zkr.db import MemoryDb
from zkr.errors import ZkrError
from zkr_mcp.config import Settings

__all__ = [
    "PROFILE_URI",
    "PROMPT_NAME",
    "get_prompt",
    "prompts",
    "read_resource",
    "resource_templates",
    "resources",
]

CLAIM_TEMPLATE = "zkr://claim/{id}"
REVIEW_TEMPLATE = "zkr://review/{day}"
PROFILE_URI = "zkr://profile"
JSON_MIME = "application/json"
PROMPT_NAME = "what_do_you_remember"
#: Profile entries read for a resource or the prompt (the contract's maximum page).
PAGE = 100
#: The JSON-RPC code MCP gives a resource that does not exist.
RESOURCE_NOT_FOUND = -32002

_CLAIM = re.compile(r"zkr://claim/(?P<id>[^/]+)")
_REVIEW = re.compile(r"zkr://review/(?P<day>[^/]+)")


def resources() -> list[types.Resource]:
    return [
        types.Resource(
            name="profile",
            title="Profile",
            uri=PROFILE_URI,
            description="The person's current profile entries (stable and current facts), "
            "each citing the claim it projects.",
            mime_type=JSON_MIME,
        )
    ]


def resource_templates() -> list[types.ResourceTemplate]:
    return [
        types.ResourceTemplate(
            name="claim",
            title="A remembered claim",
            uri_template=CLAIM_TEMPLATE,
            description="One live claim as a cited memory: its excerpt and the evidence ids "
            "that support it.",
            mime_type=JSON_MIME,
        ),
        types.ResourceTemplate(
            name="review",
            title="A day's review",
            uri_template=REVIEW_TEMPLATE,
            description="The daily review stored for a day (YYYY-MM-DD), citing its evidence.",
            mime_type=JSON_MIME,
        ),
    ]


def _json(value: Any) -> str:
    data = TypeAdapter(Any).dump_python(value, mode="json", by_alias=True)
    return json.dumps(data, ensure_ascii=False, sort_keys=True)


def _scope(settings: Settings) -> dict[str, str]:
    return {"tenant_id": settings.tenant_id, "person_id": settings.person_id}


def _profile(db: MemoryDb, settings: Settings) -> list[Any]:
    entries: list[Any] = db.run("profiles", {**_scope(settings), "limit": PAGE})
    return entries


def read_resource(db: MemoryDb, settings: Settings, uri: str) -> types.ReadResourceResult:
    """The resource at *uri*.

    :raises MCPError: unknown URI, or no such claim or review in this scope.
    """
    try:
        text = _read(db, settings, uri)
    except ZkrError as exc:
        raise MCPError(RESOURCE_NOT_FOUND, exc.message, {"uri": uri}) from None
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=uri, mime_type=JSON_MIME, text=text)]
    )


def _read(db: MemoryDb, settings: Settings, uri: str) -> str:
    if uri == PROFILE_URI:
        return _json(_profile(db, settings))
    if match := _CLAIM.fullmatch(uri):
        target = {"kind": "claim", "id": match["id"]}
        return _json(db.run("get", {**_scope(settings), "target": target}))
    if match := _REVIEW.fullmatch(uri):
        # The day is filtered in the store: a day older than any page of reviews is still found.
        found = db.run("reviews", {**_scope(settings), "day": match["day"], "limit": 1})
        if not found:
            raise MCPError(RESOURCE_NOT_FOUND, "record not found", {"uri": uri})
        return _json(found[0])
    raise MCPError(RESOURCE_NOT_FOUND, f"unknown resource `{uri}`", {"uri": uri})


def prompts() -> list[types.Prompt]:
    return [
        types.Prompt(
            name=PROMPT_NAME,
            title="What do you remember about me?",
            description="Ask the assistant to tell what zkr remembers about you, with the "
            "evidence for each memory.",
        )
    ]


def get_prompt(
    db: MemoryDb, settings: Settings, name: str, tool_names: dict[str, str]
) -> types.GetPromptResult:
    """The prompt, with the current profile inlined so that the model starts from it.

    :param tool_names: operation name -> MCP tool name (the table's, not spelled here).
    :raises MCPError: unknown prompt.
    """
    if name != PROMPT_NAME:
        raise MCPError(types.INVALID_PARAMS, f"unknown prompt `{name}`")
    lines = [
        f"- {entry.key}: {entry.value} ({entry.stability}, claim {entry.claim_id})"
        for entry in _profile(db, settings)
    ]
    profile = "\n".join(lines) if lines else "(no profile entries yet)"
    searching = ", ".join(
        f"`{tool_names[op]}`" for op in ("memories", "search", "history") if op in tool_names
    )
    text = (
        "What do you remember about me?\n\n"
        f"My profile as zkr holds it now:\n{profile}\n\n"
        f"Look further with {searching or 'the zkr tools'}, then answer in a short list. "
        "Give each memory with the evidence ids it cites, say when something was corrected, "
        "and do not state anything zkr does not cite."
    )
    return types.GetPromptResult(
        description="What zkr remembers about the user, cited.",
        messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
        ],
    )
