"""``apply``: replicating a scope's export feed into another database (issue 5, acceptance 2).

Pages travel as the CLI would carry them (JSON with sorted keys) and go through the operation table,
so the request model, the validation and the result are the ones every host uses.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tests.core.conftest import table_snapshot
from zkr import operations
from zkr.db import MemoryDb
from zkr.errors import ExportError, InvalidRequest, NotFound, ZkrError
from zkr.feed import apply as replicate
from zkr.jsonio import canonical_dumps

SCOPES = [("acme", "sam"), ("acme", "max"), ("globex", "sam"), ("tenant-é", "person-☃")]
LOCATOR = {
    "device_id": "omi-1",
    "provider": "deepgram",
    "stream_id": "stream-1",
    "segment_id": "segment-4",
    "start_ms": 1200,
    "end_ms": 2900,
}


def run(db: MemoryDb, command: str, tenant: str, person: str, **payload: Any) -> Any:
    return operations.run(db, command, {"tenant_id": tenant, "person_id": person, **payload})


def claim(subject: str, predicate: str, value: str, kind: str, valid_from: int) -> dict[str, Any]:
    return {
        "subject": subject,
        "predicate": predicate,
        "value": value,
        "kind": kind,
        "valid_from": valid_from,
    }


def build_scope(db: MemoryDb, tenant: str, person: str, base: int) -> None:
    """Every operation of the contract at least once in this scope, times offset by *base*."""

    def op(command: str, **payload: Any) -> Any:
        return run(db, command, tenant, person, **payload)

    def remember(text: str, at: int, **extra: Any) -> dict[str, Any]:
        return op(  # type: ignore[no-any-return]
            "remember", kind="conversation", text=text, captured_at=at, recorded_at=at, **extra
        )

    t = base
    job = remember(
        f"{person} works at Acme as a data engineer",
        t + 1,
        ingestion_key="turn-0001",
        claim=claim(person, "employer", "Acme", "profile_fact", t + 1),
    )
    assert (
        remember(  # an identical replay: no commit
            f"{person} works at Acme as a data engineer",
            t + 1,
            ingestion_key="turn-0001",
            claim=claim(person, "employer", "Acme", "profile_fact", t + 1),
        )
        == job
    )
    audio = op(
        "remember",
        kind="audio",
        text="Let's move the Apollo sync to Thursday at 3pm",
        captured_at=t + 2,
        recorded_at=t + 2,
        ingestion_key="audio-1",
        locator=LOCATOR,
    )
    doc = op(
        "remember",
        kind="document",
        text="HR record: works at Globex since 2020",
        captured_at=t + 3,
        recorded_at=t + 3,
    )
    badge = remember("Badge photo at the Acme office", t + 4)
    op(
        "link",
        claim_id=job["claim_id"],
        evidence_id=doc["evidence_id"],
        relation="contradicts",
        confidence_basis_points=8000,
    )
    op(
        "link",
        claim_id=job["claim_id"],
        evidence_id=badge["evidence_id"],
        relation="supports",
        confidence_basis_points=6000,
    )
    milk = remember(
        "prefers oat milk", t + 5, claim=claim(person, "milk", "oat", "preference", t + 5)
    )
    op(
        "correct",
        claim_id=milk["claim_id"],
        text="Actually almond milk now",
        value="almond",
        valid_at=t + 6,
        recorded_at=t + 6,
    )
    task = remember(
        "Call the dentist", t + 7, claim=claim(person, "todo", "dentist", "task", t + 7)
    )
    city = remember(
        "lives in Berlin", t + 8, claim=claim(person, "city", "Berlin", "profile_fact", t + 8)
    )
    op("profile", stability="stable", claim_id=job["claim_id"], recorded_at=t + 9)
    op("profile", stability="current", claim_id=city["claim_id"], recorded_at=t + 9)
    op(
        "review",
        day="2023-11-14",
        summary="Discussed Apollo and the employer",
        evidence_ids=[job["evidence_id"], audio["evidence_id"]],
        recorded_at=t + 10,
    )
    op(
        "review",
        day="2023-11-15",
        summary="The dentist",
        evidence_ids=[task["evidence_id"]],
        recorded_at=t + 11,
    )
    op("delete", source_id=task["source_id"], deleted_at=t + 12)  # retracts, drops the review
    moved = op(
        "correct",
        claim_id=city["claim_id"],
        text="Moved to Munich",
        value="Munich",
        valid_at=t + 13,
        recorded_at=t + 13,
    )  # deletes the city profile entry
    op("profile", stability="current", claim_id=moved["claim_id"], recorded_at=t + 14)
    op("profile", stability="stable", claim_id=job["claim_id"], recorded_at=t + 15)  # replace
    raw = remember("scratch note to forget", t + 16)
    op("delete", source_id=raw["source_id"], deleted_at=t + 17)
    text = f"{person} works at Acme as a data engineer"
    op(
        "embed",
        target={"kind": "evidence", "id": job["evidence_id"]},
        embedding={
            "vector": [0.6, 0.8],
            "model": "mini",
            "version": "1",
            "input_hash": "sha256:" + hashlib.sha256(text.encode()).hexdigest(),
            "normalization": "l2",
            "distance": "cosine",
        },
    )


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Any:
    db = MemoryDb(tmp_path_factory.mktemp("upstream") / "upstream.db")
    for offset, (tenant, person) in enumerate(SCOPES):
        build_scope(db, tenant, person, 1000 * (offset + 1))
    yield db
    db.close()


def as_transported(value: Any) -> Any:
    """What a host receives from ``zkr export``: the JSON text with sorted keys, parsed back."""
    return json.loads(canonical_dumps(value))


def replicate_by_pages(
    source: MemoryDb, target: MemoryDb, tenant: str, person: str, limit: int
) -> list[dict[str, Any]]:
    status = run(target, "apply", tenant, person)
    after = (status["next_after_commit"], status["next_after_event_index"])
    mark = None
    results = []
    while True:
        request: dict[str, Any] = {"export_format": 1, "limit": limit, "high_water_mark": mark}
        request.update(after_commit=after[0], after_event_index=after[1])
        page = as_transported(run(source, "export", tenant, person, **request))
        mark = page["high_water_mark"]
        result = run(
            target,
            "apply",
            tenant,
            person,
            after_commit=after[0],
            after_event_index=after[1],
            page=page,
        )
        results.append(result)
        after = (result["next_after_commit"], result["next_after_event_index"])
        assert after == (page["next_after_commit"], page["next_after_event_index"])
        if page["complete"]:
            return results


def all_pages(db: MemoryDb, tenant: str, person: str, limit: int) -> list[str]:
    pages, after, mark = [], (0, -1), None
    while True:
        page = run(
            db,
            "export",
            tenant,
            person,
            export_format=1,
            after_commit=after[0],
            after_event_index=after[1],
            high_water_mark=mark,
            limit=limit,
        )
        pages.append(canonical_dumps(page))
        mark = page["high_water_mark"]
        after = (page["next_after_commit"], page["next_after_event_index"])
        if page["complete"]:
            return pages


def renumbered(db: MemoryDb, tenant: str, person: str, limit: int) -> list[Any]:
    """:func:`all_pages` with every commit sequence replaced by its rank in the scope's feed."""
    sequences = [
        row[0]
        for row in db.conn.execute(
            "SELECT sequence FROM memory_commits WHERE tenant_id = ? AND person_id = ?"
            " ORDER BY sequence",
            (tenant, person),
        )
    ]
    rank = {0: 0, **{sequence: index + 1 for index, sequence in enumerate(sequences)}}
    pages = []
    for text in all_pages(db, tenant, person, limit):
        page = json.loads(text)
        page["high_water_mark"] = rank[page["high_water_mark"]]
        page["next_after_commit"] = rank[page["next_after_commit"]]
        for commit in page["commits"]:
            commit["sequence"] = rank[commit["sequence"]]
        pages.append(page)
    return pages


