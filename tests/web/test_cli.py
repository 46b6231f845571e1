"""The ``zkr-web`` command: its scope check, its start-up line, its default address, ``zkr web``."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from zkr_web.cli import main


def _exe() -> str:
    found = shutil.which("zkr-web", path=str(Path(sys.executable).parent)) or shutil.which(
        "zkr-web"
    )
    assert found, "the zkr-web console script is installed with the distribution"
    return found


def test_without_a_scope_it_refuses_to_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ZKR_TENANT", "ZKR_PERSON", "ZKR_TENANT_ID", "ZKR_PERSON_ID"):
        monkeypatch.delenv(name, raising=False)
    assert main(["--db", str(tmp_path / "m.db"), "--tenant", "home"]) == 2
    assert "--tenant T --person P" in capsys.readouterr().err
    short = tmp_path / "short-token"
    short.write_text("short\n")
    scope = ["--db", str(tmp_path / "m.db"), "--tenant", "h", "--person", "p"]
    assert main([*scope, "--token-file", str(short)]) == 2
    assert not (tmp_path / "m.db").exists()


def test_it_binds_loopback_prints_a_token_address_and_guards_it(tmp_path: Path) -> None:
    env = {**os.environ, "ZKR_TENANT": "home", "ZKR_PERSON": "ana"}
    env.pop("ZKR_WEB_TOKEN", None)
    process = subprocess.Popen(
        [_exe(), "--db", str(tmp_path / "m.db"), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline(), process.stdout.readline()]
        assert lines[0].startswith("zkr-web: serving home/ana from ")
        found = re.fullmatch(
            r"zkr-web: open http://127\.0\.0\.1:(\d+)/\?token=(\S{40,})\n", lines[1]
        )
        assert found, lines
        base = f"http://127.0.0.1:{found.group(1)}"
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(base + "/", timeout=10)
        assert refused.value.code == 401
        request = urllib.request.Request(
            base + "/profile", headers={"Authorization": f"Bearer {found.group(2)}"}
        )
        with urllib.request.urlopen(request, timeout=10) as reply:
            assert reply.status == 200 and "home / ana" in reply.read().decode()
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_zkr_web_is_a_zkr_command_through_the_plugin_hook() -> None:
    click = pytest.importorskip("click")
    from zkr_web import zkr_plugin

    group = click.Group(name="zkr")
    zkr_plugin.zkr_register_commands(cli=group)
    command = group.commands["web"]
    assert {param.name for param in command.params} == {
        "tenant",
        "person",
        "host",
        "port",
        "token_file",
        "token",
        "embedder",
    }
    defaults = {param.name: param.default for param in command.params}
    assert defaults["host"] == "127.0.0.1"


def test_the_entry_point_names_the_plugin_module() -> None:
    from importlib.metadata import entry_points

    (web,) = [ep for ep in entry_points(group="zkr") if ep.name == "web"]
    assert web.value == "zkr_web.zkr_plugin"


def test_zkr_web_runs_through_the_zkr_command(tmp_path: Path) -> None:
    pytest.importorskip("zkr_cli")
    zkr = shutil.which("zkr", path=str(Path(sys.executable).parent)) or shutil.which("zkr")
    assert zkr
    env = {**os.environ, "ZKR_TENANT": "home", "ZKR_PERSON": "ana", "ZKR_WEB_TOKEN": "t" * 24}
    process = subprocess.Popen(
        [zkr, "--db", str(tmp_path / "m.db"), "web", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == f"zkr-web: serving home/ana from {tmp_path / 'm.db'}\n"
        assert process.stdout.readline().endswith(f"/?token={'t' * 24}\n")
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_the_old_scope_variables_still_work_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ZKR_TENANT_ID/ZKR_PERSON_ID were zkr-web's spelling before zkr.settings: still read, with a
    # warning naming the shared one. (The refused short token stops it before serving.)
    for name in ("ZKR_TENANT", "ZKR_PERSON"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ZKR_TENANT_ID", "home")
    monkeypatch.setenv("ZKR_PERSON_ID", "ana")
    short = tmp_path / "short-token"
    short.write_text("short\n")
    with pytest.warns(FutureWarning, match="ZKR_TENANT_ID is deprecated: set ZKR_TENANT"):
        code = main(["--db", str(tmp_path / "m.db"), "--token-file", str(short)])
    assert code == 2  # got past the scope check: the scope came from the old variables
