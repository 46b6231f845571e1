"""Claims first in the recall ranking (issue 24): a claim is found by its statement's words and by
the everyday words of its predicate, the current version of a corrected claim stands for every
version, and a memory that matches only through its neighbours never ranks above one that matches
the question itself. Every search here passes ``ranking`` explicitly and runs without vectors."""

from __future__ import annotations

from typing import Any

import pytest

from zkr import models as m
from zkr.db import MemoryDb

SCOPE = {"tenant_id": "t", "person_id": "me"}
DAY = 86_400
START = 1_767_225_600  # 2026-01-01 UTC


def remember(db: MemoryDb, text: str, at: int, claim: dict[str, str] | None = None) -> Any:
    payload: dict[str, Any] = {
        **SCOPE,
        "kind": "conversation",
        "text": text,
        "captured_at": at,
        "recorded_at": at,
    }
    if claim is not None:
        payload["claim"] = {"kind": "profile_fact", "valid_from": at, **claim}
    return db.remember(m.RememberRequest.model_validate(payload))


def correct(db: MemoryDb, claim_id: str, text: str, value: str, at: int) -> Any:
    payload = {**SCOPE, "claim_id": claim_id, "text": text, "value": value}
    return db.correct(
        m.CorrectRequest.model_validate({**payload, "valid_at": at, "recorded_at": at})
    )


def search(db: MemoryDb, query: str, **extra: Any) -> m.RetrievalPack:
    request = {**SCOPE, "query": query, "ranking": "recall", **extra}
    return db.search(m.SearchRequest.model_validate(request))


#: A few weeks of a person's ordinary captures around the reproduction's.
WEEKS = (
    "Booked the train to Porto for Easter.",
    "Mia starts swimming lessons on Saturday.",
    "The boiler makes a noise again, call the landlord.",
    "Priya's shift ends at eight tonight.",
    "Bought oat milk and coffee beans.",
    "Cello practice: the Elgar is getting better.",
    "Mum called, she wants photos of the flat.",
    "Passport renewal appointment on the 12th.",
    "Tried the new bakery on the corner, good bread.",
    "The bike needs a new chain.",
    "Finished the book Priya lent me.",
    "Rain all day, stayed in and cooked soup.",
    "Dinner with Tomás on Friday at eight.",
    "The car insurance renews in March.",
    "Portuguese class: irregular verbs again.",
    "Gym at lunch, legs are sore.",
    "Mia lost a tooth today!",
    "Paid the electricity bill.",
)


@pytest.fixture
def employer(tmp_path: Any) -> tuple[MemoryDb, dict[str, str]]:
    """The issue's reproduction: the employer claim corrected twice (Acme -> Globex -> Globex
    Ltd), among a person's ordinary captures — one shares an incidental word with the question
    ("sync is working now"), one is the dog's, one the dentist's, one a tea preference — and a
    few weeks of others."""
    db = MemoryDb(tmp_path / "memory.db")
    first = remember(
        db,
        "New job! I start at Acme on Monday.",
        START,
        {"subject": "me", "predicate": "employer", "value": "Acme"},
    )
    remember(db, "My dentist is Dr. Silva on Rua Augusta.", START + DAY)
    remember(db, "I prefer green tea in the afternoon.", START + DAY + 60)
    remember(db, "We got a dog last year, it's called Herbert.", START + 2 * DAY)
    remember(db, "The calendar sync is working now.", START + 3 * DAY)
    for day, text in enumerate(WEEKS, start=4):
        remember(db, text, START + day * DAY)
    second = correct(db, first.claim_id, "I moved to Globex.", "Globex", START + 40 * DAY)
    third = correct(
        db, second.claim_id, "It's Globex Ltd on forms.", "Globex Ltd", START + 60 * DAY
    )
    ids = {"acme": first.claim_id, "globex": second.claim_id, "current": third.claim_id}
    return db, ids


def claim_ids(pack: m.RetrievalPack) -> list[str]:
    return [item.memory.id for item in pack.items if item.memory.kind == "claim"]