def answers(db: MemoryDb, tenant: str, person: str, *, recall: bool = True) -> dict[str, Any]:
    """Everything a reader can ask of one scope, as canonical JSON (errors included); each
    search with the contract ranking and (under the key + " recall") the recall ranking."""

    def ask(command: str, **payload: Any) -> str:
        try:
            return canonical_dumps(run(db, command, tenant, person, **payload))
        except ZkrError as exc:
            return f"error: {exc}"

    def search(key: str, **payload: Any) -> None:
        result[key] = ask("search", **payload, ranking="contract")
        if recall:
            # The recall ranking's relevance is a share of bm25 scores, whose statistics count
            # every scope of the file: a replica holding one scope of the upstream's several
            # answers the same items in the same order with other numbers.
            answer = ask("search", **payload, ranking="recall")
            if not answer.startswith("error: "):
                pack = json.loads(answer)
                for item in pack["items"]:
                    del item["relevance_basis_points"]
                answer = canonical_dumps(pack)
            result[key + " recall"] = answer

    ids = {
        kind: [row[0] for row in db.conn.execute(
            f"SELECT id FROM {table} WHERE tenant_id = ? AND person_id = ? ORDER BY id",
            (tenant, person),
        )]
        for kind, table in (("source", "sources"), ("evidence", "evidence"), ("claim", "claims"))
    }  # fmt: skip
    result: dict[str, Any] = {
        "profiles": ask("profiles", limit=100),
        "reviews": ask("reviews", limit=100),
    }
    for query in ("Acme", "Apollo Thursday", "milk", "almond", "oat milk", "dentist", "Munich",
                  "Berlin", "Where does he work at Acme?", "scratch", "Globex"):  # fmt: skip
        search(f"search {query}", query=query, limit=10)
    search("as_of", query="milk Berlin", as_of={"valid_at": 10**6, "recorded_at": 10**6})
    # History: before and after each correction and deletion of build_scope, and with the valid
    # and recorded axes apart.
    moments: list[tuple[int, int]] = []
    if (tenant, person) in SCOPES:
        t = 1000 * (SCOPES.index((tenant, person)) + 1)
        moments = [(t + k, t + k) for k in (0, 1, 5, 6, 8, 11, 12, 13, 16, 17)]
        moments += [(t + 5, t + 13), (t + 13, t + 5)]
    for valid_at, recorded_at in moments:
        for query in ("milk", "Berlin Munich", "dentist", "Acme", "Apollo Thursday", "scratch"):
            search(
                f"as_of {valid_at} {recorded_at} {query}",
                query=query,
                as_of={"valid_at": valid_at, "recorded_at": recorded_at},
            )
    for kind, kind_ids in ids.items():
        for target_id in kind_ids:
            result[f"get {kind} {target_id}"] = ask("get", target={"kind": kind, "id": target_id})
    for evidence_id in ids["evidence"]:
        result[f"locator {evidence_id}"] = ask("locator", evidence_id=evidence_id)
    return result


