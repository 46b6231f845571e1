"""A change is not a mistake (issue 24): ``correct`` with ``"mode": "change"``.

"I live in Lisbon" (January), then "I moved to Porto in April" (recorded on 10 April). Asked in
June about March - ``as_of`` valid time in March, recorded now: today's knowledge - the answer is
Lisbon, the value that was true then. A mistake correction (the contract's ``correct``) withdraws
the old value from belief altogether, so the same question finds no claim. And a read ``as_of`` a
recorded time before a correction shows the claim as it was believed then (issue 24, acceptance
2's third reproduction: no status or end date from the future).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from zkr import models as m
from zkr.db import MemoryDb
from zkr.errors import RequestParseError
from zkr.operations import OPERATIONS, run

SCOPE = {"tenant_id": "t", "person_id": "p"}
JAN_1 = 1_767_225_600  # 2026-01-01
MAR_15 = 1_773_532_800  # 2026-03-15
APR_1 = 1_775_001_600  # 2026-04-01
APR_5 = 1_775_347_200  # 2026-04-05
APR_10 = 1_775_779_200  # 2026-04-10
NOW = 1_780_272_000  # 2026-06-01
LISBON = "me lives in Lisbon"
PORTO = "me lives in Porto"


def live_in_lisbon(db: MemoryDb) -> str:
    stored = db.remember(
        m.RememberRequest.model_validate(
            {
                **SCOPE,
                "kind": "conversation",
                "text": "I live in Lisbon.",
                "captured_at": JAN_1,
                "recorded_at": JAN_1,
                "claim": {
                    "subject": "me",
                    "predicate": "lives in",
                    "value": "Lisbon",
                    "kind": "fact",
                    "valid_from": JAN_1,
                },
            }
        )
    )
    assert stored.claim_id is not None
    # Something else, so that a question has more than one memory to choose from.
    db.remember(
        m.RememberRequest.model_validate(
            {
                **SCOPE,
                "kind": "conversation",
                "text": "My dentist is Dr. Silva on Rua Augusta.",
                "captured_at": JAN_1 + 60,
                "recorded_at": JAN_1 + 60,
            }
        )
    )
    return stored.claim_id


def moved(db: MemoryDb, claim_id: str, mode: str | None) -> m.CorrectResult:
    payload: dict[str, Any] = {
        **SCOPE,
        "claim_id": claim_id,
        "text": "I moved to Porto in April.",
        "value": "Porto",
        "valid_at": APR_1,
        "recorded_at": APR_10,
    }
    if mode is not None:
        payload["mode"] = mode
    return db.correct(m.CorrectRequest.model_validate(payload))


@pytest.fixture
def db(tmp_path: Path) -> MemoryDb:
    return MemoryDb(tmp_path / "memory.db")


def ask(db: MemoryDb, query: str, ranking: str, as_of: dict[str, int] | None) -> list[str]:
    pack = db.search(
        m.SearchRequest.model_validate(
            {**SCOPE, "query": query, "ranking": ranking, "as_of": as_of, "limit": 5}
        )
    )
    return [item.excerpt for item in pack.items]


@pytest.mark.parametrize("ranking", ["contract", "recall"])
def test_where_did_i_live_in_march_with_todays_knowledge(db: MemoryDb, ranking: str) -> None:
    moved(db, live_in_lisbon(db), "change")
    march_now = {"valid_at": MAR_15, "recorded_at": NOW}
    found = ask(db, "where did I live in March?", ranking, march_now)
    assert found[0] == LISBON
    assert PORTO not in found
    # Today, and about May: Porto.
    assert ask(db, "where do I live?", ranking, None)[0] == PORTO
    # About May the claim is Porto; Lisbon's claim had ended (its capture, which states no claim
    # true then, may still come back as raw text: contract §5.3's as_of fallback).
    may = ask(
        db,
        "where did I live in May?",
        ranking,
        {"valid_at": APR_10 + 86_400 * 30, "recorded_at": NOW},
    )
    assert PORTO in may
    assert LISBON not in may


@pytest.mark.parametrize("ranking", ["contract", "recall"])
def test_a_mistake_is_no_longer_believed_for_any_time(db: MemoryDb, ranking: str) -> None:
    moved(db, live_in_lisbon(db), None)  # the contract's default: the old value was wrong
    found = ask(db, "where did I live in March?", ranking, {"valid_at": MAR_15, "recorded_at": NOW})
    assert LISBON not in found


def test_the_changed_version_stays_believed_with_its_valid_time_closed(db: MemoryDb) -> None:
    claim_id = live_in_lisbon(db)
    result = moved(db, claim_id, "change")
    history = db.history(m.HistoryRequest(**SCOPE, claim_id=claim_id))
    old, new = (version.claim for version in history.versions)
    assert (old.status, old.valid_time.until, old.recorded_time.until) == (
        m.ClaimStatus.superseded,
        APR_1,
        None,
    )
    assert (new.id, new.valid_time.from_, new.recorded_time.from_) == (
        result.claim_id,
        APR_1,
        APR_10,
    )
    assert history.current_claim_id == result.claim_id
    # Only the new version is current; the old one cannot be corrected again.
    with pytest.raises(Exception, match="record not found"):
        moved(db, claim_id, "change")


def listed_claims(db: MemoryDb, valid_at: int, recorded_at: int) -> list[tuple[Any, ...]]:
    page = db.memories(
        m.MemoriesRequest.model_validate(
            {
                **SCOPE,
                "claim_kinds": ["fact"],
                "as_of": {"valid_at": valid_at, "recorded_at": recorded_at},
            }
        )
    )
    return [
        (
            item.claim.value,
            item.claim.status,
            item.claim.valid_time.until,
            item.claim.recorded_time.until,
        )
        for item in page.items
        if item.claim is not None
    ]


@pytest.mark.parametrize("mode", [None, "change"])
def test_memories_before_a_correction_show_the_claim_as_then_believed(
    db: MemoryDb, mode: str | None
) -> None:
    """Issue 24, acceptance 2's third reproduction: no superseded status, no later end date."""
    moved(db, live_in_lisbon(db), mode)
    assert listed_claims(db, MAR_15, APR_5) == [("Lisbon", m.ClaimStatus.accepted, None, None)]
    # With today's knowledge: a change keeps Lisbon, ended in April; a mistake withdrew it.
    expected = [("Lisbon", m.ClaimStatus.superseded, APR_1, None)] if mode == "change" else []
    assert listed_claims(db, MAR_15, NOW) == expected


