"""Root conftest: every test session uses zkr's own pytest plugin.

``zkr.testing`` marks the process as a test run, so installed ``zkr`` entry points are not
auto-loaded (a test asks with ``load_plugins(entry_points=True)``), and provides the
``memory_db`` and ``registered_plugin`` fixtures. Here: the ``db`` fixture and
``remember_payload``, the contract's store fixture shared by the core and CLI helpers.

This file is loaded by every distribution's isolated test run, so it imports only zkr-core and
pytest.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NoReturn

import pytest

from zkr.db import MemoryDb

__all__ = ["CONTRACT_RANKING", "missing_shared", "remember_payload", "shared_dir"]


def shared_dir() -> Path:
    """The shared reference material: ``$ZKR_SHARED_DIR``, else ``../shared`` by the repository."""
    configured = os.environ.get("ZKR_SHARED_DIR")
    if configured:
        return Path(configured)
    return (Path(__file__).resolve().parents[1] / ".." / "shared").resolve()


def missing_shared(what: str) -> NoReturn:
    """Skip a test whose reference material is absent, except in CI (``CI`` set), where a missing
    fixture fails the run instead of passing it silently."""
    message = f"{what} not found under {shared_dir()} (set ZKR_SHARED_DIR)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


pytest_plugins = ["zkr.testing"]

#: ``pytestmark = CONTRACT_RANKING`` in a module whose tests check zkr 0.2.3's exact answers.
CONTRACT_RANKING = pytest.mark.usefixtures("contract_ranking")


@pytest.fixture
def contract_ranking(monkeypatch: pytest.MonkeyPatch) -> None:
    """Searches that name no ranking rank as zkr 0.2.3 did (``ZKR_RANKING=contract``), in this
    process and in every process it starts: for the tests that check the contract's exact answers
    (the reference fixtures, the contract's retrieval rules). Everything else gets zkr's default,
    recall."""
    monkeypatch.setenv("ZKR_RANKING", "contract")


@pytest.fixture
def db(memory_db: MemoryDb) -> MemoryDb:
    """The tests' short name for ``memory_db``: a fresh, migrated database in a temporary file."""
    return memory_db


def remember_payload(value: str = "Acme", **overrides: Any) -> dict[str, Any]:
    """The contract's store fixture: ``Sam works at <value>`` with the claim
    (Sam, employer, value, fact, valid_from 10), captured and recorded at 10, scope (a, sam)."""
    payload: dict[str, Any] = {
        "tenant_id": "a",
        "person_id": "sam",
        "kind": "conversation",
        "text": f"Sam works at {value}",
        "captured_at": 10,
        "recorded_at": 10,
        "claim": {
            "subject": "Sam",
            "predicate": "employer",
            "value": value,
            "kind": "fact",
            "valid_from": 10,
        },
    }
    payload.update(overrides)
    return payload
