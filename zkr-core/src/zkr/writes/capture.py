"""Storing captures: ``remember`` (contract §4.1), ``locator`` (§4.2) and the row writers that
``correct`` reuses for its correction capture.

Column encodings are the contract's mixed ones (§3.2): source kind and relation are stored
JSON-quoted (``'"conversation"'``, ``'"supports"'``), claim kind and status bare.
"""

from __future__ import annotations

import json
import sqlite3

from zkr import models as m
from zkr.errors import ConflictError, InvalidRequest, NotFound
from zkr.store.commits import append_payloads
from zkr.store.fts_rows import index_new_source, index_source
from zkr.store.recall_backlog import defer_capture
from zkr.store.records import stored_locator
from zkr.store.validation import is_blank, new_id, require_scope, require_text
from zkr.writes.capture_feed import FULL_CONFIDENCE, capture_payloads

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from zkr.store.database import Database

__all__ = [
    "CLAIM_COLUMNS",
    "CLAIM_EVIDENCE_COLUMNS",
    "EVIDENCE_COLUMNS",
    "FULL_CONFIDENCE",
    "INSERT_CLAIM",
    "INSERT_CLAIM_EVIDENCE",
    "INSERT_EVIDENCE",
    "INSERT_LOCATOR",
    "INSERT_SOURCE",
    "LOCATOR_COLUMNS",
    "SET_ORIGINS",
    "SOURCE_COLUMNS",
    "SUPPORTS",
    "capture_id",
    "claim_row",
    "evidence_row",
    "insert_claim",
    "insert_evidence",
    "is_erased",
    "is_stored",
    "locator",
    "locator_row",
    "remember",
    "remember_claim_row",
    "require_claim_text",
    "set_origins",
    "source_row",
    "supports_row",
    "validate_remember",
]

#: ``claim_evidence.relation`` of a supporting link, as stored (JSON-quoted).
SUPPORTS = json.dumps(m.EvidenceRelation.supports.value)
_I64_MAX = 2**63 - 1


# ----------------------------------------------------------------------------------------------
# Rows of a new capture: each table's columns written once, as data, for the one-by-one writers
# below and the bulk writer (zkr.writes.bulk), which run the very same statements.
# ----------------------------------------------------------------------------------------------

SOURCE_COLUMNS = (
    "id",
    "tenant_id",
    "person_id",
    "revision",
    "kind",
    "content",
    "captured_at",
    "recorded_at",
    "deleted_at",
    "ingestion_key",
)
EVIDENCE_COLUMNS = (
    "id",
    "tenant_id",
    "person_id",
    "source_id",
    "source_revision",
    "quote",
    "recorded_at",
    "deleted_at",
)
LOCATOR_COLUMNS = (
    "tenant_id",
    "person_id",
    "evidence_id",
    "device_id",
    "provider",
    "stream_id",
    "segment_id",
    "start_ms",
    "end_ms",
)
CLAIM_COLUMNS = (
    "id",
    "tenant_id",
    "person_id",
    "subject",
    "predicate",
    "value",
    "valid_from",
    "valid_until",
    "recorded_from",
    "recorded_until",
    "status",
    "kind",
)
CLAIM_EVIDENCE_COLUMNS = (
    "tenant_id",
    "person_id",
    "claim_id",
    "evidence_id",
    "relation",
    "confidence_basis_points",
)


def _insert(table: str, columns: tuple[str, ...], verb: str = "INSERT") -> str:
    marks = ", ".join("?" for _ in columns)
    return f"{verb} INTO {table}({', '.join(columns)}) VALUES ({marks})"


#: A source whose ingestion key is taken is not inserted (the caller replays instead).
INSERT_SOURCE = _insert("sources", SOURCE_COLUMNS, "INSERT OR IGNORE")
INSERT_EVIDENCE = _insert("evidence", EVIDENCE_COLUMNS)
INSERT_LOCATOR = _insert("evidence_locators", LOCATOR_COLUMNS)
INSERT_CLAIM = _insert("claims", CLAIM_COLUMNS)
INSERT_CLAIM_EVIDENCE = _insert("claim_evidence", CLAIM_EVIDENCE_COLUMNS)
#: Set after the evidence (and claim) exist: a trigger checks that the origins are in scope.
SET_ORIGINS = "UPDATE sources SET origin_evidence_id = ?, origin_claim_id = ? WHERE id = ?"


