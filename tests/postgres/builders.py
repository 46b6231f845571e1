"""Source databases for the replica tests: persons whose memories use every write of zkr.

Each person's texts carry a word of their own (``tok<tenant><person>``, no stemming changes it) so a
search for that word finds every live memory of the person on both sides, whatever the ranking.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from zkr import models as m
from zkr.db import MemoryDb

WORDS = (
    "hiking",
    "coffee",
    "piano",
    "garden",
    "dentist",
    "marathon",
    "recipe",
    "lisbon",
    "berlin",
    "kayak",
    "violin",
    "novel",
    "chess",
    "pottery",
    "tennis",
    "sushi",
    "museum",
    "camping",
    "yoga",
    "guitar",
    "painting",
    "jazz",
    "bakery",
    "football",
)


@dataclass
class Person:
    tenant_id: str
    person_id: str
    word: str
    sources: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    claims: list[str] = field(default_factory=list)


def person_word(tenant_id: str, person_id: str) -> str:
    return "tok" + "".join(ch for ch in f"{tenant_id}{person_id}" if ch.isalnum()).lower()


def build_person(
    db: MemoryDb, tenant_id: str, person_id: str, rng: random.Random, memories: int = 6
) -> Person:
    """*memories* captures (some with claims), then a correction, a link, a profile entry, a
    review and a deletion where the dice say so."""
    person = Person(tenant_id, person_id, person_word(tenant_id, person_id))
    scope = {"tenant_id": tenant_id, "person_id": person_id}
    t = 1_000
    claim_ids: list[str] = []
    kinds: dict[str, m.ClaimKind] = {}
    own_evidence: dict[str, str] = {}
    for i in range(memories):
        t += rng.randint(1, 50)
        topic, other = rng.sample(WORDS, 2)
        text = f"{person.word} talked about {topic} and {other} number {i}"
        claim = None
        if rng.random() < 0.6:
            kind = rng.choice([m.ClaimKind.fact, m.ClaimKind.preference, m.ClaimKind.profile_fact])
            claim = m.ClaimInput(
                subject=person.word,
                predicate=rng.choice(["likes", "plays", "lives_in"]),
                value=f"{topic} {i}",
                kind=kind,
                valid_from=t,
            )
        result = db.remember(
            m.RememberRequest(
                **scope,
                kind=m.SourceKind.conversation,
                text=text,
                captured_at=t,
                recorded_at=t,
                claim=claim,
            )
        )
        person.sources.append(result.source_id)
        person.evidence.append(result.evidence_id)
        if result.claim_id is not None:
            person.claims.append(result.claim_id)
            claim_ids.append(result.claim_id)
            assert claim is not None
            kinds[result.claim_id] = claim.kind
            own_evidence[result.claim_id] = result.evidence_id
    live_claims = list(claim_ids)
    if live_claims and rng.random() < 0.5:
        t += 10
        target = rng.choice(live_claims)
        corrected = db.correct(
            m.CorrectRequest(
                **scope,
                claim_id=target,
                text=f"{person.word} corrected: now {rng.choice(WORDS)}",
                value=f"corrected {rng.choice(WORDS)}",
                valid_at=t,
                recorded_at=t,
            )
        )
        person.sources.append(corrected.source_id)
        person.evidence.append(corrected.evidence_id)
        person.claims.append(corrected.claim_id)
        live_claims.remove(target)
        live_claims.append(corrected.claim_id)
        kinds[corrected.claim_id] = kinds[target]  # a correction keeps the claim's kind
        own_evidence[corrected.claim_id] = corrected.evidence_id
    if live_claims and rng.random() < 0.4:
        t += 10
        linked = rng.choice(live_claims)
        others = [e for e in person.evidence if e != own_evidence[linked]]
        db.link(
            m.LinkRequest(
                **scope,
                claim_id=linked,
                evidence_id=rng.choice(others),
                relation=rng.choice(list(m.EvidenceRelation)),
                confidence_basis_points=rng.randint(0, 10_000),
            )
        )
    if rng.random() < 0.4:
        t += 10
        db.review(
            m.ReviewRequest(
                **scope,
                day="2026-12-01",
                summary=f"{person.word} day summary {rng.choice(WORDS)}",
                evidence_ids=[rng.choice(person.evidence)],
                recorded_at=t,
            )
        )
    for claim_id in live_claims:
        if kinds[claim_id] is m.ClaimKind.profile_fact and rng.random() < 0.5:
            t += 10
            db.profile(
                m.ProfileRequest(
                    **scope, stability=m.ProfileStability.stable, claim_id=claim_id, recorded_at=t
                )
            )
    if rng.random() < 0.4:
        t += 10
        db.delete(
            m.DeleteRequest(**scope, source_id=rng.choice(person.sources[:memories]), deleted_at=t)
        )
    return person


def build_database(
    db: MemoryDb, scopes: list[tuple[str, str]], seed: int, memories: int = 6
) -> list[Person]:
    rng = random.Random(seed)
    # One SQLite transaction for the whole build (each write is a savepoint inside it): the data
    # and feed are the same as with one transaction per write, without a disk sync per write.
    with db.atomic():
        return [build_person(db, t, p, rng, memories) for t, p in scopes]


def main(argv: list[str]) -> None:
    """``python -m tests.postgres.builders PATH SEED SCOPES_JSON``: build one database in its own
    process (tests build several at once) and print its persons as JSON."""
    import json
    from dataclasses import asdict

    path, seed, scopes = argv
    db = MemoryDb(path)
    try:
        persons = build_database(db, [tuple(s) for s in json.loads(scopes)], int(seed))
    finally:
        db.close()
    print(json.dumps([asdict(p) for p in persons]))


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