def rows_outside(db: MemoryDb, tenant: str, person: str) -> int:
    total = 0
    tables = (
        "sources", "evidence", "claims", "claim_evidence", "corrections", "profile_entries",
        "daily_reviews", "memory_commits", "evidence_locators",
    )  # fmt: skip
    for table in tables:
        total += db.conn.execute(
            f"SELECT count(*) FROM {table} WHERE NOT (tenant_id = ? AND person_id = ?)",
            (tenant, person),
        ).fetchone()[0]
    total += db.conn.execute(
        "SELECT count(*) FROM source_fts WHERE NOT (tenant_id = ? AND person_id = ?)",
        (tenant, person),
    ).fetchone()[0]
    return total


# ----------------------------------------------------------------------------------------------
# Acceptance 2: the round trip
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("limit", [1, 2, 7, 100])
@pytest.mark.parametrize("scope", SCOPES, ids=lambda s: "/".join(s))
def test_round_trip_builds_the_same_memory(
    upstream: MemoryDb, tmp_path: Path, scope: tuple[str, str], limit: int
) -> None:
    tenant, person = scope
    with MemoryDb(tmp_path / "replica.db") as replica:
        results = replicate_by_pages(upstream, replica, tenant, person, limit)
        commits = upstream.conn.execute(
            "SELECT count(*) FROM memory_commits WHERE tenant_id = ? AND person_id = ?", scope
        ).fetchone()[0]
        assert sum(r["applied_commits"] for r in results) == commits
        for page_limit in (1, 2, 7, 100):
            # The replica numbers commits locally (issue 18): equal pages up to that numbering.
            assert renumbered(replica, tenant, person, page_limit) == renumbered(
                upstream, tenant, person, page_limit
            )
        expected = answers(upstream, tenant, person)
        assert '"kind":"claim"' in expected["search Acme"]  # the scenario has real answers
        assert '"Munich"' in expected["profiles"] and '"id"' in expected["reviews"]
        # The past is really different from the present (so comparing it proves something).
        base = 1000 * (SCOPES.index(scope) + 1)
        assert expected[f"as_of {base + 5} {base + 5} milk"] != expected["search milk"]
        assert "milk oat" in expected[f"as_of {base + 5} {base + 5} milk"]
        assert "Berlin" in expected[f"as_of {base + 12} {base + 12} Berlin Munich"]
        assert answers(replica, tenant, person) == expected
        assert rows_outside(replica, tenant, person) == 0
        for other in SCOPES:
            if other != scope:
                page = run(replica, "export", *other, export_format=1)
                assert page["commits"] == [] and page["high_water_mark"] == 0
        assert replica.conn.execute("SELECT count(*) FROM replica_staging").fetchone() == (0,)
        assert replica.conn.execute("SELECT count(*) FROM embeddings").fetchone() == (0,)


