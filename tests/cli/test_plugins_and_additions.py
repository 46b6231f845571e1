"""Additions that reach beyond the contract: plugin commands (``zkr_register_commands``),
``zkr plugins``, operations appended to ``OPERATIONS``, and what stays reserved."""

from __future__ import annotations

import inspect
import json
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
import pluggy
import pytest

from tests.cli.conftest import Outcome, remember_payload
from zkr import hookimpl
from zkr.errors import InvalidRequest
from zkr_cli import hookspecs as cli_hookspecs

Run = Callable[..., Outcome]
ROOT = Path(__file__).resolve().parents[2]
CLI_HOOKS = sorted(
    name for name, value in inspect.getmembers(cli_hookspecs, inspect.isfunction)
    if name.startswith("zkr_")
)  # fmt: skip


def test_cli_hooks_are_the_issue_list() -> None:
    assert CLI_HOOKS == ["zkr_register_commands"]


@pytest.mark.parametrize("hook", CLI_HOOKS)
def test_every_cli_hook_is_documented_with_its_full_signature(hook: str) -> None:
    """The same rule tests/core applies to zkr-core's hooks, for the hook zkr-cli specifies."""
    pm = pluggy.PluginManager("zkr")
    pm.add_hookspecs(cli_hookspecs)
    spec = getattr(pm.hook, hook).spec
    assert spec is not None
    heading = f"## {hook}({', '.join(spec.argnames)})"
    assert heading in (ROOT / "docs" / "plugin-hooks.md").read_text(encoding="utf-8").splitlines()
    assert spec.function.__doc__ and ":param" in spec.function.__doc__


@pytest.mark.parametrize("hook", CLI_HOOKS)
def test_every_cli_hook_has_a_test(hook: str) -> None:
    assert callable(globals().get(f"test_hook_{hook}"))


class _GreeterPlugin:
    """A plugin adding ``hello`` (JSON out, options), ``boom`` (a ZkrError) and a ``serve`` that
    must not replace zkr's own."""

    @hookimpl
    def zkr_register_commands(self, cli: click.Group) -> None:
        @cli.command(name="hello")
        @click.option("--name", default="world")
        @click.pass_obj
        def hello(ctx: Any, name: str) -> None:
            with ctx.open_db() as db:
                tables = db.conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            ctx.emit({"hello": name, "db": ctx.db_path, "migrated": tables > 0})

        @cli.command(name="boom")
        def boom() -> None:
            raise InvalidRequest("boom went the plugin")

        @cli.command(name="serve")
        def fake_serve() -> None:
            raise AssertionError("a plugin replaced serve")

        @cli.command(name="search")
        def fake_search() -> None:
            raise AssertionError("a plugin replaced a contract command")


@pytest.fixture
def greeter() -> Iterator[None]:
    from zkr import plugins
    from zkr_cli.cli import add_hookspecs

    add_hookspecs(plugins.pm)
    plugin = _GreeterPlugin()
    plugins.pm.register(plugin, name="test-greeter")
    try:
        yield
    finally:
        plugins.pm.unregister(plugin)


def test_hook_zkr_register_commands(
    greeter: None, zkr_inprocess: Run, db_path: Path, home: Path
) -> None:
    said = zkr_inprocess("--db", str(db_path), "hello", "--name", "Sam").json
    assert said == {"hello": "Sam", "db": str(db_path), "migrated": True}
    # the default database works for plugin commands too
    assert zkr_inprocess("hello").json["db"] == str(home / ".zkr" / "memory.db")
    assert zkr_inprocess("--db", str(db_path), "boom").error == "boom went the plugin"
    assert "No such option" in zkr_inprocess("--db", str(db_path), "hello", "--nope").error


