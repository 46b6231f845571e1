"""The shipped plugin files, the install command and the host registration."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zkr_openclaw_bridge import __main__ as cli
from zkr_openclaw_bridge.host import OpenClawHost
from zkr_openclaw_bridge.install import PLUGIN_FILES, install, plugin_dir


def test_install_copies_the_plugin_and_prints_the_config_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ZKR_DB", "ZKR_TENANT", "ZKR_PERSON", "ZKR_TENANT_ID", "ZKR_PERSON_ID"):
        monkeypatch.delenv(name, raising=False)
    target = tmp_path / "plugins" / "zkr"
    assert (
        cli.main(
            [
                "install",
                str(target),
                "--command",
                "/opt/zkr/bin/zkr",
                "--database",
                str(tmp_path / "zkr.db"),
            ]
        )
        == 0
    )
    assert sorted(p.name for p in target.iterdir()) == sorted(PLUGIN_FILES)
    for name in PLUGIN_FILES:
        assert (target / name).read_bytes() == (plugin_dir() / name).read_bytes()
    out = capsys.readouterr().out
    assert f"openclaw plugins install {target}" in out
    assert f"openclaw config set plugins.load.paths '[\"{target}\"]' --strict-json" in out
    assert "openclaw config set plugins.slots.memory zkr" in out
    entry = json.dumps(
        {"command": "/opt/zkr/bin/zkr", "database": str(tmp_path / "zkr.db")}, separators=(",", ":")
    )
    assert f"openclaw config set plugins.entries.zkr.config '{entry}' --strict-json" in out
    # Auto-capture's hook (agent_end) runs for a non-bundled plugin only with this permission.
    assert "openclaw config set plugins.entries.zkr.hooks.allowConversationAccess true" in out


def test_install_takes_the_database_and_scope_from_zkr_settings(tmp_path: Path) -> None:
    environ = {"ZKR_DB": str(tmp_path / "shared.db"), "ZKR_TENANT": "home", "ZKR_PERSON": "ada"}
    config = install(tmp_path / "p", command="/opt/zkr/bin/zkr", environ=environ).config
    assert config == {
        "command": "/opt/zkr/bin/zkr",
        "database": str(tmp_path / "shared.db"),
        "tenant": "home",
        "person": "ada",
    }
    # What the command line names beats the environment.
    given = install(
        tmp_path / "q", command="/z", tenant="work", person="bob", environ=environ
    ).config
    assert (given["tenant"], given["person"]) == ("work", "bob")


def test_install_defaults_to_the_zkr_beside_this_python(tmp_path: Path) -> None:
    installation = install(tmp_path / "p", environ={})
    command = installation.config.get("command")
    assert command is not None and Path(command).is_absolute() and Path(command).name == "zkr"
    assert "database" not in installation.config
    assert "tenant" not in installation.config and "person" not in installation.config


def test_package_json_is_an_esm_openclaw_extension_without_runtime_dependencies() -> None:
    package = json.loads((plugin_dir() / "package.json").read_text("utf-8"))
    assert package["type"] == "module"
    assert package["openclaw"]["extensions"] == ["./index.js"]
    assert "dependencies" not in package
    assert package["devDependencies"]["openclaw"] == "2026.7.1-2"
    assert sorted(package["files"]) == sorted(set(PLUGIN_FILES) - {"package.json"})


def test_manifest_owns_the_memory_slot_with_the_documented_config() -> None:
    manifest = json.loads((plugin_dir() / "openclaw.plugin.json").read_text("utf-8"))
    assert (manifest["id"], manifest["kind"]) == ("zkr", "memory")
    assert manifest["activation"] == {"onStartup": True}
    schema = manifest["configSchema"]
    assert schema["additionalProperties"] is False
    defaults = {k: v.get("default") for k, v in schema["properties"].items()}
    assert defaults["command"] == "zkr"
    assert defaults["database"] == "~/.zkr/memory.db"
    assert defaults["tenant"] == "openclaw"
    assert defaults["person"] is None  # the active agent id


def test_host_health_reports_a_complete_plugin() -> None:
    health = OpenClawHost().health()
    assert (OpenClawHost.name, health.ok) == ("openclaw", True), health.detail
