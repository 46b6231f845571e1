"""Contract §2.1 argument rules, the help text layout, and the additions around them
(``--version``, the default database)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.conftest import Outcome

Run = Callable[..., Outcome]
USAGE = "usage: zkr --db PATH COMMAND (use --help)"
CONTRACT_COMMANDS = [
    "remember",
    "locator",
    "search",
    "get",
    "correct",
    "link",
    "delete",
    "profile",
    "profiles",
    "review",
    "reviews",
    "projections",
    "embed",
    "export",
]


def _help_ok(outcome: Outcome) -> str:
    assert outcome.returncode == 0
    assert outcome.stderr == b""
    return outcome.stdout.decode("utf-8")


def test_help_text_layout(run: Run) -> None:
    text = _help_ok(run())
    assert text.endswith("\n") and not text.endswith("\n\n")
    lines = text.splitlines()
    assert lines[0] == "zkr --db PATH COMMAND"
    assert lines[1] == ""
    assert "one JSON object from stdin" in lines[2] and "JSON to stdout" in lines[2]
    commands = lines[3 : lines.index("", 3)]
    names = [line.split()[0] for line in commands]
    # The contract's commands first, in its order; `help` last; additions in between.
    assert names[: len(CONTRACT_COMMANDS)] == CONTRACT_COMMANDS
    assert names[-1] == "help"
    assert {"serve", "plugins"} <= set(names)
    for line, name in zip(commands, names, strict=True):
        assert line.startswith("  " + name + " ")
        if len(name) < 13:
            # two-space indent, name padded to a 13-character column, then the description
            assert line[2:15] == name.ljust(13)
            assert line[15] != " " and line[15:].strip()
    # Additions after the list: zkr's options, then every shared setting's variable.
    rest = lines[len(commands) + 3 :]
    assert rest[:2] == ["", "Options:"]
    assert any(line.split()[0] == "--db" for line in rest[2:])
    from zkr.settings import SETTINGS

    variables = {line.split()[0] for line in rest if line.startswith("  ZKR_")}
    assert variables == {setting.env for setting in SETTINGS.values()}


def test_help_lists_every_installed_plugin_command() -> None:
    # zkr mcp, zkr web, ... are listed from their distributions' metadata, not by loading them;
    # the listed names are exactly the commands the installed plugins' hooks add.
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "ZKR_LOAD_PLUGINS"}
    helped = subprocess.run(
        [sys.executable, "-m", "zkr_cli", "--help"], capture_output=True, env=env, check=True
    )
    listed = {line.split()[0] for line in helped.stdout.decode().splitlines() if line[:2] == "  "}
    built = subprocess.run(
        [sys.executable, "-c", "from zkr_cli.cli import build_cli; print(*build_cli().commands)"],
        capture_output=True,
        env=env,
        check=True,
    )
    registered = set(built.stdout.decode().split())
    assert registered <= listed
    from zkr_cli._plugin_index import plugin_commands

    assert {name for name, _ in plugin_commands()} == registered - {"serve", "plugins", "import"}


def test_help_lists_only_the_plugins_zkr_would_load(run: Run) -> None:
    # cli_env sets ZKR_LOAD_PLUGINS="" (load none): no plugin command is listed.
    names = {line.split()[0] for line in _help_ok(run()).splitlines() if line[:2] == "  "}
    assert "web" not in names and "mcp" not in names


@pytest.mark.parametrize("argv", [[], ["help"], ["--help"], ["-h"]])
def test_no_arguments_or_a_lone_help_word_print_help(
    run: Run, zkr_inprocess: Run, argv: list[str]
) -> None:
    # in-process for speed; test_help_text_layout runs the real command
    assert _help_ok(zkr_inprocess(*argv)) == _help_ok(run())


def test_db_path_help_prints_help_without_creating_the_file(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "sub" / "memory.db"
    assert _help_ok(run("--db", str(path), "help")).startswith("zkr --db PATH COMMAND\n")
    assert not path.exists() and not path.parent.exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["--db"],
        ["--db", "{db}"],
        ["--db", "{db}", "search", "extra"],
        ["--db", "{db}", "help", "extra"],
        ["--db", "{db}", "search", "--help", "extra"],
        ["--database", "{db}", "search"],
        ["search", "extra"],
        ["-x"],
        ["--verbose", "search"],
        ["help", "me"],
        ["--db", "{db}", "no-such-command", "extra"],
    ],
)
def test_wrong_shapes_are_usage_errors_and_open_nothing(
    zkr_inprocess: Run, tmp_path: Path, home: Path, argv: list[str]
) -> None:
    path = tmp_path / "memory.db"
    outcome = zkr_inprocess(*[arg.format(db=path) for arg in argv], stdin=b"{}")
    assert outcome.error == USAGE
    assert not path.exists()
    assert not (home / ".zkr").exists()


def test_usage_error_from_the_real_command(run: Run, db_path: Path) -> None:
    assert run("--db", str(db_path)).error == USAGE
    assert run("--db", str(db_path), "search", "extra").error == USAGE
    assert not db_path.exists()


@pytest.mark.parametrize("word", ["--help", "-h"])
def test_db_path_dash_dash_help_is_help_and_creates_nothing(
    run: Run, zkr_inprocess: Run, tmp_path: Path, word: str
) -> None:
    # Departure from zkr 0.2.3 (issue 12): it created PATH and answered `unknown command "--help"`.
    path = tmp_path / "sub" / "memory.db"
    assert _help_ok(zkr_inprocess("--db", str(path), word)) == _help_ok(run())
    assert not path.parent.exists()


def test_unknown_command_is_a_rust_debug_string_and_reads_no_stdin(run: Run, db_path: Path) -> None:
    # stdin is far over the limit: the unknown command is reported first (before reading it)
    big = b"x" * (2 * 1_048_576)
    assert run("--db", str(db_path), "frobnicate", stdin=big).error == (
        'unknown command "frobnicate"'
    )
    assert run("--db", str(db_path), 'say "hi"\\\n').error == (
        'unknown command "say \\"hi\\"\\\\\\n"'
    )


@pytest.mark.parametrize(
    ("name", "rendered"),
    [
        ("plain", '"plain"'),
        ('q"uote', '"q\\"uote"'),
        ("back\\slash", '"back\\\\slash"'),
        ("tab\tcr\rnl\nnul\0", '"tab\\tcr\\rnl\\nnul\\0"'),
        ("esc\x1b", '"esc\\u{1b}"'),
        ("del\x7f", '"del\\u{7f}"'),
        ("it's", '"it\'s"'),
        ("caf\u00e9", '"caf\u00e9"'),
        ("nb\u00a0sp", '"nb\\u{a0}sp"'),
        ("zw\u200bsp", '"zw\\u{200b}sp"'),
        ("e\u0301", '"e\\u{301}"'),
        ("日本", '"日本"'),
    ],
)
def test_rust_debug_rendering(name: str, rendered: str) -> None:
    from zkr_cli._io import rust_debug_str

    assert rust_debug_str(name) == rendered


def test_unknown_command_opens_and_migrates_first(run: Run, db_path: Path) -> None:
    import sqlite3

    conn = sqlite3.connect(db_path)
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    # The open fails first: schema errors win over the unknown command (contract order).
    message = run("--db", str(db_path), "frobnicate").error
    assert message.startswith("database schema version 999 is newer than supported version")


def test_version(run: Run) -> None:
    from importlib.metadata import version

    outcome = run("--version")
    assert outcome.returncode == 0 and outcome.stderr == b""
    assert outcome.stdout == f"zkr {version('zkr-cli')}\n".encode()
    # ... which is the one version literal, zkr-core's (scripts/bump_version.py rewrites it).
    from zkr.version import __version__

    assert outcome.stdout == f"zkr {__version__}\n".encode()


def test_db_defaults_to_zkr_db_then_home(run: Run, tmp_path: Path, home: Path) -> None:
    request = {"tenant_id": "a", "person_id": "sam", "query": "tea"}
    # ~/.zkr/memory.db (created with its folder)
    assert run("search", stdin=request).json["gaps"] == ["no cited memory matched"]
    assert (home / ".zkr" / "memory.db").exists()
    # $ZKR_DB wins
    chosen = tmp_path / "chosen.db"
    env = {"ZKR_DB": str(chosen)}
    remembered = run(
        "remember",
        stdin={
            "tenant_id": "a",
            "person_id": "sam",
            "kind": "conversation",
            "text": "Sam drinks tea",
            "captured_at": 1,
            "recorded_at": 1,
        },
        env=env,
    ).ok()
    [item] = run("search", stdin=request, env=env).json["items"]
    assert item["evidence_ids"] == [remembered["evidence_id"]]
    # an explicit --db still wins over $ZKR_DB
    other = tmp_path / "other.db"
    assert run("--db", str(other), "search", stdin=request, env=env).json["items"] == []
    assert other.exists()


def test_locator_prints_null_when_absent(run: Run, db_path: Path) -> None:
    request = {"tenant_id": "a", "person_id": "sam", "evidence_id": "0" * 32}
    outcome = run("--db", str(db_path), "locator", stdin=request)
    assert outcome.json is None
    assert outcome.stdout == b"null\n"


def test_output_is_compact_sorted_utf8_at_every_depth(run: Run, db_path: Path) -> None:
    text = "Zoë mag Käse 🧀"
    run(
        "--db",
        str(db_path),
        "remember",
        stdin={
            "tenant_id": "a",
            "person_id": "sam",
            "kind": "conversation",
            "text": text,
            "captured_at": 1,
            "recorded_at": 1,
        },
    ).ok()
    outcome = run(
        "--db",
        str(db_path),
        "search",
        stdin={"tenant_id": "a", "person_id": "sam", "query": "Käse"},
    )
    value = outcome.json
    expected = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert outcome.stdout.decode("utf-8") == expected + "\n"
    assert text.encode("utf-8") in outcome.stdout  # raw UTF-8, not \u escapes