def test_several_scopes_into_one_replica_keep_records_and_times(
    upstream: MemoryDb, tmp_path: Path
) -> None:
    with MemoryDb(tmp_path / "replica.db") as replica:
        for scope in reversed(SCOPES):  # not in sequence order: later scopes get local numbers
            replicate.sync(upstream, replica, *scope, limit=7)
        for scope in SCOPES:
            assert answers(replica, *scope) == answers(upstream, *scope)
            assert commits_without_sequences(replica, *scope) == commits_without_sequences(
                upstream, *scope
            )


def commits_without_sequences(db: MemoryDb, tenant: str, person: str) -> list[Any]:
    page = run(db, "export", tenant, person, export_format=1, limit=100)
    assert page["complete"]
    return [
        (c["recorded_at"], c["event_count"], c["first_event_index"], c["records"])
        for c in page["commits"]
    ]


# ----------------------------------------------------------------------------------------------
# The protocol: replay, gaps, mismatches, resumption
# ----------------------------------------------------------------------------------------------


def pages_of(db: MemoryDb, tenant: str, person: str, limit: int) -> list[tuple[Any, Any]]:
    """``(cursor, page)`` pairs of a frozen export, as a host would send them to ``apply``."""
    pairs, after, mark = [], (0, -1), None
    while True:
        page = as_transported(
            run(db, "export", tenant, person, export_format=1, limit=limit,
                after_commit=after[0], after_event_index=after[1], high_water_mark=mark)
        )  # fmt: skip
        pairs.append((after, page))
        mark = page["high_water_mark"]
        after = (page["next_after_commit"], page["next_after_event_index"])
        if page["complete"]:
            return pairs


def send(db: MemoryDb, cursor: tuple[int, int], page: Any, upstream_id: str = "") -> Any:
    return run(
        db,
        "apply",
        "acme",
        "sam",
        upstream=upstream_id,
        after_commit=cursor[0],
        after_event_index=cursor[1],
        page=page,
    )


@pytest.fixture
def replica(tmp_path: Path) -> Any:
    db = MemoryDb(tmp_path / "replica.db")
    yield db
    db.close()


def test_replaying_applied_pages_changes_nothing(upstream: MemoryDb, replica: MemoryDb) -> None:
    pairs = pages_of(upstream, "acme", "sam", 7)
    for cursor, page in pairs:
        send(replica, cursor, page)
    before = table_snapshot(replica)
    changes = replica.conn.total_changes
    for cursor, page in pairs:
        result = send(replica, cursor, page)
        assert (result["applied_commits"], result["received_events"]) == (0, 0)
    assert replica.conn.total_changes == changes
    assert table_snapshot(replica) == before


