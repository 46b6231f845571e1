"""``zkr openclaw-tool`` / ``zkr openclaw-serve`` and the plugin's hook implementations."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import click
import pluggy
import pytest
from click.testing import CliRunner

from zkr.plugins import hookspecs
from zkr_cli import hookspecs as cli_hookspecs
from zkr_cli.cli import ZkrContext
from zkr_openclaw_bridge import zkr_plugin


@pytest.fixture
def group() -> click.Group:
    pm = pluggy.PluginManager("zkr")
    pm.add_hookspecs(hookspecs)
    pm.add_hookspecs(cli_hookspecs)
    pm.register(zkr_plugin)
    cli = click.Group(name="zkr")
    pm.hook.zkr_register_commands(cli=cli)
    return cli


def _remember(tenant: str = "openclaw", person: str = "main") -> dict[str, Any]:
    return {
        "tenant_id": tenant,
        "person_id": person,
        "kind": "conversation",
        "text": "The launch is on Friday",
        "captured_at": 10,
        "recorded_at": 10,
    }


def test_hook_zkr_register_hosts_registers_openclaw() -> None:
    pm = pluggy.PluginManager("zkr")
    pm.add_hookspecs(hookspecs)
    pm.register(zkr_plugin)
    hosts: list[Any] = []
    pm.hook.zkr_register_hosts(register=hosts.append)
    assert [host.name for host in hosts] == ["openclaw"]


def test_hook_zkr_register_commands_adds_both_commands(group: click.Group) -> None:
    assert {"openclaw-tool", "openclaw-serve"} <= set(group.commands)


def test_openclaw_tool_answers_one_call_from_stdin(group: click.Group, tmp_path: Path) -> None:
    db_path = str(tmp_path / "m.db")
    runner = CliRunner()
    call = {
        "tenant_id": "openclaw",
        "person_id": "main",
        "tool": "zkr_store",
        "args": {k: v for k, v in _remember().items() if k not in ("tenant_id", "person_id")},
    }
    stored = runner.invoke(
        group, ["openclaw-tool"], input=json.dumps(call), obj=ZkrContext(db_path)
    )
    assert stored.exit_code == 0, stored.output
    assert set(json.loads(stored.output)["details"]) == {"claim_id", "evidence_id", "source_id"}
    search = {**call, "tool": "memory_search", "args": {"query": "launch"}}
    found = runner.invoke(
        group, ["openclaw-tool"], input=json.dumps(search), obj=ZkrContext(db_path)
    )
    assert json.loads(found.output)["details"]["results"][0]["snippet"] == "The launch is on Friday"


def test_openclaw_serve_answers_contract_commands_and_tool_calls(
    group: click.Group, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [
        {"id": 1, "command": "remember", "request": _remember()},
        {
            "id": 2,
            "command": "openclaw-tool",
            "request": {
                "tenant_id": "openclaw",
                "person_id": "main",
                "tool": "memory_search",
                "args": {"query": "launch"},
            },
        },
        {
            "id": 3,
            "command": "openclaw-tool",
            "request": {
                "tenant_id": "openclaw",
                "person_id": "main",
                "tool": "memory_search",
                "args": {"__proto__": {}},
            },
        },
        {"id": 4, "command": "openclaw-tool", "request": {"tool": "memory_search"}},
    ]
    stdin = io.BytesIO("".join(json.dumps(line) + "\n" for line in lines).encode())
    stdout = io.BytesIO()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(stdin))
    monkeypatch.setattr("sys.stdout", io.TextIOWrapper(stdout))
    result = group.main(
        ["openclaw-serve"], standalone_mode=False, obj=ZkrContext(str(tmp_path / "m.db"))
    )
    assert result == 0
    answers = [json.loads(line) for line in stdout.getvalue().decode().splitlines()]
    assert [a["id"] for a in answers] == [1, 2, 3, 4]
    assert (
        answers[1]["result"]["details"]["results"][0]["citation"]
        == answers[0]["result"]["evidence_id"]
    )
    assert answers[2]["result"] == {"tool_error": "unknown field `__proto__`"}
    assert answers[3] == {"id": 4, "error": "missing field `tenant_id`", "code": "parse_error"}
