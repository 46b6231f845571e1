"""The drift check every host shares: the tools a host offers are the table's, to the argument.

``assert_offered_tools_match_table(offered)`` takes what a host really shows a model (tool name ->
argument JSON schema, read back from the host, not from the host's own code) and compares it with
``zkr.tools.tool_specs()``: the same tools, in table order, with equal schemas. It imports only
zkr-core, so any host's isolated test run can use it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from zkr.tools import tool_specs

__all__ = ["assert_offered_tools_match_table", "table_tools"]


def table_tools() -> dict[str, dict[str, Any]]:
    """Tool name -> argument schema, as generated from the operation table."""
    return {spec.name: spec.parameters for spec in tool_specs()}


def assert_offered_tools_match_table(offered: Mapping[str, Mapping[str, Any]]) -> None:
    expected = table_tools()
    assert list(offered) == list(expected), "the host offers other tools than the table"
    for name, schema in expected.items():
        got = json.dumps(offered[name], sort_keys=True, indent=1)
        want = json.dumps(schema, sort_keys=True, indent=1)
        assert got == want, f"{name}: the offered schema drifted from the table's"