def test_a_split_commit_waits_in_staging_until_whole(upstream: MemoryDb, replica: MemoryDb) -> None:
    pairs = pages_of(upstream, "acme", "sam", 1)
    first_commit = pairs[0][1]["commits"][0]
    assert first_commit["event_count"] == 4
    for cursor, page in pairs[:3]:
        result = send(replica, cursor, page)
        assert result["applied_commits"] == 0
    assert result["pending_events"] == 3
    assert replicate.position(replica, "acme", "sam") == (first_commit["sequence"], 2)
    assert replica.conn.execute("SELECT count(*) FROM sources").fetchone() == (0,)
    assert replica.conn.execute("SELECT count(*) FROM memory_commits").fetchone() == (0,)
    # Re-sending a staged event is harmless; the fourth event completes and applies the commit.
    send(replica, *pairs[2])
    result = send(replica, *pairs[3])
    assert (result["applied_commits"], result["pending_events"]) == (1, 0)
    assert result["applied_commit"] == first_commit["sequence"]
    assert replica.conn.execute("SELECT count(*) FROM replica_staging").fetchone() == (0,)


def test_a_gap_is_refused_and_applies_nothing(upstream: MemoryDb, replica: MemoryDb) -> None:
    pairs = pages_of(upstream, "acme", "sam", 2)
    send(replica, *pairs[0])
    before = table_snapshot(replica)
    with pytest.raises(ExportError, match="does not continue the applied feed"):
        send(replica, *pairs[2])  # pairs[1] was never applied
    assert table_snapshot(replica) == before
    # A page whose own cursor was forged to look continuous still cannot skip events.
    with pytest.raises(ExportError, match="skips events"):
        send(replica, pairs[1][0], pairs[2][1])
    assert table_snapshot(replica) == before


def test_a_count_mismatch_is_refused_and_applies_nothing(
    upstream: MemoryDb, replica: MemoryDb
) -> None:
    pairs = pages_of(upstream, "acme", "sam", 2)
    send(replica, *pairs[0])  # half of the first commit staged, event_count 4
    before = table_snapshot(replica)
    cursor, page = pairs[1]
    page["commits"][0]["event_count"] = 5
    with pytest.raises(ExportError, match="event count does not match"):
        send(replica, cursor, page)
    assert table_snapshot(replica) == before


def test_a_commit_that_claims_fewer_events_than_it_carries_is_refused(
    upstream: MemoryDb, replica: MemoryDb
) -> None:
    cursor, page = pages_of(upstream, "acme", "sam", 100)[0]
    page["commits"][0]["event_count"] = 3
    with pytest.raises(ExportError, match="skips events"):
        send(replica, cursor, page)
    assert replica.conn.execute("SELECT count(*) FROM sources").fetchone() == (0,)


def test_a_changed_event_is_refused(upstream: MemoryDb, replica: MemoryDb) -> None:
    pairs = pages_of(upstream, "acme", "sam", 3)
    send(replica, *pairs[0])
    cursor, page = pairs[0]
    page["commits"][0]["records"][1]["record"]["evidence"]["quote"] = "forged"
    with pytest.raises(ExportError, match="changed since staged"):
        send(replica, cursor, page)


def test_records_of_another_scope_are_refused(upstream: MemoryDb, replica: MemoryDb) -> None:
    cursor, page = pages_of(upstream, "acme", "sam", 100)[0]
    page["commits"][0]["records"][2]["record"]["tenant_id"] = "globex"
    with pytest.raises(ExportError, match=r"^export record scope does not match its commit$"):
        send(replica, cursor, page)
    assert table_snapshot(replica)["replica_staging"] == []


