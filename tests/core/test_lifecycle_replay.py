"""Replaying the reference fixture's history through our lifecycle gives the reference's feed.

``zkr-0.2.3-v8.db`` was written by zkr 0.2.3 with one CLI call per commit. Its expected file holds
every scope's export feed. Each commit is turned back into the request that made it (remember,
link, correct, delete, profile, review), run in sequence order on an empty database, and the feed,
row counts and ``profiles``/``reviews`` listings we produce must equal the reference's once its
ids are reproduced: the replay hands our id generator the reference's ids in creation order (so
that id-dependent choices, such as the smallest supporting evidence a search cites, are the same),
and the stored payloads must then be byte-identical to the reference database's.
"""

from __future__ import annotations

import importlib
import json
import sqlite3
from typing import Any

import pytest

from tests.conftest import missing_shared, shared_dir
from zkr import models as m
from zkr.db import MemoryDb

# The modules, not zkr.writes' handler functions of the same name (``zkr.writes.profiles``).
capture = importlib.import_module("zkr.writes.capture")
profiles = importlib.import_module("zkr.writes.profiles")

FIXTURES = shared_dir() / "fixtures"
EXPECTED = FIXTURES / "zkr-0.2.3-v8.expected.json"
REFERENCE_DB = FIXTURES / "zkr-0.2.3-v8.db"


# Module scope, so that it runs (and skips) before the module-scoped fixtures that read the files.
@pytest.fixture(scope="module", autouse=True)
def _reference_fixture() -> None:
    if not (EXPECTED.exists() and REFERENCE_DB.exists()):
        missing_shared("the zkr 0.2.3 reference fixture")


