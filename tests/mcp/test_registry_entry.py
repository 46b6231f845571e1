"""zkr-mcp's MCP Registry entry (issue 25): ``zkr-mcp/server.json`` validates against the
registry's schema, equals what the package generates, and the README carries the ownership
marker the registry looks for on PyPI."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from zkr.version import __version__
from zkr_mcp.registry import MCP_NAME_MARKER, SCHEMA_URL, render, server_entry

ROOT = Path(__file__).resolve().parents[2]
SERVER_JSON = ROOT / "zkr-mcp" / "server.json"
SCHEMA = json.loads((Path(__file__).with_name("registry") / "server.schema.json").read_text())

pytestmark = pytest.mark.skipif(not SERVER_JSON.exists(), reason="needs the checkout's zkr-mcp")


def _errors(entry: dict[str, Any]) -> list[str]:
    validator = jsonschema.Draft7Validator(SCHEMA, format_checker=jsonschema.FormatChecker())
    return [error.message for error in validator.iter_errors(entry)]


def test_server_json_is_valid_against_the_registry_schema() -> None:
    entry = json.loads(SERVER_JSON.read_text("utf-8"))
    assert _errors(entry) == []
    assert entry["$schema"] == SCHEMA_URL == SCHEMA["$id"]


def test_server_json_is_what_the_package_generates() -> None:
    # `python -m zkr_mcp.registry --write` after a change of version or settings.
    assert SERVER_JSON.read_text("utf-8") == render()
    entry = server_entry()
    assert entry["version"] == entry["packages"][0]["version"] == __version__
    assert entry["packages"][0]["identifier"] == "zkr-mcp"


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("description",), "x" * 101),  # the registry caps it at 100 characters
        (("name",), "zkr-mcp"),  # a namespace/name pair is required
        (("packages", 0, "version"), "latest"),  # one specific version
        (("packages", 0, "transport"), {"type": "carrier-pigeon"}),
    ],
)
def test_the_schema_refuses_a_broken_entry(path: tuple[str | int, ...], value: object) -> None:
    # The check can fail: each of these edits alone makes the entry invalid.
    entry = copy.deepcopy(server_entry())
    target: Any = entry
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    assert _errors(entry)


def test_the_readme_names_the_server_for_the_registry() -> None:
    # The registry verifies PyPI ownership by finding this line in the package description.
    readme = (ROOT / "zkr-mcp" / "README.md").read_text("utf-8")
    assert MCP_NAME_MARKER in readme