def test_the_mode_is_checked_with_the_request(db: MemoryDb) -> None:
    claim_id = live_in_lisbon(db)
    payload = {
        **SCOPE,
        "claim_id": claim_id,
        "text": "I moved.",
        "value": "Porto",
        "valid_at": APR_1,
        "recorded_at": APR_10,
        "mode": "changed",
    }
    with pytest.raises(RequestParseError) as refused:
        run(db, "correct", payload)
    assert "\n" not in str(refused.value) and "mode" in str(refused.value)
    assert db.conn.execute("SELECT count(*) FROM corrections").fetchone()[0] == 0
    assert run(db, "correct", {**payload, "mode": "change"})["superseded_claim_id"] == claim_id


def test_the_tool_description_says_when_to_use_it() -> None:
    correct = OPERATIONS["correct"]
    assert '"change"' in correct.description
    assert "change" in (m.CorrectRequest.model_fields["mode"].description or "")


def replicate(source: MemoryDb, target: MemoryDb) -> None:
    """Every commit of the scope not yet in *target*, through export and apply."""
    status = run(target, "apply", SCOPE)
    after = (status["next_after_commit"], status["next_after_event_index"])
    while True:
        page = run(
            source,
            "export",
            {**SCOPE, "export_format": 1, "after_commit": after[0], "after_event_index": after[1]},
        )
        result = run(
            target,
            "apply",
            {**SCOPE, "after_commit": after[0], "after_event_index": after[1], "page": page},
        )
        after = (result["next_after_commit"], result["next_after_event_index"])
        if page["complete"]:
            return


def test_a_replica_applies_a_change_as_it_was_recorded(db: MemoryDb, tmp_path: Path) -> None:
    moved(db, live_in_lisbon(db), "change")
    with MemoryDb(tmp_path / "replica.db") as replica:
        replicate(db, replica)
        for ranking in ("contract", "recall"):
            march_now = {"valid_at": MAR_15, "recorded_at": NOW}
            assert ask(replica, "where did I live in March?", ranking, march_now)[0] == LISBON
