"""Where ``zkr`` may create a database (issue 14, the first hour).

An explicit ``--db`` in a directory that does not exist is a typo far more often than a wish: it
is the error ``unable to open database file: PATH`` and creates nothing, for every command that
opens the database. Only the default location (``$ZKR_DB``, else ``~/.zkr/``) is created on
demand.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.conftest import Outcome

Run = Callable[..., Outcome]
SEARCH = json.dumps({"tenant_id": "t", "person_id": "p", "query": "x"}).encode()


@pytest.mark.parametrize(
    ("command", "stdin"),
    [("search", SEARCH), ("remember", b"{}"), ("serve", b""), ("no-such-command", b"")],
)
def test_an_explicit_db_in_a_missing_directory_is_an_error_and_creates_nothing(
    run: Run, tmp_path: Path, home: Path, command: str, stdin: bytes
) -> None:
    path = tmp_path / "missing" / "sub" / "memory.db"
    outcome = run("--db", str(path), command, stdin=stdin)
    assert outcome.error == f"unable to open database file: {path}"
    assert not (tmp_path / "missing").exists()
    assert not (home / ".zkr").exists()


def test_an_explicit_db_in_an_existing_directory_is_created(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    assert run("--db", str(path), "search", stdin=SEARCH).json["items"] == []
    assert path.exists()


def test_the_default_locations_are_created_on_demand(run: Run, tmp_path: Path, home: Path) -> None:
    assert run("search", stdin=SEARCH).json["items"] == []
    assert (home / ".zkr" / "memory.db").exists()
    configured = tmp_path / "configured" / "deep" / "memory.db"
    assert run("search", stdin=SEARCH, env={"ZKR_DB": str(configured)}).json["items"] == []
    assert configured.exists()