class Replayer:
    def __init__(self, db: MemoryDb) -> None:
        self.db = db
        self.ids: dict[str, str] = {}  # reference id -> our id
        #: The ids the next operation will be given, in the order it creates its rows.
        self.pending: list[str] = []

    def next_id(self) -> str:
        return self.pending.pop(0)

    def map(self, value: Any) -> Any:
        """Replace every reference id inside *value* with ours."""
        if isinstance(value, str):
            return self.ids.get(value, value)
        if isinstance(value, dict):
            return {k: self.map(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.map(v) for v in value]
        return value

    def learn(self, reference: str, ours: str) -> None:
        assert self.ids.setdefault(reference, ours) == ours

    def replay(self, commit: dict[str, Any]) -> None:
        records = commit["records"]
        kinds = [r["kind"] for r in records]
        by_kind = {r["kind"]: r["record"] for r in reversed(records)}  # first of each kind
        if "correction" in kinds:
            self.correct(records)
        elif kinds[:2] == ["source", "deletion"]:
            self.delete(by_kind["source"])
        elif kinds[:2] == ["source", "evidence"]:
            self.remember(by_kind["source"], by_kind["evidence"], by_kind.get("claim"))
        elif kinds == ["claim_evidence"]:
            self.link(by_kind["claim_evidence"])
        elif kinds == ["profile"]:
            self.profile(by_kind["profile"])
        elif kinds == ["daily_review"]:
            self.review(by_kind["daily_review"])
        else:  # pragma: no cover - the fixture holds only the shapes above
            raise AssertionError(f"unexpected commit shape {kinds}")
        assert self.pending == []

    def remember(
        self, source: dict[str, Any], evidence: dict[str, Any], claim: dict[str, Any] | None
    ) -> None:
        inner = source["source"]
        request: dict[str, Any] = {
            "tenant_id": inner["tenant_id"],
            "person_id": inner["person_id"],
            "kind": inner["kind"],
            "text": inner["content"],
            "captured_at": inner["captured_at"],
            "recorded_at": inner["recorded_at"],
            "ingestion_key": source["ingestion_key"],
            "locator": evidence["locator"],
        }
        if claim is not None:
            request["claim"] = {
                "subject": claim["subject"],
                "predicate": claim["predicate"],
                "value": claim["value"],
                "kind": claim["kind"],
                "valid_from": claim["valid_time"]["from"],
            }
        self.pending = [inner["id"], evidence["evidence"]["id"]] + ([claim["id"]] if claim else [])
        result = self.db.remember(m.RememberRequest.model_validate(request))
        self.learn(inner["id"], result.source_id)
        self.learn(evidence["evidence"]["id"], result.evidence_id)
        if claim is not None:
            assert result.claim_id is not None
            self.learn(claim["id"], result.claim_id)

    def link(self, record: dict[str, Any]) -> None:
        self.db.link(m.LinkRequest.model_validate(self.map(record)))

    def correct(self, records: list[dict[str, Any]]) -> None:
        source = records[0]["record"]["source"]
        new_claim = records[3]["record"]
        correction = records[5]["record"]
        self.pending = [correction["source_id"], correction["evidence_id"], correction["claim_id"]]
        result = self.db.correct(
            m.CorrectRequest(
                tenant_id=correction["tenant_id"],
                person_id=correction["person_id"],
                claim_id=self.ids[correction["superseded_claim_id"]],
                text=source["content"],
                value=new_claim["value"],
                valid_at=correction["valid_at"],
                recorded_at=correction["recorded_at"],
            )
        )
        self.learn(correction["source_id"], result.source_id)
        self.learn(correction["evidence_id"], result.evidence_id)
        self.learn(correction["claim_id"], result.claim_id)

    def delete(self, source: dict[str, Any]) -> None:
        inner = source["source"]
        self.db.delete(
            m.DeleteRequest(
                tenant_id=inner["tenant_id"],
                person_id=inner["person_id"],
                source_id=self.ids[inner["id"]],
                deleted_at=inner["deleted_at"],
            )
        )

    def profile(self, record: dict[str, Any]) -> None:
        self.pending = [record["id"]]  # used only when the key has no entry yet
        entry = self.db.profile(
            m.ProfileRequest(
                tenant_id=record["tenant_id"],
                person_id=record["person_id"],
                stability=record["stability"],
                claim_id=self.ids[record["claim_id"]],
                recorded_at=record["recorded_at"],
            )
        )
        self.pending = []
        self.learn(record["id"], entry.id)

    def review(self, record: dict[str, Any]) -> None:
        self.pending = [record["id"]]
        result = self.db.review(
            m.ReviewRequest(
                tenant_id=record["tenant_id"],
                person_id=record["person_id"],
                day=record["day"],
                summary=record["summary"],
                evidence_ids=[self.ids[e] for e in record["evidence_ids"]],
                recorded_at=record["recorded_at"],
            )
        )
        self.learn(record["id"], result.id)


def our_feed(db: MemoryDb, tenant: str, person: str) -> list[dict[str, Any]]:
    commits = []
    for sequence, recorded_at in db.conn.execute(
        "SELECT sequence, recorded_at FROM memory_commits WHERE tenant_id = ? AND person_id = ?"
        " ORDER BY sequence",
        (tenant, person),
    ).fetchall():
        records = [
            json.loads(row[0])
            for row in db.conn.execute(
                "SELECT payload FROM memory_export_events WHERE commit_sequence = ?"
                " ORDER BY event_index",
                (sequence,),
            )
        ]
        commits.append({"sequence": sequence, "recorded_at": recorded_at, "records": records})
    return commits


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> tuple[MemoryDb, Replayer, Any]:
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    commits = [
        commit
        for scope in expected["scopes"]
        for page in scope["export_pages"]
        for commit in page["response"]["commits"]
    ]
    db = MemoryDb(tmp_path_factory.mktemp("replay") / "memory.db")
    replayer = Replayer(db)
    with pytest.MonkeyPatch.context() as patch:
        for module in (capture, profiles):
            patch.setattr(module, "new_id", replayer.next_id)
        for commit in sorted(commits, key=lambda c: c["sequence"]):
            replayer.replay(commit)
    assert all(ours == reference for reference, ours in replayer.ids.items())
    return db, replayer, expected


def test_replayed_feed_equals_the_reference_feed(replayed: tuple[MemoryDb, Replayer, Any]) -> None:
    db, replayer, expected = replayed
    for scope in expected["scopes"]:
        reference = [
            {
                "sequence": commit["sequence"],
                "recorded_at": commit["recorded_at"],
                "records": replayer.map(commit["records"]),
            }
            for page in scope["export_pages"]
            for commit in page["response"]["commits"]
        ]
        assert our_feed(db, scope["tenant_id"], scope["person_id"]) == reference


def test_replayed_payloads_are_byte_identical_to_the_reference_database(
    replayed: tuple[MemoryDb, Replayer, Any],
) -> None:
    db, _, _ = replayed
    query = (
        "SELECT c.sequence, c.tenant_id, c.person_id, c.recorded_at, e.event_index, e.payload"
        " FROM memory_commits c JOIN memory_export_events e ON e.commit_sequence = c.sequence"
        " ORDER BY c.sequence, e.event_index"
    )
    reference = sqlite3.connect(f"{REFERENCE_DB.as_uri()}?mode=ro", uri=True)
    try:
        expected = reference.execute(query).fetchall()
    finally:
        reference.close()
    assert db.conn.execute(query).fetchall() == expected


AUTHORITATIVE_TABLES = [
    "sources",
    "evidence",
    "evidence_locators",
    "claims",
    "claim_evidence",
    "corrections",
    "profile_entries",
    "daily_reviews",
]


@pytest.mark.parametrize("table", AUTHORITATIVE_TABLES)
def test_replayed_rows_are_identical_to_the_reference_database(
    replayed: tuple[MemoryDb, Replayer, Any], table: str
) -> None:
    db, _, _ = replayed
    query = f"SELECT * FROM {table}"
    reference = sqlite3.connect(f"{REFERENCE_DB.as_uri()}?mode=ro", uri=True)
    try:
        expected = sorted(reference.execute(query).fetchall(), key=repr)
    finally:
        reference.close()
    assert sorted(db.conn.execute(query).fetchall(), key=repr) == expected


def test_replayed_row_counts_equal_the_reference(
    replayed: tuple[MemoryDb, Replayer, Any],
) -> None:
    db, _, expected = replayed
    for table, count in expected["table_row_counts"].items():
        if table == "embeddings":
            continue  # embed calls write no feed commit, so they are not replayed
        assert db.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == count, table


@pytest.mark.parametrize("listing", ["profiles", "reviews"])
def test_replayed_listings_equal_the_reference(
    replayed: tuple[MemoryDb, Replayer, Any], listing: str
) -> None:
    db, replayer, expected = replayed
    model = m.ProfilesRequest if listing == "profiles" else m.ReviewsRequest
    for scope in expected["scopes"]:
        call = scope[listing]
        result = getattr(db, listing)(model.model_validate(call["request"]))
        ours = [item.model_dump(mode="json") for item in result]
        assert ours == replayer.map(call["response"]), (scope["tenant_id"], scope["person_id"])


def test_replayed_lexical_searches_equal_the_reference(
    replayed: tuple[MemoryDb, Replayer, Any],
) -> None:
    db, replayer, expected = replayed
    checked = 0
    for scope in expected["scopes"]:
        for call in scope["searches"]:
            if call["request"].get("query_embedding") is not None:
                continue  # the fixture's vectors are not replayed
            pack = db.search(m.SearchRequest.model_validate(call["request"]))
            assert pack.model_dump(mode="json") == replayer.map(call["response"]), call["request"]
            checked += 1
    assert checked > 0