def source_row(
    source_id: str,
    tenant_id: str,
    person_id: str,
    kind: m.SourceKind,
    text: str,
    captured_at: int,
    recorded_at: int,
    ingestion_key: str | None,
) -> tuple[object, ...]:
    """The :data:`SOURCE_COLUMNS` of a live source at revision 1."""
    kind_stored = json.dumps(kind.value)
    return (
        source_id,
        tenant_id,
        person_id,
        1,
        kind_stored,
        text,
        captured_at,
        recorded_at,
        None,
        ingestion_key,
    )


def evidence_row(
    evidence_id: str, tenant_id: str, person_id: str, source_id: str, text: str, recorded_at: int
) -> tuple[object, ...]:
    """The :data:`EVIDENCE_COLUMNS` of the evidence that cites a whole new source."""
    return (evidence_id, tenant_id, person_id, source_id, 1, text, recorded_at, None)


def locator_row(
    tenant_id: str, person_id: str, evidence_id: str, loc: m.LocatorInput
) -> tuple[object, ...]:
    """The :data:`LOCATOR_COLUMNS` of an evidence's transcript locator."""
    return (
        tenant_id,
        person_id,
        evidence_id,
        loc.device_id,
        loc.provider,
        loc.stream_id,
        loc.segment_id,
        loc.start_ms,
        loc.end_ms,
    )


def claim_row(
    claim_id: str,
    tenant_id: str,
    person_id: str,
    subject: str,
    predicate: str,
    value: str,
    kind: str,
    valid_from: int,
    recorded_from: int,
) -> tuple[object, ...]:
    """The :data:`CLAIM_COLUMNS` of an accepted, open claim."""
    return (
        claim_id,
        tenant_id,
        person_id,
        subject,
        predicate,
        value,
        valid_from,
        None,
        recorded_from,
        None,
        "accepted",
        kind,
    )


def supports_row(
    tenant_id: str, person_id: str, claim_id: str, evidence_id: str
) -> tuple[object, ...]:
    """The :data:`CLAIM_EVIDENCE_COLUMNS` of a full-confidence ``supports`` link."""
    return (tenant_id, person_id, claim_id, evidence_id, SUPPORTS, FULL_CONFIDENCE)


def capture_id() -> str:
    """A fresh id for a capture's rows, drawn from the same source as the writers below (the bulk
    writer draws through here, so both paths draw alike)."""
    return new_id()


# ----------------------------------------------------------------------------------------------
# Row writers (shared with correct)
# ----------------------------------------------------------------------------------------------


def insert_evidence(
    conn: sqlite3.Connection,
    tenant_id: str,
    person_id: str,
    source_id: str,
    text: str,
    recorded_at: int,
) -> str:
    """Index the source text and cite the whole source with one evidence row; returns its id."""
    index_source(conn, source_id)
    evidence_id = new_id()
    conn.execute(
        INSERT_EVIDENCE,
        evidence_row(evidence_id, tenant_id, person_id, source_id, text, recorded_at),
    )
    return evidence_id


def require_claim_text(subject: str, predicate: str, value: str) -> None:
    """The claim field checks of remember (and of correct's replacement claim)."""
    require_text(subject, "claim subject")
    require_text(predicate, "claim predicate")
    require_text(value, "claim value")


def insert_claim(conn: sqlite3.Connection, row: tuple[object, ...], evidence_id: str) -> str:
    """Insert a :func:`claim_row` (an accepted, open claim) and its full-confidence ``supports``
    link; returns the claim's id. Callers build the row, so the claim's fields are listed once."""
    conn.execute(INSERT_CLAIM, row)
    claim_id, tenant_id, person_id = (str(field) for field in row[:3])
    conn.execute(INSERT_CLAIM_EVIDENCE, supports_row(tenant_id, person_id, claim_id, evidence_id))
    return claim_id


