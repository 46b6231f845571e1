"""``forget``: the erased text is found nowhere afterwards (issue 14, acceptance 2).

Real SQLite files in WAL mode. A secret capture (its text, its claim, a locator, a profile entry, a
daily review, vectors) lives among ordinary memories and is replicated with ``apply``; then it is
forgotten. The test greps the bytes of the database file and of its WAL (read while the connection
is open, so the WAL exists), runs every search ranking (with and without ``as_of``, lexical and
dense), re-reads every export page from the start, and checks the replica both after applying the
erasure and when built from scratch afterwards. Each check first proves the secret was there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.core.conftest import table_snapshot
from zkr import models as m
from zkr.db import MemoryDb
from zkr.embeddings.projections import input_hash
from zkr.errors import InvalidRequest, NotFound
from zkr.feed.apply import sync

SCOPE = {"tenant_id": "a", "person_id": "sam"}
OTHER = {"tenant_id": "b", "person_id": "sam"}
# Words that occur only in the secret capture and what was derived from it.
SECRETS = [b"zanzibarquokka", b"marmalade-pilot", b"omi-secret-device", b"quokkaday"]
TEXT = "Sam told me about zanzibarquokka, the marmalade-pilot"
MODEL, VERSION = "m", "v"
TEXT_OF = {
    "source": "SELECT content FROM sources WHERE id = ?",
    "evidence": "SELECT quote FROM evidence WHERE id = ?",
    "claim": "SELECT subject || ' ' || predicate || ' ' || value FROM claims WHERE id = ?",
}


def file_bytes(path: Path) -> bytes:
    """The database file and its WAL (if any), concatenated."""
    data = path.read_bytes()
    wal = Path(f"{path}-wal")
    return data + (wal.read_bytes() if wal.exists() else b"")


def found_secrets(data: bytes | str) -> list[bytes]:
    raw = data.encode() if isinstance(data, str) else data
    return [secret for secret in SECRETS if secret in raw]


def embed(db: MemoryDb, kind: str, target_id: str, vector: list[float]) -> None:
    text = db.conn.execute(TEXT_OF[kind], (target_id,)).fetchone()[0]
    db.embed(
        m.EmbedRequest.model_validate(
            {
                **SCOPE,
                "target": {"kind": kind, "id": target_id},
                "embedding": {
                    "vector": vector,
                    "model": MODEL,
                    "version": VERSION,
                    "input_hash": input_hash(text),
                    "normalization": "none",
                    "distance": "cosine",
                },
            }
        )
    )


def fill(db: MemoryDb) -> m.RememberResult:
    """Ordinary memories around one secret capture with everything derived from it."""
    for i in range(40):
        db.remember(
            m.RememberRequest.model_validate(
                {
                    **SCOPE,
                    "kind": "conversation",
                    "text": f"ordinary note {i} about the garden",
                    "captured_at": 100 + i,
                    "recorded_at": 100 + i,
                }
            )
        )
    secret: m.RememberResult = db.remember(
        m.RememberRequest.model_validate(
            {
                **SCOPE,
                "kind": "conversation",
                "text": TEXT,
                "captured_at": 200,
                "recorded_at": 200,
                "ingestion_key": "turn-200",
                "claim": {
                    "subject": "Sam",
                    "predicate": "favourite",
                    "value": "zanzibarquokka marmalade-pilot",
                    "kind": "profile_fact",
                    "valid_from": 200,
                },
                "locator": {
                    "device_id": "omi-secret-device",
                    "provider": "omi",
                    "stream_id": "s",
                    "segment_id": "g",
                    "start_ms": 1,
                    "end_ms": 2,
                },
            }
        )
    )
    assert secret.claim_id is not None
    db.profile(
        m.ProfileRequest.model_validate(
            {**SCOPE, "stability": "stable", "claim_id": secret.claim_id, "recorded_at": 201}
        )
    )
    db.review(
        m.ReviewRequest(
            **SCOPE,
            day="2026-01-02",
            summary="a quokkaday with zanzibarquokka",
            evidence_ids=[secret.evidence_id],
            recorded_at=202,
        )
    )
    embed(db, "source", secret.source_id, [1.0, 0.0])
    embed(db, "evidence", secret.evidence_id, [1.0, 0.0])
    embed(db, "claim", secret.claim_id, [1.0, 0.0])
    return secret


def searches(db: MemoryDb) -> list[str]:
    """Every search answer's items and gaps (as JSON; the query echo left out) for every secret
    word, in every ranking the request offers."""
    rankings: list[dict[str, Any]] = [{}]
    ranking_field = m.SearchRequest.model_fields.get("ranking")
    if ranking_field is not None:  # the recall ranking, where this build has it
        annotation = ranking_field.annotation
        values = [v.value for v in annotation] if isinstance(annotation, type) else []
        rankings = [{"ranking": value} for value in values] or rankings
        assert len(rankings) > 1, "the ranking field lost its values"
    answers = []
    for word in [*SECRETS, b"Sam", b"favourite"]:
        for ranking in rankings:
            for extra in (
                {},
                {"as_of": {"valid_at": 10**6, "recorded_at": 10**6}},
                {"as_of": {"valid_at": 250, "recorded_at": 250}},
                {"query_embedding": {"model": MODEL, "version": VERSION, "vector": [1.0, 0.0]}},
            ):
                request = {**SCOPE, "query": word.decode(), "limit": 100, **ranking, **extra}
                pack = db.search(m.SearchRequest.model_validate(request))
                answers.append(pack.model_dump_json(exclude={"query"}))
    return answers


def export_pages(db: MemoryDb) -> list[str]:
    """Every export page of the scope from the start, five events at a time."""
    pages, after, index, mark = [], 0, -1, None
    while True:
        page = db.export(
            m.ExportRequest(
                **SCOPE,
                export_format=1,
                after_commit=after,
                after_event_index=index,
                high_water_mark=mark,
                limit=5,
            )
        )
        pages.append(page.model_dump_json())
        mark, after, index = (
            page.high_water_mark,
            page.next_after_commit,
            page.next_after_event_index,
        )
        if page.complete:
            return pages


def everything(db: MemoryDb, path: Path) -> dict[str, list[bytes]]:
    """Where each secret word can still be found."""
    return {
        "file": found_secrets(file_bytes(path)),
        "search": found_secrets("".join(searches(db))),
        "export": found_secrets("".join(export_pages(db))),
        "memories": found_secrets(
            db.memories(m.MemoriesRequest.model_validate({**SCOPE, "limit": 100})).model_dump_json()
        ),
        "profiles": found_secrets(
            "".join(
                p.model_dump_json() for p in db.profiles(m.ProfilesRequest.model_validate(SCOPE))
            )
        ),
        "reviews": found_secrets(
            "".join(r.model_dump_json() for r in db.reviews(m.ReviewsRequest.model_validate(SCOPE)))
        ),
    }


def test_forget_erases_the_text_everywhere(tmp_path: Path) -> None:
    up_path, replica_path, late_path = (tmp_path / n for n in ("up.db", "rep.db", "late.db"))
    with MemoryDb(up_path) as up, MemoryDb(replica_path) as replica:
        secret = fill(up)
        sync(up, replica, "a", "sam", limit=7)
        # The secret is really there before: in every place the test looks.
        before = everything(up, up_path)
        assert all(before[place] for place in ("file", "search", "export", "profiles", "reviews"))
        assert found_secrets(file_bytes(replica_path))

        result = up.forget(m.ForgetRequest(**SCOPE, source_id=secret.source_id, erased_at=300))
        assert result.evidence_ids == [secret.evidence_id]
        assert result.claim_ids == [secret.claim_id]
        assert len(result.profile_entry_ids) == 1 and len(result.daily_review_ids) == 1

        assert everything(up, up_path) == {place: [] for place in before}
        assert up.conn.execute(
            "SELECT count(*) FROM embeddings WHERE target_id IN (?, ?, ?)",
            (secret.source_id, secret.evidence_id, secret.claim_id),
        ).fetchone() == (0,)
        assert up.conn.execute("SELECT count(*) FROM evidence_locators").fetchone() == (0,)
        # Ordinary memories are untouched and still found.
        assert (
            len(
                up.search(
                    m.SearchRequest.model_validate({**SCOPE, "query": "garden", "limit": 100})
                ).items
            )
            == 40
        )

        # The replica applies the erasure record.
        sync(up, replica, "a", "sam", limit=7)
        assert everything(replica, replica_path) == {place: [] for place in before}
        # Both ends agree on every row of the scope.
        assert _rows(replica) == _rows(up)

    # A replica built after the erasure never holds the text.
    with MemoryDb(up_path) as up, MemoryDb(late_path) as late:
        sync(up, late, "a", "sam", limit=3)
        assert everything(late, late_path) == {place: [] for place in before}
        assert _rows(late) == _rows(up)


def _rows(db: MemoryDb) -> dict[str, list[tuple[Any, ...]]]:
    """The memory tables (not the replica's own bookkeeping or search index internals)."""
    snapshot = table_snapshot(db)
    return {
        name: rows
        for name, rows in snapshot.items()
        if name
        in (
            "sources",
            "evidence",
            "claims",
            "claim_evidence",
            "evidence_locators",
            "profile_entries",
            "daily_reviews",
            "corrections",
            "erasures",
        )
    }


def test_a_deleted_source_can_be_forgotten_and_history_shows_the_erasure(
    tmp_path: Path,
) -> None:
    path = tmp_path / "m.db"
    with MemoryDb(path) as db:
        secret = fill(db)
        assert secret.claim_id is not None
        corrected = db.correct(
            m.CorrectRequest(
                **SCOPE,
                claim_id=secret.claim_id,
                text="Sam now prefers tea",
                value="tea",
                valid_at=250,
                recorded_at=250,
            )
        )
        db.delete(m.DeleteRequest(**SCOPE, source_id=secret.source_id, deleted_at=260))
        assert found_secrets(file_bytes(path))  # delete keeps the text (in the feed at least)
        with pytest.raises(InvalidRequest, match="erased_at cannot predate source deletion"):
            db.forget(m.ForgetRequest(**SCOPE, source_id=secret.source_id, erased_at=259))
        db.forget(m.ForgetRequest(**SCOPE, source_id=secret.source_id, erased_at=270))
        assert found_secrets(file_bytes(path)) == []
        chain = db.history(m.HistoryRequest(**SCOPE, claim_id=corrected.claim_id))
        first, second = chain.versions
        assert first.claim.id == secret.claim_id and first.erased_at == 270
        assert (first.claim.subject, first.claim.value) == ("", "")
        assert first.claim.status is m.ClaimStatus.superseded
        assert second.claim.value == "tea" and second.erased_at is None
        assert chain.current_claim_id == corrected.claim_id
        assert [e.event for e in chain.events] == [
            "recorded",
            "recorded",
            "corrected",
            "deleted",
            "erased",
        ]


def test_forget_refusals_change_nothing(db: MemoryDb) -> None:
    secret = fill(db)
    before = table_snapshot(db)
    with pytest.raises(NotFound, match=r"^record not found$"):
        db.forget(m.ForgetRequest(**OTHER, source_id=secret.source_id, erased_at=300))
    with pytest.raises(NotFound, match=r"^record not found$"):
        db.forget(m.ForgetRequest(**SCOPE, source_id="f" * 32, erased_at=300))
    with pytest.raises(InvalidRequest, match=r"^erased_at cannot predate source recording$"):
        db.forget(m.ForgetRequest(**SCOPE, source_id=secret.source_id, erased_at=199))
    with pytest.raises(InvalidRequest, match=r"^tenant_id must not be empty$"):
        db.forget(m.ForgetRequest(tenant_id=" ", person_id="sam", source_id="x", erased_at=1))
    assert table_snapshot(db) == before


def test_forget_twice_answers_the_first_result_and_writes_nothing(db: MemoryDb) -> None:
    secret = fill(db)
    first = db.forget(m.ForgetRequest(**SCOPE, source_id=secret.source_id, erased_at=300))
    before = table_snapshot(db)
    again = db.forget(m.ForgetRequest(**SCOPE, source_id=secret.source_id, erased_at=999))
    assert again == first
    assert table_snapshot(db) == before
    # The replay of the forgotten capture's ingestion key cannot store the text again.
    with pytest.raises(NotFound):
        db.remember(
            m.RememberRequest.model_validate(
                {
                    **SCOPE,
                    "kind": "conversation",
                    "text": TEXT,
                    "captured_at": 200,
                    "recorded_at": 200,
                    "ingestion_key": "turn-200",
                }
            )
        )


def test_a_claim_with_other_live_support_keeps_its_statement(db: MemoryDb) -> None:
    secret = fill(db)
    assert secret.claim_id is not None
    other = db.remember(
        m.RememberRequest.model_validate(
            {**SCOPE, "kind": "document", "text": "badge", "captured_at": 210, "recorded_at": 210}
        )
    )
    db.link(
        m.LinkRequest.model_validate(
            {
                **SCOPE,
                "claim_id": secret.claim_id,
                "evidence_id": other.evidence_id,
                "relation": "supports",
                "confidence_basis_points": 9000,
            }
        )
    )
    result = db.forget(m.ForgetRequest(**SCOPE, source_id=secret.source_id, erased_at=300))
    assert result.claim_ids == [] and result.profile_entry_ids == []
    item = db.get(
        m.GetRequest.model_validate({**SCOPE, "target": {"kind": "claim", "id": secret.claim_id}})
    )
    assert item.excerpt == "Sam favourite zanzibarquokka marmalade-pilot"
    assert item.evidence_ids == [other.evidence_id]
    # The capture itself is gone from every read.
    with pytest.raises(NotFound):
        db.get(
            m.GetRequest.model_validate(
                {**SCOPE, "target": {"kind": "source", "id": secret.source_id}}
            )
        )


def test_a_hosts_now_for_forget_never_predates_what_it_erases(db: MemoryDb) -> None:
    from zkr.operations import OPERATIONS
    from zkr.tools import tool_request

    secret = fill(db)  # recorded at 200, its claim too
    forget = OPERATIONS["forget"]
    early = tool_request(
        forget, {"source_id": secret.source_id}, tenant_id="a", person_id="sam", now=5, db=db
    )
    assert isinstance(early, m.ForgetRequest) and early.erased_at == 201
    db.delete(m.DeleteRequest(**SCOPE, source_id=secret.source_id, deleted_at=250))
    after_delete = tool_request(
        forget, {"source_id": secret.source_id}, tenant_id="a", person_id="sam", now=5, db=db
    )
    assert isinstance(after_delete, m.ForgetRequest) and after_delete.erased_at == 250
    db.forget(after_delete)
    late = tool_request(
        forget, {"source_id": secret.source_id}, tenant_id="a", person_id="sam", now=999, db=db
    )
    assert isinstance(late, m.ForgetRequest) and late.erased_at == 999
