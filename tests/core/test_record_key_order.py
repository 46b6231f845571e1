"""Stored feed payloads keep the contract's key order (§7.3), whatever the models share.

The record models share field types and a scope base (:class:`zkr.models._base.ScopedRecord`);
pydantic puts a base's fields first, so a shared group moved to the wrong place would reorder the
stored payloads that replicas hash and apply. This drives every operation that emits a record and
compares each payload's keys, nested objects included, with the contract's order.
"""

from __future__ import annotations

from typing import Any

from tests.conftest import remember_payload
from tests.core.conftest import feed_records
from zkr.db import MemoryDb


def _keys_of(words: str) -> list[str]:
    return words.split()


_REF = _keys_of("kind id")
_RANGE = _keys_of("from until")

#: §7.3, plus zkr's own ``erasure`` record; a nested object's keys under its parent's key.
EXPECTED: dict[str, dict[str, list[str]]] = {
    "source": {
        "": _keys_of("source ingestion_key origin_evidence_id origin_claim_id"),
        "source": _keys_of(
            "id tenant_id person_id revision kind content captured_at recorded_at deleted_at"
        ),
    },
    "evidence": {
        "": _keys_of("evidence locator deleted_at"),
        "evidence": _keys_of(
            "id tenant_id person_id source_id source_revision quote byte_range recorded_at"
        ),
    },
    "claim": {
        "": _keys_of(
            "id tenant_id person_id subject predicate value kind valid_time recorded_time status"
        ),
        "valid_time": _RANGE,
        "recorded_time": _RANGE,
    },
    "claim_evidence": {
        "": _keys_of("tenant_id person_id claim_id evidence_id relation confidence_basis_points"),
    },
    "correction": {
        "": _keys_of(
            "tenant_id person_id superseded_claim_id claim_id source_id evidence_id valid_at"
            " recorded_at"
        ),
    },
    "deletion": {"": _keys_of("tenant_id person_id target deleted_at"), "target": _REF},
    "profile": {
        "": _keys_of("id tenant_id person_id key value stability claim_id recorded_at"),
    },
    "daily_review": {
        "": _keys_of("id tenant_id person_id day summary evidence_ids recorded_at"),
    },
    "erasure": {
        "": _keys_of(
            "tenant_id person_id source_id erased_at evidence_ids claim_ids profile_entry_ids"
            " daily_review_ids"
        ),
    },
}

_SCOPE = {"tenant_id": "a", "person_id": "sam"}


def _emit_every_kind(db: MemoryDb) -> None:
    """One of each record: remember, link, profile, review, correct, delete and forget."""
    fact = db.remember(remember_payload())
    home = db.remember(
        remember_payload("Porto", claim={**remember_payload()["claim"], "kind": "profile_fact"})
    )
    assert home.claim_id is not None and fact.claim_id is not None
    db.link(
        {
            **_SCOPE,
            "claim_id": fact.claim_id,
            "evidence_id": home.evidence_id,
            "relation": "contradicts",
            "confidence_basis_points": 5000,
        }
    )
    db.profile({**_SCOPE, "stability": "stable", "claim_id": home.claim_id, "recorded_at": 11})
    cited = [fact.evidence_id]
    db.review({**_SCOPE, "day": "d", "summary": "s", "evidence_ids": cited, "recorded_at": 11})
    db.correct(
        {
            **_SCOPE,
            "claim_id": home.claim_id,
            "text": "Sam works at Lisbon",
            "value": "Lisbon",
            "valid_at": 12,
            "recorded_at": 12,
        }
    )
    db.delete({**_SCOPE, "source_id": fact.source_id, "deleted_at": 13})
    db.forget({**_SCOPE, "source_id": home.source_id, "erased_at": 14})


def _keys(record: dict[str, Any], kind: str) -> dict[str, list[str]]:
    found = {"": list(record)}
    for parent in EXPECTED[kind]:
        if parent and isinstance(record.get(parent), dict):
            found[parent] = list(record[parent])
    return found


def test_every_stored_payload_keeps_the_contracts_key_order(db: MemoryDb) -> None:
    _emit_every_kind(db)
    seen: set[str] = set()
    for commit in feed_records(db, "a", "sam"):
        for event in commit:
            assert list(event) == ["kind", "record"]
            kind = event["kind"]
            seen.add(kind)
            assert _keys(event["record"], kind) == EXPECTED[kind], kind
    assert seen == set(EXPECTED)
