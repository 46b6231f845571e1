"""``history`` answered from PostgreSQL: a claim's whole supersession chain, for any id in it.

The same answer as zkr's ``history`` (``zkr.retrieval.chains``) for the same records: the chain is
walked through ``zkr.corrections`` back to the first version and forward to the last; every version
(current, superseded, retracted or erased) comes with its intervals, its linked evidence (oldest
first; quotes of deleted or erased captures are empty), the correction that superseded it and the
chain's dated events in time order. An id of another scope is ``record not found``, like a missing
one (and row-level security hides it anyway: the reads run as the serving role in the scope).
"""

from __future__ import annotations

from typing import Any

from zkr import models as m
from zkr.errors import InvalidRequest, NotFound
from zkr.retrieval.chains import CORRECTION_COLUMNS, assemble_history, cited_evidence, correction_of
from zkr.store.record_tables import CLAIM, read_record
from zkr.store.validation import require_scope
from zkr_postgres._db import Conn
from zkr_postgres.nul import has_nul, restored
from zkr_postgres.retrieval import scoped

__all__ = ["history"]

_SCOPE = "tenant_id = %(t)s AND person_id = %(p)s"

_CLAIM = f"""
SELECT {", ".join(CLAIM.names)}, exact,
  (SELECT x.erased_at FROM zkr.erasures x WHERE x.tenant_id = %(t)s AND x.person_id = %(p)s
     AND x.target_kind = 'claim' AND x.target_id = %(id)s)
FROM zkr.claims WHERE {_SCOPE} AND id = %(id)s
"""

_EVIDENCE = """
SELECT e.id, e.source_id, s.kind, ce.relation, ce.confidence_basis_points, e.quote,
  e.recorded_at, s.deleted_at, x.erased_at, coalesce(s.origin_claim_id = ce.claim_id, false),
  e.exact
FROM zkr.claim_evidence ce
JOIN zkr.evidence e ON e.tenant_id = ce.tenant_id AND e.person_id = ce.person_id
 AND e.id = ce.evidence_id
JOIN zkr.sources s ON s.tenant_id = e.tenant_id AND s.person_id = e.person_id
 AND s.id = e.source_id
LEFT JOIN zkr.erasures x ON x.tenant_id = e.tenant_id AND x.person_id = e.person_id
 AND x.target_kind = 'evidence' AND x.target_id = e.id
WHERE ce.tenant_id = %(t)s AND ce.person_id = %(p)s AND ce.claim_id = %(id)s
ORDER BY e.recorded_at, e.id COLLATE "C"
"""

_EARLIER = f"""
SELECT superseded_claim_id FROM zkr.corrections WHERE {_SCOPE} AND claim_id = %(id)s
ORDER BY recorded_at, superseded_claim_id COLLATE "C" LIMIT 1
"""
_LATER = f"""
SELECT {", ".join(CORRECTION_COLUMNS)} FROM zkr.corrections
WHERE {_SCOPE} AND superseded_claim_id = %(id)s
ORDER BY recorded_at, claim_id COLLATE "C" LIMIT 1
"""

# A version with, per linked evidence, whether it is the claim's origin (created with it).
_Version = tuple[m.ClaimVersion, dict[str, bool]]


def history(conn: Conn, request: m.HistoryRequest) -> m.ClaimHistory:
    """The chain of the claim, oldest version first, with its events in time order.

    :raises InvalidRequest: blank scope.
    :raises NotFound: no claim with that id in the scope.
    """
    require_scope(request.tenant_id, request.person_id)
    if request.as_of is not None:
        # zkr answers it from its own tables (zkr.retrieval.chains); not mirrored here yet.
        raise InvalidRequest("history as_of is not supported by the PostgreSQL replica")
    if has_nul(request.tenant_id, request.person_id, request.claim_id):
        raise NotFound()  # nothing stored holds NUL in a key (see zkr_postgres.nul)
    scope = {"t": request.tenant_id, "p": request.person_id}
    with scoped(conn, request.tenant_id, request.person_id):
        exists = conn.execute(
            f"SELECT 1 FROM zkr.claims WHERE {_SCOPE} AND id = %(id)s",
            {**scope, "id": request.claim_id},
        ).fetchone()
        if exists is None:
            raise NotFound()
        chain = _chain(conn, scope, request.claim_id)
        versions = [_version(conn, {**scope, "id": claim_id}) for claim_id in chain]
    return assemble_history(request.claim_id, versions)


def _chain(conn: Conn, scope: dict[str, str], claim_id: str) -> list[str]:
    """The chain's claim ids, first version first (a cycle, which only damaged data could hold,
    ends the walk)."""
    seen = {claim_id}
    first = claim_id
    while True:
        row = conn.execute(_EARLIER, {**scope, "id": first}).fetchone()
        if row is None or row[0] in seen:
            break
        first = str(row[0])
        seen.add(first)
    chain = [first]
    while True:
        row = conn.execute(_LATER, {**scope, "id": chain[-1]}).fetchone()
        if row is None or row[0] in chain:
            return chain
        chain.append(str(row[0]))


def _version(conn: Conn, params: dict[str, Any]) -> _Version:
    found = conn.execute(_CLAIM, params).fetchone()
    assert found is not None
    row = dict(zip([*CLAIM.names, "exact", "erased_at"], found, strict=True))
    served = [column.name for column in CLAIM.columns if column.served]
    row.update(restored({name: row[name] for name in served}, row["exact"]))
    claim = read_record(CLAIM, row)
    assert isinstance(claim, m.ClaimRecord)
    evidence: list[m.HistoryEvidence] = []
    origins: dict[str, bool] = {}
    for eid, sid, kind, relation, confidence, quote, *times, origin, exact in conn.execute(
        _EVIDENCE, params
    ).fetchall():
        quote = restored({"quote": quote}, exact)["quote"]
        evidence.append(cited_evidence((eid, sid, kind, relation, confidence, quote, *times)))
        origins[eid] = bool(origin)
    later = conn.execute(_LATER, params).fetchone()
    version = m.ClaimVersion(
        claim=claim,
        erased_at=row["erased_at"],
        evidence=evidence,
        corrected_by=correction_of(claim.id, later),
    )
    return version, origins
