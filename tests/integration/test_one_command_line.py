"""Every program of the family is a subcommand of ``zkr`` (issue 25): ``zkr NAME ARGS`` answers as
the program's own console script does, and ``zkr --help`` lists it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# (zkr subcommand, console script, arguments that answer without a database or a server)
PROGRAMS = [
    ("postgres", "zkr-postgres", ["--help"]),
    ("hermes", "zkr-hermes", ["--help"]),
    ("openclaw", "zkr-openclaw-bridge", ["plugin-dir"]),
    ("agent-hooks", "zkr-agent-hooks", ["plugin-dir"]),
    ("mcp", "zkr-mcp", ["--help"]),
]


def _env() -> dict[str, str]:
    # Installed plugins load as they would for a person (the suite's default loads none).
    return {k: v for k, v in os.environ.items() if k != "ZKR_LOAD_PLUGINS"}


def _script(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip(f"{name} is not installed")
    return found


@pytest.mark.parametrize(("command", "script", "args"), PROGRAMS)
def test_zkr_subcommand_answers_as_the_program(command: str, script: str, args: list[str]) -> None:
    alone = subprocess.run([_script(script), *args], capture_output=True, env=_env(), timeout=120)
    through = subprocess.run(
        [_script("zkr"), command, *args], capture_output=True, env=_env(), timeout=120
    )
    assert through.returncode == alone.returncode == 0, through.stderr
    # Each program's parser names itself (prog=...), so the two answers are the same bytes.
    assert through.stdout == alone.stdout
    assert through.stdout


def test_zkr_help_lists_every_program() -> None:
    helped = subprocess.run([_script("zkr"), "--help"], capture_output=True, env=_env(), timeout=60)
    names = {line.split()[0] for line in helped.stdout.decode().splitlines() if line[:2] == "  "}
    assert {command for command, _, _ in PROGRAMS} | {"web"} <= names
