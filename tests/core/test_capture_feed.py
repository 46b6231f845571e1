"""``remember`` writes its feed records and FTS row from the values in hand (issue 27.2): they are
exactly what the stored rows say.

A feed record is the snapshot of a row after the mutation (contract §7.3); :mod:`zkr.store.records`
reads it back from the row through the models, as every other operation's records are read. Here
each drawn ``remember`` is followed by that reading: the commit's stored payloads must equal the
serialized snapshots of its source, evidence (with its locator), claim and link, byte for byte,
and its ``source_fts`` row must be the one :func:`zkr.store.fts_rows.index_source` writes (the
source's rowid and columns). Texts cover escapes, non-ASCII, line separators and astral
characters; times and offsets the whole storage range.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from zkr import models as m
from zkr.db import MemoryDb
from zkr.enums import I64_MAX, I64_MIN
from zkr.errors import ConflictError
from zkr.store.commits import serialize_record
from zkr.store.records import (
    ExportRecord,
    claim_evidence_record,
    claim_record,
    evidence_record,
    source_record,
)

_CHARACTERS = st.characters(blacklist_categories=("Cs",))  # no lone surrogates (refused)
text = st.one_of(
    st.text(_CHARACTERS, min_size=1, max_size=30),
    st.sampled_from(['say "hi"', "a\\b\n\tc", "\u2028\u2029", "日本語", "🙂 ok", "\x00x", "é"]),
).filter(lambda value: value.strip() != "")
timestamp = st.one_of(st.integers(I64_MIN, I64_MAX), st.integers(0, 2_000_000_000))
claims = st.fixed_dictionaries(
    {
        "subject": text,
        "predicate": text,
        "value": text,
        "kind": st.sampled_from([kind.value for kind in m.ClaimKind]),
        "valid_from": timestamp,
    }
)
locators = st.tuples(text, text, text, text, st.integers(0, 2**63 - 1), st.integers(0, 2**20))
requests = st.fixed_dictionaries(
    {
        "tenant_id": st.sampled_from(["t", "tenant é"]),
        "person_id": st.sampled_from(["p", '"q"']),
        "kind": st.sampled_from([kind.value for kind in m.SourceKind]),
        "text": text,
        "captured_at": timestamp,
        "recorded_at": timestamp,
    },
    optional={
        "ingestion_key": st.one_of(st.none(), text),
        "claim": st.one_of(st.none(), claims),
        "locator": st.one_of(st.none(), locators),
    },
)


def _request(drawn: dict[str, Any]) -> m.RememberRequest:
    payload = dict(drawn)
    located = payload.get("locator")
    if located is not None:
        device, provider, stream, segment, start, length = located
        payload["locator"] = {
            "device_id": device,
            "provider": provider,
            "stream_id": stream,
            "segment_id": segment,
            "start_ms": start,
            "end_ms": min(start + length, 2**63 - 1),
        }
    return m.RememberRequest.model_validate(payload)


def _snapshots(db: MemoryDb, result: m.RememberResult, request: m.RememberRequest) -> list[str]:
    """The commit's records as zkr.store.records reads them from the stored rows."""
    conn = db.conn
    records: list[ExportRecord] = [
        source_record(conn, result.source_id),
        evidence_record(conn, result.evidence_id),
    ]
    if result.claim_id is not None:
        records.append(claim_record(conn, result.claim_id))
        records.append(
            claim_evidence_record(
                conn, request.tenant_id, request.person_id, result.claim_id, result.evidence_id
            )
        )
    return [serialize_record(record) for record in records]


@settings(max_examples=120, deadline=None)
@given(st.lists(requests, min_size=1, max_size=4))
def test_remember_feed_records_are_the_snapshots_of_its_rows(drawn: list[dict[str, Any]]) -> None:
    with MemoryDb(":memory:") as db:
        for item in drawn:
            request = _request(item)
            (before,) = db.conn.execute("SELECT coalesce(max(sequence), 0) FROM memory_commits")
            try:
                result = db.remember(request)
            except ConflictError:  # a reused key with another payload: nothing was written
                continue
            stored = [
                payload
                for (payload,) in db.conn.execute(
                    "SELECT payload FROM memory_export_events WHERE commit_sequence > ?"
                    " ORDER BY commit_sequence, event_index",
                    (before[0],),
                )
            ]
            if not stored:  # a replay: no commit, nothing to compare
                continue
            assert stored == _snapshots(db, result, request)
            fts = db.conn.execute(
                "SELECT rowid, source_id, tenant_id, person_id, content FROM source_fts"
                " WHERE source_id = ?",
                (result.source_id,),
            ).fetchall()
            source = db.conn.execute(
                "SELECT rowid, id, tenant_id, person_id, content FROM sources WHERE id = ?",
                (result.source_id,),
            ).fetchall()
            assert fts == source
