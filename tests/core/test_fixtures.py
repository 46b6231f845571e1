"""Databases written by zkr 0.2.1 (schema 7) and 0.2.3 (schema 8) answer as the reference did.

Each fixture in ``../shared/fixtures`` (or ``$ZKR_SHARED_DIR/fixtures``) is copied, opened (which
migrates it to our schema 10, float32 vector BLOBs included) and asked every request its
``*.expected.json`` records: export pages, searches, profiles, reviews and projections. Answers are
compared as the CLI prints them (canonical JSON, keys sorted). The tests skip when the shared folder
is absent.

Deliberate difference: the reference reports ``user_version`` 8 after migrating; ours is 10. The
feed still reports ``database_schema_version`` 8, its record schema.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import missing_shared, shared_dir
from zkr import operations
from zkr.db import MemoryDb
from zkr.jsonio import canonical_dumps
from zkr.store import schema

FIXTURES = shared_dir() / "fixtures"


def _expected_files() -> list[Path]:
    return sorted(FIXTURES.glob("*.expected.json")) if FIXTURES.is_dir() else []


def _cases() -> list[Any]:
    """One (fixture, command, request, response) per recorded answer."""
    cases: list[Any] = []
    for expected_file in _expected_files():
        expected = json.loads(expected_file.read_text(encoding="utf-8"))
        name = expected["fixture"]
        for scope in expected["scopes"]:
            label = f"{name}:{scope['tenant_id']}/{scope['person_id']}"
            recorded = [("export", x) for x in scope["export_pages"]]
            recorded += [("search", x) for x in scope["searches"]]
            recorded += [(op, scope[op]) for op in ("profiles", "reviews", "projections")]
            for index, (command, exchange) in enumerate(recorded):
                cases.append(
                    pytest.param(
                        name,
                        command,
                        exchange["request"],
                        exchange["response"],
                        id=f"{label}:{command}{index}",
                    )
                )
    return cases


def _requires_fixtures() -> None:
    if not _expected_files():
        missing_shared("the reference fixtures")


@pytest.fixture(scope="module")
def opened(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, MemoryDb]]:
    """Each fixture copied to a temporary folder and opened (migrated) once for the module."""
    _requires_fixtures()
    folder = tmp_path_factory.mktemp("fixtures")
    handles: dict[str, MemoryDb] = {}
    for expected_file in _expected_files():
        name = json.loads(expected_file.read_text(encoding="utf-8"))["fixture"]
        copy = folder / name
        shutil.copyfile(FIXTURES / name, copy)
        handles[name] = MemoryDb(copy)
    try:
        yield handles
    finally:
        for handle in handles.values():
            handle.close()


@pytest.mark.parametrize(("fixture", "command", "request_", "response"), _cases())
def test_fixture_answers_exactly_what_the_reference_answered(
    opened: dict[str, MemoryDb],
    fixture: str,
    command: str,
    request_: dict[str, Any],
    response: Any,
) -> None:
    answer = operations.run(opened[fixture], command, request_)
    assert canonical_dumps(answer) == canonical_dumps(response)


def test_fixture_row_counts_survive_migration(opened: dict[str, MemoryDb]) -> None:
    for expected_file in _expected_files():
        expected = json.loads(expected_file.read_text(encoding="utf-8"))
        conn = opened[expected["fixture"]].conn
        for table, count in expected["table_row_counts"].items():
            assert conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == count, table
        assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION


def test_fixture_files_are_the_recorded_ones() -> None:
    _requires_fixtures()
    for expected_file in _expected_files():
        expected = json.loads(expected_file.read_text(encoding="utf-8"))
        digest = hashlib.sha256((FIXTURES / expected["fixture"]).read_bytes()).hexdigest()
        assert digest == expected["db_sha256"], "the fixture and its expected file must match"


def test_v7_bootstrap_makes_one_commit_per_scope_in_scope_order(
    opened: dict[str, MemoryDb],
) -> None:
    db = opened.get("zkr-0.2.1-v7.db")
    if db is None:
        missing_shared("the schema-7 reference fixture")
    commits = db.conn.execute(
        "SELECT sequence, tenant_id, person_id FROM memory_commits ORDER BY sequence"
    ).fetchall()
    assert [c[0] for c in commits] == [1, 2, 3, 4, 5]
    assert [c[1:] for c in commits] == sorted(c[1:] for c in commits)
    assert db.conn.execute("SELECT count(*) FROM corrections").fetchone()[0] == 0


def test_migrated_vectors_are_float32_blobs(opened: dict[str, MemoryDb]) -> None:
    for db in opened.values():
        rows = db.conn.execute("SELECT typeof(vector), length(vector), dimension FROM embeddings")
        for storage, length, dimension in rows:
            assert (storage, length) == ("blob", 4 * dimension)


def test_reopening_a_migrated_fixture_writes_nothing(
    opened: dict[str, MemoryDb], tmp_path: Path
) -> None:
    for db in opened.values():
        copy = tmp_path / Path(db.path).name
        db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        shutil.copyfile(db.path, copy)
        with MemoryDb(copy) as again:
            assert again.conn.total_changes == 0


def test_missing_fixtures_fail_in_ci_and_skip_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="reference fixtures not found"):
        missing_shared("the reference fixtures")
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception):
        missing_shared("the reference fixtures")


def test_the_fixtures_are_found_relative_to_the_repository() -> None:
    # ../shared next to the checkout (or $ZKR_SHARED_DIR), never a machine-specific absolute path.
    if not FIXTURES.is_dir():
        missing_shared("the reference fixtures")
    assert _expected_files(), f"no fixtures under {FIXTURES}"
