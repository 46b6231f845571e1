"""Shared helpers of the zkr-cli tests.

``zkr(...)`` runs the real command (``python -m zkr_cli``, the console script's module) in a
subprocess with an isolated ``HOME`` and no ``ZKR_DB``; ``zkr_inprocess(...)`` runs the same
``main()`` in this process with captured byte streams, for the long matrices of bad input where a
process per case would only cost time. ``db_snapshot(path)`` reads every table (the export feed
included) so a test can assert that a refused request changed nothing.
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import remember_payload

__all__ = ["MAX_REQUEST_BYTES", "Outcome", "db_snapshot", "remember_payload"]

MAX_REQUEST_BYTES = 1_048_576


@dataclass(frozen=True)
class Outcome:
    """What one ``zkr`` run produced."""

    returncode: int
    stdout: bytes
    stderr: bytes

    @property
    def json(self) -> Any:
        """The single stdout line, decoded; asserts the contract's success envelope."""
        assert self.returncode == 0, self.stderr
        assert self.stderr == b"", self.stderr
        assert self.stdout.endswith(b"\n") and self.stdout.count(b"\n") == 1, self.stdout
        return json.loads(self.stdout)

    def ok(self) -> Any:
        """Assert success (as ``json`` does) where the value itself is not needed."""
        return self.json

    @property
    def error(self) -> str:
        """The error message; asserts the contract's failure envelope (stderr only, exit 1)."""
        assert self.returncode == 1, (self.returncode, self.stdout, self.stderr)
        assert self.stdout == b"", self.stdout
        assert self.stderr.endswith(b"\n") and self.stderr.count(b"\n") == 1, self.stderr
        body = json.loads(self.stderr)
        assert list(body) == ["error"], body
        assert isinstance(body["error"], str)
        # compact and sorted: exactly what the contract prints
        expected = json.dumps(body, separators=(",", ":"), ensure_ascii=False) + "\n"
        assert self.stderr.decode("utf-8") == expected
        return body["error"]


def _stdin_bytes(stdin: Any) -> bytes:
    if stdin is None:
        return b""
    if isinstance(stdin, bytes):
        return stdin
    if isinstance(stdin, str):
        return stdin.encode("utf-8")
    return json.dumps(stdin).encode("utf-8")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty HOME, so a default ``~/.zkr/memory.db`` never touches the real one."""
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def cli_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZKR_")}
    env["HOME"] = str(home)
    # Hermetic: no installed entry-point plugin (a test that wants them overrides this).
    env["ZKR_LOAD_PLUGINS"] = ""
    return env


@pytest.fixture
def contract_ranking(monkeypatch: pytest.MonkeyPatch, cli_env: dict[str, str]) -> None:
    """The root conftest's ``contract_ranking`` for the CLI's commands too: ``ZKR_RANKING=contract``
    in this process, in ``cli_env`` (which the subprocesses get) and for ``zkr_inprocess``."""
    monkeypatch.setenv("ZKR_RANKING", "contract")
    cli_env["ZKR_RANKING"] = "contract"


@pytest.fixture
def run(cli_env: dict[str, str]) -> Callable[..., Outcome]:
    """``run(*argv, stdin=..., env=...)``: the real command in a subprocess (an ``env`` value of
    ``None`` removes that variable)."""

    def _run(*argv: str, stdin: Any = None, env: dict[str, str | None] | None = None) -> Outcome:
        merged = {**cli_env, **(env or {})}
        done = subprocess.run(
            [sys.executable, "-m", "zkr_cli", *argv],
            input=_stdin_bytes(stdin),
            capture_output=True,
            env={name: value for name, value in merged.items() if value is not None},
            timeout=60,
            check=False,
        )
        return Outcome(done.returncode, done.stdout, done.stderr)

    return _run


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


@pytest.fixture
def zkr(run: Callable[..., Outcome], db_path: Path) -> Callable[..., Outcome]:
    """``zkr(command, request)``: ``zkr --db <tmp db> command`` with *request* on stdin."""

    def _zkr(command: str, request: Any = None) -> Outcome:
        return run("--db", str(db_path), command, stdin=request)

    return _zkr


@pytest.fixture
def zkr_inprocess(
    monkeypatch: pytest.MonkeyPatch, home: Path, cli_env: dict[str, str]
) -> Iterator[Callable[..., Outcome]]:
    """``zkr_inprocess(*argv, stdin=...)``: ``zkr_cli.__main__.main`` with captured streams, in
    the environment the subprocesses get (``cli_env``'s ``ZKR_*`` and ``HOME``)."""
    from zkr_cli.__main__ import main

    for name in [name for name in os.environ if name.startswith("ZKR_")]:
        monkeypatch.delenv(name)
    for name, value in cli_env.items():
        if name.startswith("ZKR_"):
            monkeypatch.setenv(name, value)  # no installed entry points (ZKR_LOAD_PLUGINS="")
    monkeypatch.setenv("HOME", str(home))

    def _run(*argv: str, stdin: Any = None) -> Outcome:
        out, err = io.BytesIO(), io.BytesIO()
        stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
        stderr = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
        stdin_stream = io.TextIOWrapper(io.BytesIO(_stdin_bytes(stdin)), encoding="utf-8")
        with monkeypatch.context() as patch:
            patch.setattr(sys, "stdin", stdin_stream)
            patch.setattr(sys, "stdout", stdout)
            patch.setattr(sys, "stderr", stderr)
            code = main(list(argv))
            stdout.flush()
            stderr.flush()
        return Outcome(code, out.getvalue(), err.getvalue())

    yield _run


def db_snapshot(path: Path) -> dict[str, Any]:
    """Every row of every table (FTS shadow tables and the export feed included), plus
    ``user_version``; read with plain sqlite3 so that taking it changes nothing."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        snapshot: dict[str, Any] = {
            "user_version": conn.execute("PRAGMA user_version").fetchone()[0]
        }
        names = [
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
            )
        ]
        assert "memory_commits" in names and "memory_export_events" in names
        for name in names:
            rows = conn.execute(f'SELECT * FROM "{name}"').fetchall()
            snapshot[name] = sorted(rows, key=repr)
        return snapshot
    finally:
        conn.close()