def remember_claim_row(claim_id: str, request: m.RememberRequest) -> tuple[object, ...]:
    """The :func:`claim_row` of the claim a remember request carries (remember and bulk)."""
    claim = request.claim
    assert claim is not None
    return claim_row(
        claim_id,
        request.tenant_id,
        request.person_id,
        claim.subject,
        claim.predicate,
        claim.value,
        claim.kind.value,
        claim.valid_from,
        request.recorded_at,
    )


def set_origins(
    conn: sqlite3.Connection, source_id: str, evidence_id: str, claim_id: str | None
) -> None:
    """Record which evidence (and claim) were created together with the source."""
    conn.execute(SET_ORIGINS, (evidence_id, claim_id, source_id))


# ----------------------------------------------------------------------------------------------
# remember
# ----------------------------------------------------------------------------------------------


def validate_remember(request: m.RememberRequest) -> None:
    """Checks that run before the transaction, in the contract's order (the bulk writer runs
    them too)."""
    require_scope(request.tenant_id, request.person_id)
    require_text(request.text, "text")
    loc = request.locator
    if loc is not None:
        require_text(loc.device_id, "locator.device_id")
        require_text(loc.provider, "locator.provider")
        require_text(loc.stream_id, "locator.stream_id")
        require_text(loc.segment_id, "locator.segment_id")
        if loc.end_ms < loc.start_ms:
            raise InvalidRequest("locator end_ms must not precede start_ms")
        if loc.end_ms > _I64_MAX:
            raise InvalidRequest("locator end_ms exceeds the storage range")
    if request.ingestion_key is not None and is_blank(request.ingestion_key):
        raise InvalidRequest("ingestion_key must not be empty")


def remember(db: Database, request: m.RememberRequest) -> m.RememberResult:
    """Store a capture: one source, one evidence, optional locator and claim, one feed commit.

    A request whose ``ingestion_key`` is already stored in the scope is a replay: it returns the
    original ids when the payload is identical and writes nothing.

    :raises InvalidRequest: a blank field, a bad locator range, an oversized export record.
    :raises ConflictError: a replayed key with a different payload.
    :raises NotFound: a replayed key whose memory was deleted.
    """
    validate_remember(request)
    tenant, person, text = request.tenant_id, request.person_id, request.text
    with db.atomic(defer_recall=True) as conn:
        # The same statements, and ids drawn in the same order, as the row writers above
        # (correct's), but nothing is read back (issue 27.2): the source's rowid is the insert's,
        # its FTS and recall rows and its feed records are built from the values in hand
        # (tests/core/test_capture_feed.py checks the records against the stored rows).
        source_id = new_id()
        values = source_row(
            source_id,
            tenant,
            person,
            request.kind,
            text,
            request.captured_at,
            request.recorded_at,
            request.ingestion_key,
        )
        cursor = conn.execute(INSERT_SOURCE, values)
        if cursor.rowcount != 1:
            return _replay(conn, request)
        rowid = cursor.lastrowid
        assert rowid is not None
        index_new_source(conn, rowid, source_id, tenant, person, text)
        evidence_id = new_id()
        conn.execute(
            INSERT_EVIDENCE,
            evidence_row(evidence_id, tenant, person, source_id, text, request.recorded_at),
        )
        loc = request.locator
        if loc is not None:
            conn.execute(INSERT_LOCATOR, locator_row(tenant, person, evidence_id, loc))
        claim_id: str | None = None
        claim = request.claim
        if claim is not None:
            require_claim_text(claim.subject, claim.predicate, claim.value)
            claim_id = insert_claim(conn, remember_claim_row(new_id(), request), evidence_id)
        set_origins(conn, source_id, evidence_id, claim_id)
        # Its recall rows are written later, in a batch (zkr.store.recall_backlog; issue 27.2).
        defer_capture(conn, rowid)
        payloads = capture_payloads(request, source_id, evidence_id, claim_id)
        append_payloads(conn, tenant, person, request.recorded_at, payloads)
    return m.RememberResult(source_id=source_id, evidence_id=evidence_id, claim_id=claim_id)


