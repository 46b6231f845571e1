"""The plugin's JSON Schemas are valid Draft 2020-12 schemas.

OpenClaw hands the tool ``parameters`` to the model provider and checks ``configSchema`` with its
own validator; a schema that is not a schema (a misspelt keyword type, ``required: "x"``) would
only show up there. ``check_schema`` validates each against the 2020-12 metaschema.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from zkr_openclaw_bridge.install import plugin_dir

TOOLS: dict[str, Any] = json.loads((plugin_dir() / "tools.json").read_text(encoding="utf-8"))
MANIFEST: dict[str, Any] = json.loads(
    (plugin_dir() / "openclaw.plugin.json").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_tool_parameters_are_a_draft_2020_12_schema(name: str) -> None:
    parameters = TOOLS[name]["parameters"]
    Draft202012Validator.check_schema(parameters)
    # OpenClaw's tools take an object of named arguments.
    assert parameters["type"] == "object"
    assert parameters["additionalProperties"] is False
    assert set(parameters.get("required", [])) <= set(parameters["properties"])


def test_every_declared_tool_has_parameters() -> None:
    assert sorted(TOOLS) == sorted(MANIFEST["contracts"]["tools"])


def test_config_schema_is_a_draft_2020_12_schema() -> None:
    schema = MANIFEST["configSchema"]
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    # The documented defaults are valid values, and unknown keys are refused.
    defaults = {
        key: prop["default"] for key, prop in schema["properties"].items() if "default" in prop
    }
    assert validator.is_valid(defaults)
    assert validator.is_valid({})
    assert not validator.is_valid({"bogus": True})
    assert not validator.is_valid({"timeoutMs": 0})


def test_check_schema_refuses_a_broken_schema() -> None:
    # The check above can fail: a schema with a wrong keyword type is refused.
    with pytest.raises(SchemaError):
        Draft202012Validator.check_schema({"type": "object", "required": "query"})