def test_a_passthrough_command_hands_its_arguments_to_the_program(
    zkr_inprocess: Run, db_path: Path
) -> None:
    """``passthrough_command`` (zkr-core's builder of the hook that mcp, postgres, hermes and
    agent-hooks use): every argument goes to ``main`` untouched, ``--db`` added when asked for;
    ``len`` as the program makes its exit status the number of arguments it was given."""
    from zkr import plugins
    from zkr.plugins.passthrough import passthrough_command
    from zkr_cli.cli import add_hookspecs

    add_hookspecs(plugins.pm)
    counting = types.SimpleNamespace(
        zkr_register_commands=passthrough_command("count", "Count.", "builtins:len")
    )
    with_db = types.SimpleNamespace(
        zkr_register_commands=passthrough_command(
            "count-db", "Count.", "builtins:len", pass_db=True
        )
    )
    plugins.pm.register(counting, name="test-count")
    plugins.pm.register(with_db, name="test-count-db")
    try:
        assert zkr_inprocess("count", "a", "--help", "-x").returncode == 3
        assert zkr_inprocess("--db", str(db_path), "count-db", "a").returncode == 3  # --db PATH a
        assert zkr_inprocess("count-db", "--db=elsewhere", "a").returncode == 2
        assert zkr_inprocess("count-db", "--help").returncode == 1
    finally:
        plugins.pm.unregister(counting)
        plugins.pm.unregister(with_db)


def test_plugin_commands_cannot_replace_reserved_names(
    greeter: None, zkr_inprocess: Run, db_path: Path
) -> None:
    request = {"tenant_id": "a", "person_id": "sam", "query": "Acme"}
    assert zkr_inprocess("--db", str(db_path), "search", stdin=request).json["query"] == "Acme"
    assert zkr_inprocess("--db", str(db_path), "serve", stdin=b"").returncode == 0


def test_build_cli_lists_additions_and_plugin_commands(greeter: None) -> None:
    from zkr_cli.cli import build_cli

    assert {"serve", "plugins", "import", "hello", "boom"} <= set(build_cli().commands)
    assert set(build_cli(load_plugins=False).commands) == {"serve", "plugins", "import"}


def test_unknown_commands_still_follow_the_contract_with_plugins_loaded(
    greeter: None, zkr_inprocess: Run, db_path: Path
) -> None:
    assert zkr_inprocess("--db", str(db_path), "goodbye").error == 'unknown command "goodbye"'
    assert db_path.exists()
    other = db_path.with_name("other.db")
    usage = "usage: zkr --db PATH COMMAND (use --help)"
    assert zkr_inprocess("--db", str(other), "goodbye", "x").error == usage
    assert not other.exists()


def test_plugins_command_prints_a_json_list(run: Run, tmp_path: Path) -> None:
    listed = run("plugins", env={"ZKR_LOAD_PLUGINS": ""})
    assert listed.json == []
    assert not (tmp_path / "home" / ".zkr").exists()  # listing plugins opens no database
    # every installed entry point (their load warnings, if any, may go to stderr)
    # every installed entry point (a broken one is reported on stderr, the listing goes on)
    listed = run("plugins", env={"ZKR_LOAD_PLUGINS": None})
    assert listed.returncode == 0
    everything = json.loads(listed.stdout)
    assert isinstance(everything, list)
    for plugin in everything:
        assert {"name", "hooks", "version"} <= set(plugin)


def test_additional_commands_report_click_errors_in_the_envelope(run: Run, db_path: Path) -> None:
    assert "extra argument" in run("--db", str(db_path), "serve", "now").error


def test_operations_appended_to_the_table_are_commands(
    monkeypatch: pytest.MonkeyPatch, zkr_inprocess: Run, db_path: Path
) -> None:
    from zkr import models as m
    from zkr import operations

    extra = operations.Operation(
        "where",
        operations.OPERATIONS["locator"].handler,
        m.LocatorRequest,
        m.LocatorInput | None,
        "locate evidence (test addition)",
        "Locate an evidence quote (an operation added by a test).",
        "read",
    )
    monkeypatch.setitem(operations.OPERATIONS, "where", extra)
    stored = zkr_inprocess("--db", str(db_path), "remember", stdin=remember_payload()).json
    request = {"tenant_id": "a", "person_id": "sam", "evidence_id": stored["evidence_id"]}
    assert zkr_inprocess("--db", str(db_path), "where", stdin=request).stdout == b"null\n"
    assert zkr_inprocess("--db", str(db_path), "where", stdin=b"{").error
    assert "  where        locate evidence (test addition)\n" in zkr_inprocess().stdout.decode()
    # and through serve
    line = json.dumps({"command": "where", "request": request}).encode() + b"\n"
    assert zkr_inprocess("--db", str(db_path), "serve", stdin=line).stdout == b"null\n"