def _replay(conn: sqlite3.Connection, request: m.RememberRequest) -> m.RememberResult:
    """The stored memory of the request's ingestion key, if the payload is the same."""
    tenant, person = request.tenant_id, request.person_id
    row = conn.execute(
        "SELECT s.id, s.kind, s.content, s.captured_at, s.recorded_at, s.deleted_at,"
        " e.id, e.deleted_at, c.id, c.subject, c.predicate, c.value, c.valid_from, c.kind"
        " FROM sources s"
        " JOIN evidence e ON e.id = s.origin_evidence_id"
        "  AND e.tenant_id = s.tenant_id AND e.person_id = s.person_id"
        " LEFT JOIN claims c ON c.id = s.origin_claim_id"
        "  AND c.tenant_id = s.tenant_id AND c.person_id = s.person_id"
        " WHERE s.tenant_id = ? AND s.person_id = ? AND s.ingestion_key = ?",
        (tenant, person, request.ingestion_key),
    ).fetchone()
    # A deleted memory cannot be replayed, and its key can never be reused.
    if row is None or row[5] is not None or row[7] is not None:
        raise NotFound()
    source_id, evidence_id, claim_id = row[0], row[6], row[8]
    stored_claim = None if claim_id is None else (row[9], row[10], row[11], row[12], row[13])
    claim = request.claim
    requested_claim = (
        None
        if claim is None
        else (claim.subject, claim.predicate, claim.value, claim.valid_from, claim.kind.value)
    )
    same = (
        row[1] == json.dumps(request.kind.value)
        and row[2] == request.text
        and row[3] == request.captured_at
        and row[4] == request.recorded_at
        and stored_claim == requested_claim
        and stored_locator(conn, tenant, person, evidence_id) == request.locator
    )
    if not same:
        raise ConflictError("ingestion_key conflicts with different memory payload")
    return m.RememberResult(source_id=source_id, evidence_id=evidence_id, claim_id=claim_id)


# ----------------------------------------------------------------------------------------------
# locator
# ----------------------------------------------------------------------------------------------


def locator(db: Database, request: m.LocatorRequest) -> m.LocatorInput | None:
    """The transcript locator of a live evidence row of the scope; ``None`` otherwise."""
    require_scope(request.tenant_id, request.person_id)
    with db.atomic(write=False) as conn:
        live = conn.execute(
            "SELECT 1 FROM evidence WHERE id = ? AND tenant_id = ? AND person_id = ?"
            " AND deleted_at IS NULL",
            (request.evidence_id, request.tenant_id, request.person_id),
        ).fetchone()
        if live is None:
            return None
        return stored_locator(conn, request.tenant_id, request.person_id, request.evidence_id)


def is_stored(conn: sqlite3.Connection, tenant_id: str, person_id: str, ingestion_key: str) -> bool:
    """Whether the scope already holds a capture under *ingestion_key* (a ``remember`` of it would
    be a replay). ``zkr import`` asks inside its transaction to count stored and replayed lines."""
    row = conn.execute(
        "SELECT 1 FROM sources WHERE tenant_id = ? AND person_id = ? AND ingestion_key = ?",
        (tenant_id, person_id, ingestion_key),
    ).fetchone()
    return row is not None


def is_erased(conn: sqlite3.Connection, tenant_id: str, person_id: str, ingestion_key: str) -> bool:
    """Whether *ingestion_key* names a capture of the scope that ``forget`` erased (a request
    under it is a copy of erased content: ``zkr import`` drops it)."""
    row = conn.execute(
        "SELECT 1 FROM sources s JOIN erasures x ON x.tenant_id = s.tenant_id"
        " AND x.person_id = s.person_id AND x.target_kind = 'source' AND x.target_id = s.id"
        " WHERE s.tenant_id = ? AND s.person_id = ? AND s.ingestion_key = ?",
        (tenant_id, person_id, ingestion_key),
    ).fetchone()
    return row is not None
