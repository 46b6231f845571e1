"""``correct``: supersede an accepted claim with a new value, citing a correction capture (§4.3).

Nothing is rewritten in place: the old claim's two intervals are closed at the correction's times,
and a new claim (same subject, predicate, kind) is created from a new ``user_correction`` source.

``"mode": "change"`` (an addition; the contract's ``mistake`` is the default) says the value changed
rather than was wrong: the old claim's valid time is closed at ``valid_at`` but its recorded time
stays open, so a question about a time before the change, asked with today's knowledge, still
finds the old value. Either way the old claim is ``superseded`` and the ``corrections`` row dates
the closure, so a read ``as_of`` an earlier recorded time sees it open (``zkr.store.believed``).
"""

from __future__ import annotations

from zkr import models as m
from zkr.errors import InvalidRequest, NotFound
from zkr.store.commits import append_commit
from zkr.store.live_rows import accepted_claim
from zkr.store.recall_index import index_capture
from zkr.store.records import (
    ExportRecord,
    claim_evidence_record,
    claim_record,
    correction_record,
    deletion_record,
    evidence_record,
    source_record,
)
from zkr.store.validation import require_scope, require_text
from zkr.writes.capture import (
    INSERT_SOURCE,
    capture_id,
    claim_row,
    insert_claim,
    insert_evidence,
    require_claim_text,
    set_origins,
    source_row,
)

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from zkr.store.database import Database

__all__ = ["correct"]

_CLAIM_KINDS = frozenset(kind.value for kind in m.ClaimKind)
#: What a correction reads of the claim it supersedes.
_CORRECTED_COLUMNS = "subject, predicate, kind, valid_from, recorded_from"


def correct(db: Database, request: m.CorrectRequest) -> m.CorrectResult:
    """Close the claim at (``valid_at``, ``recorded_at``) and record its replacement.

    Profile entries projecting the old claim are removed; the key has no profile until ``profile``
    is called with the new claim.

    :raises InvalidRequest: blank text/value, timestamps that do not advance both intervals.
    :raises NotFound: no accepted claim with that id in the scope.
    """
    require_scope(request.tenant_id, request.person_id)
    require_text(request.text, "correction text")
    require_text(request.value, "value")
    tenant, person = request.tenant_id, request.person_id
    with db.atomic() as conn:
        profile_ids = [
            row[0]
            for row in conn.execute(
                "SELECT id FROM profile_entries WHERE tenant_id = ? AND person_id = ?"
                " AND claim_id = ? ORDER BY id",
                (tenant, person, request.claim_id),
            )
        ]
        old = accepted_claim(conn, request.claim_id, tenant, person, _CORRECTED_COLUMNS)
        if old is None:
            raise NotFound()
        subject, predicate, kind, valid_from, recorded_from = old
        if kind not in _CLAIM_KINDS:
            raise InvalidRequest("stored claim kind is invalid")
        if not (request.valid_at > valid_from and request.recorded_at > recorded_from):
            raise InvalidRequest(
                "correction timestamps must advance the original valid and recorded intervals"
            )
        # The capture: captured_at is the moment the new value became true.
        # No ingestion key, so the insert cannot be ignored.
        source_id = capture_id()
        source = m.SourceKind.user_correction
        conn.execute(
            INSERT_SOURCE,
            source_row(
                source_id,
                tenant,
                person,
                source,
                request.text,
                request.valid_at,
                request.recorded_at,
                None,
            ),
        )
        evidence_id = insert_evidence(
            conn, tenant, person, source_id, request.text, request.recorded_at
        )
        # A mistake withdraws the old value from belief (its recorded time ends now); a change
        # keeps believing it for the time it was true (only its valid time ends, at valid_at).
        change = request.mode is m.CorrectionMode.change
        conn.execute(
            "UPDATE claims SET status = 'superseded', valid_until = ?, recorded_until = ?"
            " WHERE id = ?",
            (request.valid_at, None if change else request.recorded_at, request.claim_id),
        )
        if profile_ids:
            conn.executemany(
                "DELETE FROM profile_entries WHERE id = ?", [(pid,) for pid in profile_ids]
            )
        require_claim_text(subject, predicate, request.value)
        row = claim_row(
            capture_id(),
            tenant,
            person,
            subject,
            predicate,
            request.value,
            kind,
            request.valid_at,
            request.recorded_at,
        )
        claim_id = insert_claim(conn, row, evidence_id)
        set_origins(conn, source_id, evidence_id, claim_id)
        index_capture(conn, source_id)
        conn.execute(
            "INSERT INTO corrections(tenant_id, person_id, superseded_claim_id, claim_id,"
            " source_id, evidence_id, valid_at, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                tenant,
                person,
                request.claim_id,
                claim_id,
                source_id,
                evidence_id,
                request.valid_at,
                request.recorded_at,
            ),
        )
        records: list[ExportRecord] = [
            source_record(conn, source_id),
            evidence_record(conn, evidence_id),
            claim_record(conn, request.claim_id),
            claim_record(conn, claim_id),
            claim_evidence_record(conn, tenant, person, claim_id, evidence_id),
            correction_record(conn, tenant, person, request.claim_id, claim_id),
        ]
        records.extend(
            deletion_record(tenant, person, m.MemoryKind.profile_entry, pid, request.recorded_at)
            for pid in profile_ids
        )
        append_commit(conn, tenant, person, request.recorded_at, records)
    return m.CorrectResult(
        claim_id=claim_id,
        evidence_id=evidence_id,
        source_id=source_id,
        superseded_claim_id=request.claim_id,
    )
