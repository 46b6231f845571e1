"""The bundled Claude Code plugin, checked by Claude Code's own validator (``claude plugin validate
--strict``) from the real ``@anthropic-ai/claude-code`` package; ``nox -s agent_hooks`` installs it.
It runs without an account or network. Elsewhere the validator test skips."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from zkr.version import __version__
from zkr_agent_hooks.__main__ import plugin_dir
from zkr_agent_hooks.codex import EVENTS as CODEX_EVENTS
from zkr_agent_hooks.events import CAPTURE_EVENTS, RECALL_EVENTS


def _claude() -> str:
    found = os.environ.get("ZKR_CLAUDE_BIN") or shutil.which("claude")
    if found:
        return found
    if os.environ.get("ZKR_REQUIRE_CLAUDE"):
        pytest.fail("ZKR_REQUIRE_CLAUDE is set but no claude (set ZKR_CLAUDE_BIN)")
    pytest.skip("Claude Code is not installed (nox -s agent_hooks installs it)")


def test_claude_codes_validator_accepts_the_plugin_strictly(tmp_path: Path) -> None:
    claude = _claude()
    done = subprocess.run(
        [claude, "plugin", "validate", "--strict", "--json", str(plugin_dir())],
        capture_output=True,
        timeout=120,
        check=False,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    report = json.loads(done.stdout)
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
    assert report["success"] is True and report["strict"] is True
    assert report["manifest"]["errors"] == [] and report["manifest"]["warnings"] == []
    hooks = {(h["event"], h["command"]) for h in report["provides"]["hooks"]}
    command = "zkr-agent-hooks run --host claude-code"
    assert hooks == {
        (event, command)
        for event in ("SessionStart", "UserPromptSubmit", "PreCompact", "SessionEnd")
    }
    servers = report["provides"]["mcpServers"]
    assert [s["name"] for s in servers] == ["zkr"]


def test_the_plugin_declares_the_events_the_hook_handles_and_the_release_version() -> None:
    root = plugin_dir()
    manifest = json.loads((root / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
    assert manifest["version"] == __version__
    hooks = json.loads((root / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    assert set(hooks) <= RECALL_EVENTS | CAPTURE_EVENTS
    assert set(CODEX_EVENTS) <= RECALL_EVENTS | CAPTURE_EVENTS
    mcp = json.loads((root / ".mcp.json").read_text(encoding="utf-8"))
    assert mcp == {"mcpServers": {"zkr": {"command": "zkr-agent-hooks", "args": ["mcp"]}}}
