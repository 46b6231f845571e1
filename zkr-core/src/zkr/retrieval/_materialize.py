"""Turning a retrieval target into a cited item (contract §5.6; ``get`` uses the same rules).

* claim: the claim must be current (or, with ``as_of``, visible at that time); the excerpt is
  ``subject predicate value`` and the citation is the smallest id among its live ``supports``
  evidence on a live source (restricted to what existed at ``as_of``). This may be a different
  evidence from the one whose text matched.
* source: live; its content; its smallest live evidence id.
* evidence: live on a live source; its quote; its own id.

Anything else is :class:`~zkr.errors.NotFound`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from zkr.errors import NotFound
from zkr.retrieval._fusion import Target
from zkr.store.believed import visible_claim

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zkr import models as m

__all__ = [
    "MAX_EXCERPT_BYTES",
    "cap_excerpt",
    "item_json",
    "materialize",
    "materialize_all",
    "visible_claims",
]

#: Excerpts are cut to at most this many UTF-8 bytes.
MAX_EXCERPT_BYTES = 4096

_SUPPORTS = "'\"supports\"'"

# Each statement takes a list of ids (``{ids}``): a search reads all its items of one kind at once.
# The unary ``+`` keeps the planner on the primary key for that list: without it, the scope
# equalities make a scope index look better, and it then walks every claim of the scope.
_CLAIM_CURRENT = f"""
SELECT c.id, c.subject, c.predicate, c.value,
  (SELECT min(e.id) FROM claim_evidence AS ce
   JOIN evidence AS e ON e.id = ce.evidence_id AND e.tenant_id = c.tenant_id
    AND e.person_id = c.person_id AND e.deleted_at IS NULL
   JOIN sources AS s ON s.id = e.source_id AND s.tenant_id = c.tenant_id
    AND s.person_id = c.person_id AND s.deleted_at IS NULL
   WHERE ce.claim_id = c.id AND ce.tenant_id = c.tenant_id AND ce.person_id = c.person_id
     AND ce.relation = {_SUPPORTS})
FROM claims AS c
WHERE c.id IN ({{ids}}) AND +c.tenant_id = :tenant AND +c.person_id = :person
  AND c.status = 'accepted' AND c.valid_until IS NULL AND c.recorded_until IS NULL
"""

_CLAIM_AS_OF = f"""
SELECT c.id, c.subject, c.predicate, c.value,
  (SELECT min(e.id) FROM claim_evidence AS ce
   JOIN evidence AS e ON e.id = ce.evidence_id AND e.tenant_id = c.tenant_id
    AND e.person_id = c.person_id AND e.deleted_at IS NULL AND e.recorded_at <= :recorded_at
   JOIN sources AS s ON s.id = e.source_id AND s.tenant_id = c.tenant_id
    AND s.person_id = c.person_id AND s.deleted_at IS NULL
    AND s.captured_at <= :valid_at AND s.recorded_at <= :recorded_at
   WHERE ce.claim_id = c.id AND ce.tenant_id = c.tenant_id AND ce.person_id = c.person_id
     AND ce.relation = {_SUPPORTS})
FROM claims AS c
WHERE c.id IN ({{ids}}) AND +c.tenant_id = :tenant AND +c.person_id = :person
  AND {visible_claim("c")}
"""

_SOURCE = """
SELECT s.id, s.content,
  (SELECT min(e.id) FROM evidence AS e
   WHERE e.source_id = s.id AND e.tenant_id = s.tenant_id AND e.person_id = s.person_id
     AND e.deleted_at IS NULL)
FROM sources AS s
WHERE s.id IN ({ids}) AND s.tenant_id = :tenant AND s.person_id = :person AND s.deleted_at IS NULL
"""

_EVIDENCE = """
SELECT e.id, e.quote, e.id
FROM evidence AS e
JOIN sources AS s ON s.id = e.source_id AND s.tenant_id = e.tenant_id
 AND s.person_id = e.person_id AND s.deleted_at IS NULL
WHERE e.id IN ({ids}) AND +e.tenant_id = :tenant AND +e.person_id = :person
  AND e.deleted_at IS NULL
