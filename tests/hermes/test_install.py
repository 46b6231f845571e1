"""The shim installer, the zkr-hermes command and the zkr host plugin (§6 items 1 and 10)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from zkr_hermes import zkr_plugin
from zkr_hermes.__main__ import main
from zkr_hermes.host import HermesHost
from zkr_hermes.install import InstallError, install
from zkr_hermes.provider import ZkrMemoryProvider

PACKAGE = Path(importlib.util.find_spec("zkr_hermes").origin).parent  # type: ignore[union-attr, arg-type]


def test_install_writes_exactly_the_two_shim_files(hermes_home: Path) -> None:
    target = install(hermes_home)
    assert target == hermes_home / "plugins" / "zkr"
    assert sorted(p.name for p in target.iterdir()) == ["__init__.py", "plugin.yaml"]
    yaml = (target / "plugin.yaml").read_text()
    assert "name: zkr\n" in yaml and "kind: exclusive\n" in yaml
    init = (target / "__init__.py").read_text()
    # Hermes' loader only considers a folder whose __init__.py mentions one of these (first 8 KiB).
    assert "register_memory_provider" in init[:8192] and "MemoryProvider" in init[:8192]
    assert "import zkr_hermes" in init or "from zkr_hermes" in init


def test_shim_registers_a_fresh_provider_per_load(hermes_home: Path) -> None:
    target = install(hermes_home)
    spec = importlib.util.spec_from_file_location("_shim_under_test", target / "__init__.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    class Collector:
        def __init__(self) -> None:
            self.providers: list[object] = []

        def register_memory_provider(self, provider: object) -> None:
            self.providers.append(provider)

    first, second = Collector(), Collector()
    module.register(first)
    module.register(second)
    assert [type(p) for p in first.providers + second.providers] == [ZkrMemoryProvider] * 2
    assert first.providers[0] is not second.providers[0]


def test_install_refuses_foreign_files_unless_forced(hermes_home: Path) -> None:
    """A copied old plugin (with its test_plugin.py) would be executed by Hermes' loader."""
    folder = hermes_home / "plugins" / "zkr"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("# old plugin")
    (folder / "test_plugin.py").write_text("import sys; sys.modules['agent'] = None")
    with pytest.raises(InstallError, match=r"test_plugin\.py"):
        install(hermes_home)
    assert (folder / "test_plugin.py").exists()
    install(hermes_home, force=True)
    assert sorted(p.name for p in folder.iterdir()) == ["__init__.py", "plugin.yaml"]
    install(hermes_home)  # reinstalling over our own files needs no force


def test_package_ships_no_test_modules() -> None:
    assert not [p.name for p in PACKAGE.rglob("*.py") if p.name.startswith("test")]


def test_command_prints_the_config_line(
    hermes_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["install", "--hermes-home", str(hermes_home)]) == 0
    out = capsys.readouterr().out
    assert "memory:\n  provider: zkr" in out
    assert "hermes config set memory.provider zkr" in out
    assert (hermes_home / "plugins" / "zkr" / "plugin.yaml").exists()


def test_command_reports_refusal(hermes_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (hermes_home / "plugins" / "zkr").mkdir(parents=True)
    (hermes_home / "plugins" / "zkr" / "extra.py").write_text("")
    assert main(["install", "--hermes-home", str(hermes_home)]) == 1
    assert "--force" in capsys.readouterr().err


def test_status_command(hermes_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    install(hermes_home)
    assert main(["status", "--hermes-home", str(hermes_home)]) == 0
    out = capsys.readouterr().out
    assert '"shim_installed": true' in out and str(hermes_home / "zkr.db") in out


def test_hook_registers_the_hermes_host(hermes_home: Path) -> None:
    registered: list[object] = []
    zkr_plugin.zkr_register_hosts(registered.append)
    (host,) = registered
    assert isinstance(host, HermesHost) and host.name == "hermes"
    assert "zkr-hermes install" in host.install
    assert host.health().ok is False  # nothing installed yet
    install(hermes_home)
    health = host.health()
    if "hermes_cli" in sys.modules or importlib.util.find_spec("agent") is not None:
        assert health.ok
    else:
        assert "hermes-agent is not importable" in health.detail


def test_zkr_plugins_lists_the_host_through_the_entry_point() -> None:
    # In a child process: loading entry points changes the process-wide plugin manager.
    code = (
        "from zkr import plugins; plugins.load_plugins(entry_points=True); "
        "print('hermes' in plugins.get_hosts(), "
        "any(e['name'] == 'hermes' for e in plugins.get_plugins()))"
    )
    env = {
        k: v for k, v in os.environ.items() if k not in ("ZKR_LOAD_PLUGINS", "ZKR_DISABLE_PLUGINS")
    }
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.split() == ["True", "True"]
