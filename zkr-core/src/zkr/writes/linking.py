"""``link``: attach supporting or contradicting evidence to an accepted claim (contract §4.4)."""

from __future__ import annotations

import json

from zkr import models as m
from zkr.errors import ConflictError, InvalidRequest, NotFound
from zkr.store.commits import append_commit
from zkr.store.live_rows import accepted_claim, live_evidence
from zkr.store.recall_index import refresh_evidence_sources
from zkr.store.records import claim_evidence_record
from zkr.store.validation import require_scope, require_text

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from zkr.store.database import Database

__all__ = ["MAX_CONFIDENCE", "link"]

#: Confidence is expressed in basis points: 10000 is certainty.
MAX_CONFIDENCE = 10_000


def link(db: Database, request: m.LinkRequest) -> m.OkResult:
    """Link evidence to a claim; an identical existing link is a no-op without a commit.

    A ``supports`` link lets the evidence's source retrieve as the claim; ``contradicts`` changes
    neither status nor retrieval.

    :raises InvalidRequest: blank ids, confidence over 10000.
    :raises NotFound: the claim is not accepted, or the evidence not live, in the scope.
    :raises ConflictError: a link between the two exists with another relation or confidence.
    """
    # The reference checks these with its own wording (spaces, not underscores), before the scope.
    require_text(request.tenant_id, "tenant id")
    require_text(request.person_id, "person id")
    require_text(request.claim_id, "claim id")
    require_text(request.evidence_id, "evidence id")
    confidence = request.confidence_basis_points
    if confidence > MAX_CONFIDENCE:
        raise InvalidRequest(f"confidence {confidence} must be at most 10000 basis points")
    require_scope(request.tenant_id, request.person_id)
    tenant, person = request.tenant_id, request.person_id
    relation = json.dumps(request.relation.value)
    with db.atomic() as conn:
        claim = accepted_claim(conn, request.claim_id, tenant, person, "recorded_from")
        evidence = live_evidence(conn, request.evidence_id, tenant, person, "recorded_at")
        if claim is None or evidence is None:
            raise NotFound()
        existing = conn.execute(
            "SELECT relation, confidence_basis_points FROM claim_evidence WHERE tenant_id = ?"
            " AND person_id = ? AND claim_id = ? AND evidence_id = ?",
            (tenant, person, request.claim_id, request.evidence_id),
        ).fetchone()
        if existing is not None:
            if tuple(existing) == (relation, confidence):
                return m.OkResult()
            raise ConflictError("claim evidence link conflicts with existing payload")
        conn.execute(
            "INSERT INTO claim_evidence(tenant_id, person_id, claim_id, evidence_id, relation,"
            " confidence_basis_points) VALUES (?, ?, ?, ?, ?, ?)",
            (tenant, person, request.claim_id, request.evidence_id, relation, confidence),
        )
        if request.relation == m.EvidenceRelation.supports:
            # The evidence's source now also reads as the claim in the recall index.
            refresh_evidence_sources(conn, [request.evidence_id])
        record = claim_evidence_record(conn, tenant, person, request.claim_id, request.evidence_id)
        append_commit(conn, tenant, person, max(claim[0], evidence[0]), [record])
    return m.OkResult()