"""


def cap_excerpt(text: str) -> str:
    """*text* cut to the longest prefix of whole code points that fits in 4096 UTF-8 bytes."""
    encoded = text.encode("utf-8")
    if len(encoded) <= MAX_EXCERPT_BYTES:
        return text
    # Decoding with "ignore" drops only the partial code point the byte cut left at the end.
    return encoded[:MAX_EXCERPT_BYTES].decode("utf-8", errors="ignore")


def _read(
    conn: sqlite3.Connection,
    kind: str,
    ids: Sequence[str],
    tenant_id: str,
    person_id: str,
    as_of: m.AsOf | None,
) -> dict[str, tuple[str, str]]:
    """``id -> (excerpt before the cap, cited evidence id)`` of the *ids* of one kind that count."""
    params: dict[str, object] = {"tenant": tenant_id, "person": person_id}
    if kind == "claim":
        if as_of is not None:
            params["valid_at"] = as_of.valid_at
            params["recorded_at"] = as_of.recorded_at
        template = _CLAIM_AS_OF if as_of else _CLAIM_CURRENT
    else:
        template = _SOURCE if kind == "source" else _EVIDENCE
    names = [f"t{index}" for index in range(len(ids))]
    sql = template.replace("{ids}", ", ".join(f":{name}" for name in names))
    found: dict[str, tuple[str, str]] = {}
    for row in conn.execute(sql, {**params, **dict(zip(names, ids, strict=True))}):
        if kind == "claim":
            target_id, subject, predicate, value, evidence_id = row
            text = f"{subject} {predicate} {value}"
        else:
            target_id, text, evidence_id = row
        if evidence_id is not None:  # nothing to cite: not an item
            found[target_id] = (text, evidence_id)
    return found


def visible_claims(
    conn: sqlite3.Connection,
    claim_ids: Sequence[str],
    tenant_id: str,
    person_id: str,
    as_of: m.AsOf,
) -> list[str]:
    """Those of *claim_ids* that a search *as_of* can return: visible then, with a supporting
    evidence that existed then (in *claim_ids*' order)."""
    found: set[str] = set()
    for start in range(0, len(claim_ids), 500):
        chunk = claim_ids[start : start + 500]
        found.update(_read(conn, "claim", chunk, tenant_id, person_id, as_of))
    return [claim_id for claim_id in claim_ids if claim_id in found]


def item_json(target: Target, relevance: int, excerpt: str, evidence_id: str) -> dict[str, Any]:
    """One item as the JSON data of :class:`~zkr.models.RetrievalItem` (built without pydantic, so
    that a one-shot search need not import it; the model is built from this at the edge)."""
    return {
        "memory": {"kind": target[0], "id": target[1]},
        "excerpt": cap_excerpt(excerpt),
        "relevance_basis_points": relevance,
        "evidence_ids": [evidence_id],
    }


def materialize(
    conn: sqlite3.Connection,
    target: Target,
    relevance: int,
    tenant_id: str,
    person_id: str,
    as_of: m.AsOf | None = None,
) -> m.RetrievalItem:
    """The cited item for *target*.

    :raises NotFound: the target is not live (or not visible at *as_of*) in this scope.
    """
    return materialize_all(conn, [(target, relevance)], tenant_id, person_id, as_of)[0]


def materialize_all(
    conn: sqlite3.Connection,
    ranked: Sequence[tuple[Target, int]],
    tenant_id: str,
    person_id: str,
    as_of: m.AsOf | None = None,
) -> list[m.RetrievalItem]:
    """The cited items of *ranked* ``(target, relevance)`` pairs, in order; one query per kind.
    Each is built from its JSON data (:func:`item_json`) by whichever ``zkr.models`` the process
    runs on: the light classes on the one-shot fast path, without pydantic.

    :raises NotFound: any target is not live (or not visible at *as_of*) in this scope.
    """
    from zkr import models as m

    wanted: dict[str, list[str]] = {}
    for (kind, target_id), _ in ranked:
        wanted.setdefault(kind, []).append(target_id)
    found = {
        kind: _read(conn, kind, ids, tenant_id, person_id, as_of) for kind, ids in wanted.items()
    }
    items = []
    for target, relevance in ranked:
        row = found[target[0]].get(target[1])
        if row is None:
            raise NotFound()
        items.append(m.RetrievalItem.model_validate(item_json(target, relevance, *row)))
    return items
