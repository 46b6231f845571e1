"""Acceptance 2: the tools a client lists are the table's — schemas, annotations, outputs.

Everything is read back through the SDK's client (what an MCP host really sees) and compared with
what ``zkr.tools`` and the operation table generate; nothing here names a tool.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import anyio
import pytest
from jsonschema import Draft202012Validator
from mcp import types
from pydantic import TypeAdapter

from tests.mcp.conftest import in_process, settings_for
from tests.tool_drift import assert_offered_tools_match_table
from zkr import operations
from zkr.tools import SCOPE_FIELDS, tool_specs
from zkr_mcp.tools import RESULT_KEY, mcp_tools


def _listed(db: Path) -> list[types.Tool]:
    async def main() -> list[types.Tool]:
        async with in_process(settings_for(db)) as (_, client):
            return (await client.list_tools()).tools

    return anyio.run(main)


def _keys(node: Any) -> set[str]:
    if isinstance(node, dict):
        return set(node) | {k for v in node.values() for k in _keys(v)}
    if isinstance(node, list):
        return {k for v in node for k in _keys(v)}
    return set()


def test_listed_input_schemas_are_the_tables(tmp_path: Path) -> None:
    listed = _listed(tmp_path / "m.db")
    assert_offered_tools_match_table({tool.name: tool.input_schema for tool in listed})
    specs = {spec.name: spec for spec in tool_specs()}
    for tool in listed:
        assert tool.description == specs[tool.name].description
        Draft202012Validator.check_schema(tool.input_schema)
        # The scope is the server's: no schema lets a model name it, at any depth.
        assert not _keys(tool.input_schema["properties"]) & set(SCOPE_FIELDS)


def test_annotations_follow_the_rows_effect(tmp_path: Path) -> None:
    for tool in _listed(tmp_path / "m.db"):
        spec = next(spec for spec in tool_specs() if spec.name == tool.name)
        hints = tool.annotations
        assert hints is not None
        assert hints.read_only_hint is (spec.effect == "read")
        assert hints.idempotent_hint is spec.idempotent
        if spec.effect != "read":
            # MCP's default is "destructive": a write that only adds must say it is not.
            assert hints.destructive_hint is (spec.effect != "write")


def test_output_schemas_are_the_response_models(tmp_path: Path) -> None:
    for tool in _listed(tmp_path / "m.db"):
        spec = next(spec for spec in tool_specs() if spec.name == tool.name)
        response = operations.OPERATIONS[spec.operation].response
        schema = TypeAdapter(response).json_schema(mode="serialization", by_alias=True)
        assert tool.output_schema is not None
        Draft202012Validator.check_schema(tool.output_schema)
        assert tool.output_schema["type"] == "object"
        if schema.get("type") == "object":
            assert tool.output_schema == schema
        else:
            # A non-object response travels wrapped; its definitions sit at the wrapper's root.
            rebuilt = dict(tool.output_schema["properties"][RESULT_KEY])
            if "$defs" in tool.output_schema:
                rebuilt["$defs"] = tool.output_schema["$defs"]
            assert rebuilt == schema


def test_a_row_added_to_the_table_is_offered_with_no_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    search = operations.OPERATIONS["search"]
    assert search.tool is not None
    row = dataclasses.replace(
        search, name="recall_again", tool=dataclasses.replace(search.tool, name="zkr_recall_again")
    )
    monkeypatch.setitem(operations.OPERATIONS, row.name, row)
    assert "zkr_recall_again" in mcp_tools()
    listed = {tool.name: tool for tool in _listed(tmp_path / "m.db")}
    assert listed["zkr_recall_again"].input_schema == listed[search.tool.name].input_schema
    assert_offered_tools_match_table({name: tool.input_schema for name, tool in listed.items()})