def test_where_do_i_work_answers_the_current_employer_claim_first(
    employer: tuple[MemoryDb, dict[str, str]],
) -> None:
    db, ids = employer
    for query in ("where do I work", "where do I work now?", "who is my employer?"):
        pack = search(db, query)
        assert pack.items, query
        assert pack.items[0].memory == m.MemoryRef(kind=m.MemoryKind.claim, id=ids["current"])
        assert ids["acme"] not in claim_ids(pack) and ids["globex"] not in claim_ids(pack)


def test_an_old_value_finds_the_current_version_never_a_superseded_one(
    employer: tuple[MemoryDb, dict[str, str]],
) -> None:
    db, ids = employer
    for query in ("Acme", "Globex", "employer"):
        pack = search(db, query)
        assert claim_ids(pack)[:1] == [ids["current"]], query
        assert ids["acme"] not in claim_ids(pack) and ids["globex"] not in claim_ids(pack)


def test_as_of_before_a_correction_finds_the_version_then_current(
    employer: tuple[MemoryDb, dict[str, str]],
) -> None:
    db, ids = employer
    then = START + 10 * DAY
    pack = search(db, "where do I work", as_of={"valid_at": then, "recorded_at": then})
    assert claim_ids(pack) == [ids["acme"]]


def test_dogs_answers_the_dog_not_the_employer(
    employer: tuple[MemoryDb, dict[str, str]],
) -> None:
    db, _ = employer
    pack = search(db, "dogs")
    assert pack.items[0].excerpt == "We got a dog last year, it's called Herbert."
    assert all("employer" not in item.excerpt for item in pack.items)


def test_a_claim_is_found_by_the_words_of_its_value(tmp_path: Any) -> None:
    db = MemoryDb(tmp_path / "memory.db")
    remember(db, "Coffee with Ana, talked about the trip.", START)
    stored = remember(
        db,
        "Booked it for next month.",
        START + 60,
        {"subject": "me", "predicate": "plans", "value": "fly to Berlin"},
    )
    remember(db, "Ana's cat is called Pixel.", START + DAY)
    pack = search(db, "Berlin")
    assert [item.memory for item in pack.items] == [
        m.MemoryRef(kind=m.MemoryKind.claim, id=stored.claim_id)
    ]


def _own_and_neighbour_store(db: MemoryDb) -> None:
    # A short capture whose neighbours repeat the query's word, and (hours away) a long capture
    # that holds the word once: by bm25 alone the neighbours' words would win.
    remember(db, "Kayak kayak kayak! The kayak club, kayak trips, kayak races.", START)
    remember(db, "Lunch was fine.", START + 60)
    remember(db, "Kayak again, kayak all weekend, kayak forever.", START + 120)
    long_text = (
        "A long note about the garden, the shed, the fence, the neighbours, the hedge, the "
        "compost, the tomatoes, the tools and, at the very end, the old kayak in the shed."
    )
    remember(db, long_text, START + DAY)


def test_no_neighbour_only_match_above_a_direct_one(tmp_path: Any) -> None:
    db = MemoryDb(tmp_path / "memory.db")
    _own_and_neighbour_store(db)
    pack = search(db, "kayak")
    texts = [item.excerpt for item in pack.items]
    assert "Lunch was fine." in texts  # found through its neighbours: it may be shown...
    assert texts[-1] == "Lunch was fine."  # ...but after every capture that says "kayak"
    relevances = [item.relevance_basis_points for item in pack.items]
    assert relevances == sorted(relevances, reverse=True)
    assert relevances[0] == 10_000


def test_lexical_relevance_is_the_share_of_the_best_score(tmp_path: Any) -> None:
    db = MemoryDb(tmp_path / "memory.db")
    remember(db, "Herbert the dog sleeps.", START)
    remember(db, "A dog barked somewhere far away in the valley at night.", START + DAY)
    pack = search(db, "Herbert dog")
    relevances = [item.relevance_basis_points for item in pack.items]
    # The second matches one of two words in a longer text: far less than the first, not the
    # rank-based 9166 the weighted reciprocal-rank fusion gave any second place.
    assert relevances[0] == 10_000 and relevances[1] < 5_000
