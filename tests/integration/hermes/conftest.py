"""Fixtures of the real-Hermes tests: hermes-agent==0.19.0 in the same environment as zkr.

Every scenario runs Hermes in a child process with a fresh ``HERMES_HOME`` (and ``HOME``), the
provider installed the way a user installs it (the ``zkr-hermes install`` command), and no network:
the "LLM" is ``fake_llm`` on 127.0.0.1. When Hermes is missing the tests are skipped, unless
``ZKR_REQUIRE_HERMES=1`` (the nox session sets it) turns that into a failure.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "SCRIPTS",
    "bin_path",
    "count",
    "hermes_env",
    "make_home",
    "needs_hermes",
    "rows",
    "run_script",
]

SCRIPTS = Path(__file__).parent / "scripts"


def _hermes_missing() -> bool:
    try:
        return importlib.util.find_spec("agent.memory_provider") is None
    except ImportError:
        return True


if _hermes_missing() and os.environ.get("ZKR_REQUIRE_HERMES") == "1":
    raise RuntimeError("hermes-agent==0.19.0 is not installed but ZKR_REQUIRE_HERMES=1")

#: Every test module of this folder is marked with this.
needs_hermes = pytest.mark.skipif(_hermes_missing(), reason="hermes-agent is not installed")


def bin_path(name: str) -> str:
    """A console script of this environment (hermes, zkr, zkr-hermes)."""
    return str(Path(sys.executable).with_name(name))


def hermes_env(home: Path, **extra: str) -> dict[str, str]:
    keep = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL", "TMPDIR") if k in os.environ}
    # No provider keys, no real ~/.hermes: everything lives under the test's directory.
    return {
        **keep,
        "HOME": str(home.parent / "user-home"),
        "HERMES_HOME": str(home),
        "PYTHONUNBUFFERED": "1",
        **extra,
    }


def run_script(name: str, home: Path, *args: str, timeout: float = 120, **env: str) -> Any:
    """Run ``scripts/<name>`` under Hermes' interpreter; its last stdout line is JSON."""
    result = subprocess.run(
        [sys.executable, str(SCRIPTS / name), *args],
        env=hermes_env(home, **env),
        cwd=home.parent,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def rows(db_path: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    import sqlite3

    conn = sqlite3.connect(db_path, timeout=10)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def count(db_path: Path, text: str) -> int:
    found = rows(db_path, "SELECT count(*) FROM sources WHERE instr(content, ?) > 0", (text,))
    return int(found[0][0])


def make_home(tmp_path: Path) -> Path:
    """A fresh HERMES_HOME with the provider installed by ``zkr-hermes install``, selected."""
    home = tmp_path / "hermes-home"
    home.mkdir()
    (tmp_path / "user-home").mkdir()
    installed = subprocess.run(
        [bin_path("zkr-hermes"), "install", "--hermes-home", str(home)],
        env=hermes_env(home),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert installed.returncode == 0, installed.stderr
    assert "memory:\n  provider: zkr" in installed.stdout
    (home / "config.yaml").write_text("memory:\n  provider: zkr\n")
    return home


@pytest.fixture
def hermes_home(tmp_path: Path) -> Path:
    return make_home(tmp_path)
