"""The MCP tools: one per entry of zkr's tool table, nothing written by hand per tool.

Each tool's name, description and input schema are ``zkr.tools.tool_specs()``'s; its annotations
come from the operation's ``effect``/``idempotent``; its output schema is the JSON schema of the
operation's response type. A response that is not a JSON object (a list of profile entries, an
optional locator) is carried as ``{"result": ...}``, because MCP's structured content is an object.
An operation added to the table becomes a tool here with no code.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp import types
from pydantic import TypeAdapter

from zkr.errors import LimitExceeded
from zkr.jsonio import parse_request
from zkr.operations import MAX_REQUEST_BYTES, OPERATIONS, Operation
from zkr.tools import tool_specs

__all__ = [
    "RESULT_KEY",
    "McpTool",
    "as_structured",
    "checked_arguments",
    "mcp_tools",
    "output_schema",
    "tool_annotations",
]

#: The key a non-object response is wrapped under in structured content.
RESULT_KEY = "result"


@dataclass(frozen=True)
class McpTool:
    """An MCP tool and the operation it runs."""

    tool: types.Tool
    operation: Operation
    #: The response is not a JSON object and travels as ``{"result": ...}``.
    wrapped: bool


def tool_annotations(effect: str, idempotent: bool) -> types.ToolAnnotations:
    """MCP hints from the table's effect: a read is read-only, a write only adds (history is
    kept), any other effect takes something away and is destructive.

    MCP's ``destructiveHint`` defaults to true, so a write says false explicitly.
    """
    read_only = effect == "read"
    return types.ToolAnnotations(
        read_only_hint=read_only,
        destructive_hint=None if read_only else effect != "write",
        idempotent_hint=idempotent,
        # The world of a zkr tool is the local database, nothing else.
        open_world_hint=False,
    )


def output_schema(response: Any) -> tuple[dict[str, Any], bool]:
    """The JSON schema of *response* as MCP wants it (an object), and whether it was wrapped."""
    schema = TypeAdapter(response).json_schema(mode="serialization", by_alias=True)
    if schema.get("type") == "object":
        return schema, False
    # References point at "#/$defs/...": the definitions stay at the root of the wrapper.
    definitions = schema.pop("$defs", None)
    wrapper: dict[str, Any] = {
        "type": "object",
        "properties": {RESULT_KEY: schema},
        "required": [RESULT_KEY],
    }
    if definitions is not None:
        wrapper["$defs"] = definitions
    return wrapper, True


def mcp_tools() -> dict[str, McpTool]:
    """Every tool of the table, by MCP name, in the table's order."""
    found: dict[str, McpTool] = {}
    for spec in tool_specs():
        operation = OPERATIONS[spec.operation]
        schema, wrapped = output_schema(operation.response)
        tool = types.Tool(
            name=spec.name,
            description=spec.description,
            input_schema=spec.parameters,
            output_schema=schema,
            annotations=tool_annotations(operation.effect, operation.idempotent),
        )
        found[spec.name] = McpTool(tool=tool, operation=operation, wrapped=wrapped)
    return found


def checked_arguments(arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """A tool call's arguments held to the contract's request rules before the table sees them.

    The SDK has already parsed the JSON-RPC message, so the contract's byte budget and its
    refusal of lone surrogates and NaN are applied to the arguments' compact JSON form here.

    :raises LimitExceeded: over the contract's request size.
    :raises RequestParseError: lone surrogates, NaN or Infinity.
    """
    raw = json.dumps(dict(arguments or {}), ensure_ascii=False, separators=(",", ":"))
    if len(raw.encode("utf-8", "surrogatepass")) > MAX_REQUEST_BYTES:
        raise LimitExceeded(f"request exceeds {MAX_REQUEST_BYTES} bytes")
    value: dict[str, Any] = parse_request(raw)
    return value


def as_structured(tool: McpTool, data: Any) -> dict[str, Any]:
    """A call's JSON result as the tool's structured content (wrapped when not an object)."""
    if tool.wrapped:
        return {RESULT_KEY: data}
    if not isinstance(data, dict):
        raise TypeError(f"an unwrapped tool result must be an object, got {type(data).__name__}")
    return data
