"""``zkr-mcp``'s settings: flags, the environment behind them, and what is refused at start."""

from __future__ import annotations

import subprocess

import pytest

from tests.mcp.conftest import zkr_mcp_command
from zkr_mcp.config import Settings, SettingsError, parse_settings


def test_flags_give_every_setting() -> None:
    settings = parse_settings(
        [
            "--db", "m.db", "--tenant", "t", "--person", "p",
            "--transport", "streamable-http", "--host", "0.0.0.0", "--port", "9000",
            "--embedder", "sentence-transformers/all-MiniLM-L6-v2/onnx-w8-8199be6f",
        ],
        {"ZKR_MCP_TOKEN": " s3cret\n"},
    )  # fmt: skip
    assert settings == Settings(
        db="m.db",
        tenant_id="t",
        person_id="p",
        transport="streamable-http",
        host="0.0.0.0",
        port=9000,
        # The version is what follows the last slash: model names contain slashes.
        embedder=("sentence-transformers/all-MiniLM-L6-v2", "onnx-w8-8199be6f"),
        token="s3cret",  # surrounding whitespace (a file's newline) is not part of it
    )


def test_the_environment_fills_what_flags_leave_out_and_flags_win() -> None:
    environ = {"ZKR_DB": "env.db", "ZKR_TENANT": "te", "ZKR_PERSON": "pe", "ZKR_MCP_PORT": "7"}
    settings = parse_settings(["--person", "flag"], environ)
    assert (settings.db, settings.tenant_id, settings.person_id) == ("env.db", "te", "flag")
    assert (settings.transport, settings.port, settings.embedder) == ("stdio", 7, None)


def test_the_database_defaults_to_zkrs_own() -> None:
    # As for every zkr command: $ZKR_DB, else ~/.zkr/memory.db (the one-line `uvx zkr-mcp`).
    import os

    scope = ["--tenant", "t", "--person", "p"]
    assert parse_settings(scope, {}).db == os.path.expanduser("~/.zkr/memory.db")
    assert parse_settings(scope, {"ZKR_DB": "env.db"}).db == "env.db"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--db", " ", "--tenant", "t", "--person", "p"], "--db (or ZKR_DB) is required"),
        (["--db", "m.db", "--person", "p"], "--tenant (or ZKR_TENANT) is required"),
        (["--db", "m.db", "--tenant", "t", "--person", "  "], "--person (or ZKR_PERSON)"),
        (["--db", "m.db", "--tenant", "t", "--person", "p", "--port", "x"], "--port must be"),
        (["--db", "m.db", "--tenant", "t", "--person", "p", "--port", "70000"], "0..65535"),
        (["--db", "m.db", "--tenant", "t", "--person", "p", "--embedder", "nov"], "MODEL/VERSION"),
    ],
)
def test_refusals_name_the_flag(argv: list[str], message: str) -> None:
    with pytest.raises(SettingsError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_settings(argv, {})


def test_the_console_script_refuses_a_missing_scope_on_stderr_only(tmp_path: object) -> None:
    done = subprocess.run(
        [zkr_mcp_command(), "--db", "x.db"],
        capture_output=True,
        timeout=60,
        cwd=str(tmp_path),  # a refused start must not leave a database behind in the checkout
        env={},
    )
    assert done.returncode == 2
    assert done.stdout == b""  # stdout belongs to the protocol
    assert b"--tenant (or ZKR_TENANT) is required" in done.stderr


def test_an_embedder_that_is_not_installed_is_refused_at_start(tmp_path: object) -> None:
    done = subprocess.run(
        [zkr_mcp_command(), "--db", "x.db", "--tenant", "t", "--person", "p",
         "--embedder", "no/such/1"],
        capture_output=True,
        timeout=60,
        cwd=str(tmp_path),
        env={},
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stdout == b""
    assert b"no installed embedder for model 'no/such' version '1'" in done.stderr
