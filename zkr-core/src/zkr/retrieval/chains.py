"""``history`` (an addition): a claim's whole supersession chain, for any id in it.

``correct`` never rewrites a claim: it closes the old version and records a new one, joined by a
``corrections`` row. ``history`` walks those rows back to the first version and forward to the last,
and answers every version - current, superseded, retracted or erased - with its intervals, the
evidence linked to it, the correction that superseded it, and the dated events of the chain. It
answers for every claim id ``remember`` or ``correct`` ever returned; an id of another scope is
``record not found``, like a missing one. Quotes of deleted or erased captures are not shown.

With ``as_of`` (its recorded time; an addition) the chain is told as it was known then: the
versions, evidence and corrections recorded by then, each version as then believed (a correction
or retraction recorded later had not happened yet). Deletions and erasures of captures are
absorbing: they show on the evidence at every time, as every read ``as_of`` hides deleted
captures (contract §4.11).

Like every read, a history is bounded: when its versions (claims and cited evidence) take more
than :data:`~zkr.writes.profiles.MAX_READ_PAGE_BYTES` of compact JSON - every correction adds a
version, every link an evidence - it is refused with ``LimitExceeded`` as soon as what was built
passes that budget, so the work stays bounded too (issue 18: 3,000 corrections answered 3.7 MB in
2 s). The events, derived from the versions, come on top.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from zkr import models as m
from zkr.errors import LimitExceeded, NotFound
from zkr.jsonio import compact_len
from zkr.retrieval._materialize import cap_excerpt
from zkr.store.records import claim_record
from zkr.store.validation import require_scope
from zkr.writes.profiles import MAX_READ_PAGE_BYTES

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zkr.store.database import Database

__all__ = ["CORRECTION_COLUMNS", "assemble_history", "cited_evidence", "correction_of", "history"]

#: The ``corrections`` columns of the correction that superseded a version, in the order
#: :func:`correction_of` reads them: the names of :class:`~zkr.models.HistoryCorrection`'s fields
#: (zkr-postgres selects them too).
CORRECTION_COLUMNS = ("claim_id", "source_id", "evidence_id", "valid_at", "recorded_at")


def correction_of(claim_id: str, row: Sequence[Any] | None) -> m.HistoryCorrection | None:
    """The correction that superseded *claim_id*, from its :data:`CORRECTION_COLUMNS` values,
    or ``None`` without one (zkr-postgres builds it too)."""
    if row is None:
        return None
    values = dict(zip(CORRECTION_COLUMNS, row, strict=True))
    return m.HistoryCorrection(superseded_claim_id=claim_id, **values)


def cited_evidence(values: Sequence[Any]) -> m.HistoryEvidence:
    """One evidence of a version from its values (evidence id, source id, source kind and
    relation by name, confidence, quote, recorded, deleted and erased times): the quote of a
    deleted capture is empty, any other cut as every excerpt is (zkr-postgres builds it too)."""
    eid, sid, kind, relation, confidence, quote, recorded_at, deleted_at, erased_at = values
    return m.HistoryEvidence(
        evidence_id=eid,
        source_id=sid,
        source_kind=m.SourceKind(kind),
        relation=m.EvidenceRelation(relation),
        confidence_basis_points=confidence,
        quote="" if deleted_at is not None else cap_excerpt(quote),
        recorded_at=recorded_at,
        deleted_at=deleted_at,
        erased_at=erased_at,
    )


# Same-time events are listed in the order they happen inside one operation.
_EVENT_ORDER = {
    "recorded": 0,
    "linked": 1,
    "corrected": 2,
    "deleted": 3,
    "retracted": 4,
    "erased": 5,
}

#: No version's JSON is this small, so a chain of more versions cannot fit a page: the walks stop.
_MIN_VERSION_BYTES = 200
_MAX_VERSIONS = MAX_READ_PAGE_BYTES // _MIN_VERSION_BYTES


class _Budget:
    """The bytes a history may still take; spending past them refuses the whole read."""

    def __init__(self) -> None:
        self.left = MAX_READ_PAGE_BYTES

    def spend(self, size: int) -> None:
        self.left -= size
        if self.left < 0:
            raise _too_large()


def _too_large() -> LimitExceeded:
    return LimitExceeded(f"history exceeds the {MAX_READ_PAGE_BYTES}-byte page limit")


_EVIDENCE = """
SELECT e.id, e.source_id, s.kind, ce.relation, ce.confidence_basis_points, e.quote,
  e.recorded_at, s.deleted_at, x.erased_at, s.origin_claim_id = ce.claim_id