def test_an_id_of_another_scope_is_never_taken_over(upstream: MemoryDb, replica: MemoryDb) -> None:
    cursor, page = pages_of(upstream, "acme", "sam", 100)[0]
    source = page["commits"][0]["records"][0]["record"]["source"]
    replica.conn.execute(
        "INSERT INTO sources(id, tenant_id, person_id, revision, kind, content, captured_at,"
        " recorded_at) VALUES (?, 'globex', 'sam', 1, '\"conversation\"', 'mine', 1, 1)",
        (source["id"],),
    )
    # Refused like any record the scope cannot take, without saying that another scope exists.
    with pytest.raises(ExportError, match=rf"^export record {source['id']} cannot be applied$"):
        send(replica, cursor, page)
    assert replica.conn.execute("SELECT tenant_id FROM sources").fetchall() == [("globex",)]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"export_format": 2}, "unsupported export_format 2; expected 1"),
        ({"database_schema_version": 9}, "unsupported database_schema_version 9; expected 8"),
    ],
)
def test_unsupported_pages_are_refused(
    upstream: MemoryDb, replica: MemoryDb, change: dict[str, Any], message: str
) -> None:
    cursor, page = pages_of(upstream, "acme", "sam", 100)[0]
    page.update(change)
    with pytest.raises(ExportError) as caught:
        send(replica, cursor, page)
    assert str(caught.value) == message


def test_a_page_needs_the_cursor_it_was_exported_with(
    upstream: MemoryDb, replica: MemoryDb
) -> None:
    _, page = pages_of(upstream, "acme", "sam", 100)[0]
    with pytest.raises(InvalidRequest, match="needs the after_commit and after_event_index"):
        run(replica, "apply", "acme", "sam", page=page)
    with pytest.raises(InvalidRequest, match=r"^tenant_id must not be empty$"):
        run(replica, "apply", " ", "sam")


def test_upstreams_have_separate_cursors(upstream: MemoryDb, replica: MemoryDb) -> None:
    pairs = pages_of(upstream, "acme", "sam", 100)
    send(replica, *pairs[0], upstream_id="laptop")
    assert replicate.position(replica, "acme", "sam", "laptop") != (0, -1)
    assert replicate.position(replica, "acme", "sam", "phone") == (0, -1)


def test_local_writes_do_not_break_replication(upstream: MemoryDb, replica: MemoryDb) -> None:
    # A replica with its own commits cannot keep upstream's numbers; records and times still match.
    for index in range(40):
        run(replica, "remember", "local", "me", kind="conversation", text=f"local {index}",
            captured_at=1, recorded_at=1)  # fmt: skip
    replicate.sync(upstream, replica, "acme", "sam", limit=5)
    assert commits_without_sequences(replica, "acme", "sam") == commits_without_sequences(
        upstream, "acme", "sam"
    )
    # The contract ranking's answers depend only on the scope's records. The recall ranking's
    # bm25 reads its index's statistics over every scope, so the replica's own "local" scope may
    # reorder the same records there: only the contract's answers are compared.
    sam = answers(replica, "acme", "sam", recall=False)
    assert sam == answers(upstream, "acme", "sam", recall=False)
    # Later upstream commits keep arriving incrementally.
    build_scope(upstream, "acme", "new", 9000)
    replicate.sync(upstream, replica, "acme", "new", limit=3)
    new = answers(replica, "acme", "new", recall=False)
    assert new == answers(upstream, "acme", "new", recall=False)


def test_resuming_after_new_upstream_commits(tmp_path: Path) -> None:
    with MemoryDb(tmp_path / "up.db") as up, MemoryDb(tmp_path / "down.db") as down:
        run(up, "remember", "a", "sam", kind="conversation", text="first", captured_at=1,
            recorded_at=1)  # fmt: skip
        first = replicate.sync(up, down, "a", "sam", limit=1)
        assert first.applied_commit == 1
        assert replicate.sync(up, down, "a", "sam").applied_commits == 0
        memory = run(up, "remember", "a", "sam", kind="conversation", text="second",
                     captured_at=2, recorded_at=2)  # fmt: skip
        run(up, "delete", "a", "sam", source_id=memory["source_id"], deleted_at=3)
        replicate.sync(up, down, "a", "sam", limit=2)
        assert all_pages(down, "a", "sam", 2) == all_pages(up, "a", "sam", 2)
        with pytest.raises(NotFound):
            run(down, "get", "a", "sam", target={"kind": "source", "id": memory["source_id"]})
        assert down.conn.execute("SELECT count(*) FROM source_fts").fetchone() == (1,)
