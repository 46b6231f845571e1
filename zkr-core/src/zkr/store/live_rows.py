"""A scope's live rows by id, asked alike by the writes: the accepted claim that ``link``,
``correct``, ``profile`` and the earliest time of a correction start from, the live evidence that
``link`` and ``review`` cite (any other scope's row is missing); and the join from a capture's
live evidence to the claims it supports."""

from __future__ import annotations

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from typing import Any

__all__ = ["SUPPORTED_CLAIMS", "accepted_claim", "live_evidence"]

#: From a capture's evidence (alias ``e``) through its ``supports`` links (``ce``) to the claims
#: they support (``c``), each step kept in the evidence's scope; CROSS JOIN fixes that order. A
#: ``FROM`` clause for the statements of a capture (the recall index's and a search's as of R).
SUPPORTED_CLAIMS = """evidence AS e
CROSS JOIN claim_evidence AS ce
  ON ce.evidence_id = e.id AND ce.tenant_id = e.tenant_id AND ce.person_id = e.person_id
 AND ce.relation = '"supports"'
CROSS JOIN claims AS c
  ON c.id = ce.claim_id AND c.tenant_id = e.tenant_id AND c.person_id = e.person_id"""


def accepted_claim(
    conn: sqlite3.Connection,
    claim_id: str,
    tenant_id: str,
    person_id: str,
    columns: str,
    *,
    also: str = "",
) -> Any:
    """The *columns* (SQL) of the accepted claim *claim_id* of the scope, or ``None``; *also* adds
    conditions on the claim (``" AND kind = 'profile_fact'"``)."""
    return conn.execute(
        f"SELECT {columns} FROM claims WHERE id = ? AND tenant_id = ? AND person_id = ?"
        f" AND status = 'accepted'{also}",
        (claim_id, tenant_id, person_id),
    ).fetchone()


def live_evidence(
    conn: sqlite3.Connection, evidence_id: str, tenant_id: str, person_id: str, columns: str
) -> Any:
    """The *columns* (SQL) of the live (not deleted) evidence *evidence_id* of the scope, or
    ``None``."""
    return conn.execute(
        f"SELECT {columns} FROM evidence WHERE id = ? AND tenant_id = ? AND person_id = ?"
        " AND deleted_at IS NULL",
        (evidence_id, tenant_id, person_id),
    ).fetchone()