FROM claim_evidence AS ce
JOIN evidence AS e ON e.id = ce.evidence_id AND e.tenant_id = ce.tenant_id
 AND e.person_id = ce.person_id
JOIN sources AS s ON s.id = e.source_id AND s.tenant_id = e.tenant_id AND s.person_id = e.person_id
LEFT JOIN erasures AS x ON x.tenant_id = e.tenant_id AND x.person_id = e.person_id
 AND x.target_kind = 'evidence' AND x.target_id = e.id
WHERE ce.tenant_id = ? AND ce.person_id = ? AND ce.claim_id = ?
  AND e.recorded_at <= ?
ORDER BY e.recorded_at, e.id
"""


def history(db: Database, request: m.HistoryRequest) -> m.ClaimHistory:
    """The chain of the claim, oldest version first, with its events in time order.

    :raises InvalidRequest: blank scope.
    :raises NotFound: no claim with that id in the scope.
    """
    require_scope(request.tenant_id, request.person_id)
    scope = (request.tenant_id, request.person_id)
    # With as_of: only what was recorded by then (deletions and erasures excepted: absorbing).
    then = m.I64_MAX if request.as_of is None else request.as_of.recorded_at
    with db.atomic(write=False) as conn:
        exists = conn.execute(
            "SELECT 1 FROM claims WHERE id = ? AND tenant_id = ? AND person_id = ?"
            " AND recorded_from <= ?",
            (request.claim_id, *scope, then),
        ).fetchone()
        if exists is None:
            raise NotFound()
        chain = _chain(conn, scope, request.claim_id, then)
        budget = _Budget()
        versions = [_version(conn, scope, claim_id, budget, then) for claim_id in chain]
    return assemble_history(request.claim_id, versions)


def assemble_history(claim_id: str, versions: list[_Version]) -> m.ClaimHistory:
    """The answer from a chain's versions (oldest first, each with which of its evidence is its
    origin): the events of every version in time order and the current version, if any. Shared by
    every store that answers ``history`` (zkr-postgres too), so their answers cannot drift."""
    events = sorted(
        (event for index, version in enumerate(versions) for event in _events(version, index)),
        key=lambda pair: pair[0],
    )
    current = [
        v.claim.id
        for v, _ in versions
        if v.claim.status is m.ClaimStatus.accepted
        and v.claim.valid_time.until is None
        and v.claim.recorded_time.until is None
    ]
    return m.ClaimHistory(
        claim_id=claim_id,
        current_claim_id=current[-1] if current else None,
        versions=[version for version, _ in versions],
        events=[event for _, event in events],
    )


def _chain(conn: sqlite3.Connection, scope: tuple[str, str], claim_id: str, then: int) -> list[str]:
    """The chain's claim ids, first version first (cycles, which only a damaged file could hold,
    end the walk).

    :raises LimitExceeded: more versions than a page can hold (found after that many steps).
    """
    seen = {claim_id}
    first = claim_id
    while True:
        row = conn.execute(
            "SELECT superseded_claim_id FROM corrections WHERE tenant_id = ? AND person_id = ?"
            " AND claim_id = ? AND recorded_at <= ? ORDER BY recorded_at, superseded_claim_id"
            " LIMIT 1",
            (*scope, first, then),
        ).fetchone()
        if row is None or row[0] in seen:
            break
        first = row[0]
        seen.add(first)
        if len(seen) > _MAX_VERSIONS:
            raise _too_large()
    chain = [first]
    in_chain = {first}
    while True:
        row = conn.execute(
            "SELECT claim_id FROM corrections WHERE tenant_id = ? AND person_id = ?"
            " AND superseded_claim_id = ? AND recorded_at <= ? ORDER BY recorded_at, claim_id"
            " LIMIT 1",
            (*scope, chain[-1], then),
        ).fetchone()
        if row is None or row[0] in in_chain:
            return chain
        chain.append(row[0])
        in_chain.add(row[0])
        if len(chain) > _MAX_VERSIONS:
            raise _too_large()


# The correction that superseded a version by *then* (the first one recorded).
_CORRECTED_BY = (
    f"SELECT {', '.join(CORRECTION_COLUMNS)} FROM corrections"
    " WHERE tenant_id = ? AND person_id = ? AND superseded_claim_id = ? AND recorded_at <= ?"
    " ORDER BY recorded_at, claim_id LIMIT 1"
)

# A version with, per linked evidence, whether it is the claim's origin (created with it).
_Version = tuple[m.ClaimVersion, dict[str, bool]]


def _version(
    conn: sqlite3.Connection, scope: tuple[str, str], claim_id: str, budget: _Budget, then: int
) -> _Version:
    body = claim_record(conn, claim_id)[1]
    assert isinstance(body, m.ClaimRecord)
    body = _as_believed(conn, scope, body, then)
    budget.spend(compact_len(body.model_dump(mode="json", by_alias=True)))
    erased = conn.execute(
        "SELECT erased_at FROM erasures WHERE tenant_id = ? AND person_id = ?"
        " AND target_kind = 'claim' AND target_id = ?",
        (*scope, claim_id),
    ).fetchone()
    evidence = []
    origins: dict[str, bool] = {}
    for eid, sid, kind, relation, *rest, origin in conn.execute(
        _EVIDENCE, (*scope, claim_id, then)
    ):
        # SQLite stores the source kind and the relation JSON-quoted.
        cited = cited_evidence((eid, sid, json.loads(kind), json.loads(relation), *rest))
        budget.spend(compact_len(cited.model_dump(mode="json", by_alias=True)))
        evidence.append(cited)
        origins[eid] = bool(origin)
    row = conn.execute(_CORRECTED_BY, (*scope, claim_id, then)).fetchone()
    version = m.ClaimVersion(
        claim=body,
        erased_at=None if erased is None else erased[0],
        evidence=evidence,
        corrected_by=correction_of(claim_id, row),
    )
    return version, origins


def _as_believed(
    conn: sqlite3.Connection, scope: tuple[str, str], body: m.ClaimRecord, then: int
) -> m.ClaimRecord:
    """*body* as believed at *then* (``zkr.store.believed``): superseded by a correction recorded
    later, or retracted later, it was then accepted with its recorded interval open (and, before
    its correction, its valid interval too). The deletion that retracted it still shows, on the
    evidence it deleted: deletions are absorbing."""
    until = body.recorded_time.until
    if body.status is m.ClaimStatus.retracted and until is not None and until > then:
        return body.model_copy(
            update={
                "status": m.ClaimStatus.accepted,
                "recorded_time": m.TimeRange.model_validate(
                    {"from": body.recorded_time.from_, "until": None}
                ),
            }
        )
    if body.status is not m.ClaimStatus.superseded:
        return body
    later = conn.execute(
        "SELECT 1 FROM corrections WHERE tenant_id = ? AND person_id = ?"
        " AND superseded_claim_id = ? AND recorded_at > ?",
        (*scope, body.id, then),
    ).fetchone()
    if later is None:
        return body
    return body.model_copy(
        update={
            "status": m.ClaimStatus.accepted,
            "valid_time": m.TimeRange.model_validate(
                {"from": body.valid_time.from_, "until": None}
            ),
            "recorded_time": m.TimeRange.model_validate(
                {"from": body.recorded_time.from_, "until": None}
            ),
        }
    )


def _events(
    version: _Version, index: int
) -> list[tuple[tuple[int, int, int, str], m.HistoryEvent]]:
    """The version's dated events, each with its sort key (time, kind, chain position, id)."""
    claim_version, origins = version
    claim = claim_version.claim
    found: list[tuple[tuple[int, int, int, str], m.HistoryEvent]] = []

    def add(at: int, event: str, evidence_id: str | None, source_id: str | None) -> None:
        key = (at, _EVENT_ORDER[event], index, evidence_id or "")
        found.append(
            (
                key,
                m.HistoryEvent(
                    at=at,
                    event=event,  # type: ignore[arg-type]
                    claim_id=claim.id,
                    evidence_id=evidence_id,
                    source_id=source_id,
                ),
            )
        )

    origin = next((e for e in claim_version.evidence if origins.get(e.evidence_id)), None)
    add(
        claim.recorded_time.from_,
        "recorded",
        origin.evidence_id if origin else None,
        origin.source_id if origin else None,
    )
    for evidence in claim_version.evidence:
        if evidence is not origin:
            # A link is committed at the later of the claim's and the evidence's recording.
            at = max(claim.recorded_time.from_, evidence.recorded_at)
            add(at, "linked", evidence.evidence_id, evidence.source_id)
        if evidence.deleted_at is not None:
            add(evidence.deleted_at, "deleted", evidence.evidence_id, evidence.source_id)
        if evidence.erased_at is not None:
            add(evidence.erased_at, "erased", evidence.evidence_id, evidence.source_id)
    correction = claim_version.corrected_by
    if correction is not None:
        add(correction.recorded_at, "corrected", correction.evidence_id, correction.source_id)
    if claim.status is m.ClaimStatus.retracted and claim.recorded_time.until is not None:
        add(claim.recorded_time.until, "retracted", None, None)
    return found
