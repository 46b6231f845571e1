"""The tools every host offers a model, projected from the operation table.

Hermes, OpenClaw and MCP show a model the same tools with the same arguments and limits because
they all come from here: :func:`tool_specs` lists them, :func:`tool_schema` gives an operation's
argument schema (its request model's JSON schema without the scope, with the host-filled fields
optional and the tool's limits), and :func:`tool_request` turns a model's arguments into the
operation's request, filling the scope, "now" and the defaults. A host never writes a schema of
its own for these tools.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from zkr.errors import RequestParseError
from zkr.operations import OPERATIONS, Effect, Operation, validate
from zkr.store.database import Database

__all__ = ["SCOPE_FIELDS", "ToolSpec", "tool_request", "tool_schema", "tool_specs"]

#: Filled by the host from its configuration, never by a model.
SCOPE_FIELDS = ("tenant_id", "person_id")


@dataclass(frozen=True)
class ToolSpec:
    """One tool as a host registers it."""

    name: str
    operation: str
    description: str
    parameters: dict[str, Any]
    effect: Effect
    idempotent: bool


def tool_specs() -> list[ToolSpec]:
    """Every operation that hosts offer as a tool, in table order."""
    return [
        ToolSpec(
            name=op.tool.name,
            operation=op.name,
            description=op.description,
            parameters=tool_schema(op),
            effect=op.effect,
            idempotent=op.idempotent,
        )
        for op in OPERATIONS.values()
        if op.tool is not None
    ]


def operation_for_tool(name: str) -> Operation:
    """The operation behind tool *name*.

    :raises KeyError: no tool of that name.
    """
    for op in OPERATIONS.values():
        if op.tool is not None and op.tool.name == name:
            return op
    raise KeyError(name)


def _inline(node: Any, definitions: Mapping[str, Any]) -> Any:
    """The schema with every ``$ref`` replaced by its definition (tool schemas must stand alone)."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            target = _inline(definitions[ref.rsplit("/", 1)[-1]], definitions)
            return {
                **target,
                **{k: _inline(v, definitions) for k, v in node.items() if k != "$ref"},
            }
        return {k: _inline(v, definitions) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [_inline(item, definitions) for item in node]
    return node


def _relax(schema: dict[str, Any], path: list[str]) -> None:
    """Make the field at *path* optional (the host fills it when the model leaves it out)."""
    head, rest = path[0], path[1:]
    if rest:
        child = schema.get("properties", {}).get(head)
        if child is None:
            return
        for option in child.get("anyOf", [child]):
            if option.get("type") == "object":
                _relax(option, rest)
        return
    required = schema.get("required")
    if required and head in required:
        required.remove(head)
        if not required:
            del schema["required"]


def _strip_titles(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip_titles(v) for k, v in node.items() if k != "title"}
    if isinstance(node, list):
        return [_strip_titles(item) for item in node]
    return node


def tool_schema(operation: Operation) -> dict[str, Any]:
    """The JSON schema of the arguments a model gives *operation*'s tool."""
    if operation.tool is None:
        raise ValueError(f"operation {operation.name!r} is not offered as a tool")
    full = operation.request.model_json_schema(by_alias=True)
    schema: dict[str, Any] = _strip_titles(_inline(full, full.get("$defs", {})))
    for scope_field in SCOPE_FIELDS:
        schema["properties"].pop(scope_field, None)
        _relax(schema, [scope_field])
    for dotted in (*operation.tool.now_fields, *operation.tool.defaults):
        _relax(schema, dotted.split("."))
    for name, default in operation.tool.defaults.items():
        # What the host fills is the tool's default, not the request model's.
        if name in schema["properties"]:
            schema["properties"][name]["default"] = copy.deepcopy(default)
    for name, maximum in operation.tool.limits.items():
        schema["properties"][name]["maximum"] = maximum
    schema["additionalProperties"] = False
    return schema


def _fill(payload: dict[str, Any], path: list[str], value: Any) -> None:
    """Set *path* to *value* unless the model gave it (or gave no parent object for it)."""
    head, rest = path[0], path[1:]
    if rest:
        child = payload.get(head)
        if isinstance(child, dict):
            payload[head] = child = dict(child)
            _fill(child, rest, value)
        return
    if payload.get(head) is None:
        payload[head] = value


def tool_request(
    operation: Operation,
    arguments: Any,
    *,
    tenant_id: str,
    person_id: str,
    now: int,
    db: Database | None = None,
) -> BaseModel:
    """The request a model's *arguments* make for *operation*, in the host's scope.

    With *db*, a "now" the host fills is raised where the projection's ``now_floor`` says the
    stored records need a later time (see :class:`~zkr.operations.ToolProjection`).

    :raises RequestParseError: the arguments are not an object, name the scope, exceed the tool's
        limits or do not fit the request model (the contract's messages).
    """
    if operation.tool is None:
        raise ValueError(f"operation {operation.name!r} is not offered as a tool")
    if not isinstance(arguments, dict):
        raise RequestParseError(
            f"invalid type: expected a JSON object for `{operation.name}` request"
        )
    # The schema allows no other arguments (additionalProperties: false): a model that names the
    # scope, or a field the tool does not have, is told so instead of being silently ignored.
    fields = operation.request.model_fields
    known = {info.alias or name for name, info in fields.items()} - set(SCOPE_FIELDS)
    for name in arguments:
        if name not in known:
            raise RequestParseError(f"unknown field `{name}`")
    payload = copy.deepcopy(arguments)
    for name, default in operation.tool.defaults.items():
        _fill(payload, name.split("."), copy.deepcopy(default))
    payload["tenant_id"], payload["person_id"] = tenant_id, person_id
    floors: Mapping[str, int] = {}
    if db is not None and operation.tool.now_floor is not None:
        floors = operation.tool.now_floor(db, payload)
    for dotted in operation.tool.now_fields:
        _fill(payload, dotted.split("."), max(now, floors.get(dotted, now)))
    request = validate(operation, payload)
    for name, maximum in operation.tool.limits.items():
        value = getattr(request, name, None)
        if isinstance(value, int) and value > maximum:
            raise RequestParseError(f"invalid value for `{name}`: must be at most {maximum}")
    return request
