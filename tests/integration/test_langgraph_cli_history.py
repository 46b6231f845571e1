"""Issue 28, acceptance 1 through the command line: a LangGraph store overwrites a key, and
``zkr history`` (the CLI a person uses) shows both versions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("zkr_langgraph")
pytest.importorskip("zkr_cli")

from zkr_langgraph import ZkrStore


def _zkr(db: Path, command: str, request: dict[str, object]) -> object:
    done = subprocess.run(
        [sys.executable, "-m", "zkr_cli", "--db", str(db), command],
        input=json.dumps(request).encode(),
        capture_output=True,
        check=True,
        timeout=60,
    )
    return json.loads(done.stdout)


def test_overwriting_a_key_shows_both_versions_in_zkr_history(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    store = ZkrStore(db, tenant_id="acme")
    store.put(("ana", "profile"), "city", {"lives_in": "Lisbon"})
    store.put(("ana", "profile"), "city", {"lives_in": "Porto"})
    item = store.get(("ana", "profile"), "city")
    store.close()
    assert item is not None
    chain = _zkr(
        db, "history", {"tenant_id": "acme", "person_id": "ana", "claim_id": item.citation.claim_id}
    )
    assert isinstance(chain, dict)
    versions = [(v["claim"]["value"], v["claim"]["status"]) for v in chain["versions"]]
    assert versions == [
        ('{"lives_in":"Lisbon"}', "superseded"),
        ('{"lives_in":"Porto"}', "accepted"),
    ]
    assert chain["current_claim_id"] == item.citation.claim_id
    listed = _zkr(db, "scopes", {"tenant_id": "acme"})
    assert listed == {"items": [{"person_id": "ana"}], "next_cursor": None}
