"""The recall ranking's hybrid fusion: lexical and dense *scores*, the dense one spread over a
capture's session neighbours.

A candidate (the union of the lexical list's head and the dense list's head) scores::

    LEXICAL_SHARE * bm25 / best bm25                       (0 when the lexical list lacks it)
    + (1 - LEXICAL_SHARE) * (z + NEIGHBOUR_WEIGHT * n) / Z_SPAN

where ``z`` is its dense score as a z-score over the scope's lane (how far above the scope's
typical similarity it is; 0 for a memory without a vector) and ``n`` the mean ``z`` of its
neighbours: the live captures next to it on the recall index's timeline
(:mod:`zkr.store.recall_index` — same scope and kind), up to :data:`SPREAD` on each side within
``SESSION_GAP_SECONDS``. A turn that answers a question is often one step away
from the turn that resembles it; the lexical side already lends neighbours' words through the
context column, and this is the dense analogue. Neighbours come from the live ``sources`` rows in
one query, so a deleted capture lends nothing; a claim found by the dense lane alone has no
timeline (``n`` = 0). ``Z_SPAN`` puts a z-score on the lexical term's 0..1 scale.

Two terms more, both read from the candidates' anchors (the source a candidate was found through,
or the source itself):

* **session**: ``SESSION_WEIGHT`` times the best lexical term (bm25 / best) among the lexical
  list's head entries anchored in a capture of the same kind captured within
  ``SESSION_GAP_SECONDS`` of the candidate's (its own included). A question's words are often
  spread over one conversation: the turn that answers it may match one of them weakly while the
  turns around it match the rest, and the session is found even when the turn is not;
* **date**: ``DATE_WEIGHT`` when the candidate was captured within a date the query names
  (:func:`zkr.retrieval._query_dates.query_date_spans`: "on October 13, 2023", "in May 2022").

A claim found by the dense lane alone has no anchor and gets neither. A claim whose statement
matches the query gains ``CLAIM_WEIGHT`` (claims first), and a candidate that matches nothing on
its own (``weak``: found through neighbours only) ranks after every other one.

The weights were chosen on LoCoMo's development conversations (0-4, e5) with
``benchmarks/recall_lab.py`` (sweep in ``docs/recall.md``), for the recall index's window of
schema 13 (two before, one after; ``recall_lab.py windows``): the settings with the lexical share
in 0.55-0.65, the neighbour weight in 1-1.25 and the session weight in 0.5-0.6 (date 1) score
any@10 86.6-87.2 % (the chosen one: 87.2 %, at the top of that plateau); choosing all four
weights on four conversations and scoring the fifth gives 86.6 %, the honest estimate.
"""

from __future__ import annotations

import json
import sqlite3
from bisect import bisect_left, bisect_right
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from zkr.retrieval._fusion import Target, target_key
from zkr.store.recall_index import SESSION_GAP_SECONDS

__all__ = [
    "CLAIM_WEIGHT",
    "DATE_WEIGHT",
    "LEXICAL_SHARE",
    "MIN_SPREAD",
    "NEIGHBOUR_WEIGHT",
    "SESSION_WEIGHT",
    "SPREAD",
    "Z_SPAN",
    "anchor_times",
    "fuse_scores",
    "neighbours",
]

LEXICAL_SHARE = 0.55
NEIGHBOUR_WEIGHT = 1.0
SESSION_WEIGHT = 0.5
DATE_WEIGHT = 1.0
#: The lift of a claim whose statement matches the query (claims first; chosen on the everyday
#: benchmark, ``benchmarks/everyday.py``; LoCoMo stores no claims, so it does not move there).
CLAIM_WEIGHT = 0.5
Z_SPAN = 4.0
#: Timeline neighbours on each side whose dense score a capture borrows.
SPREAD = 2
#: The least spread of dense scores a z-score divides by (cosines; e5 on LoCoMo spreads ~0.03).
MIN_SPREAD = 1e-3
_POINTS = 10_000
# Scores are compared as integers (parts per 10**9): the order never depends on float noise.
_QUANTUM = 1_000_000_000

# Each candidate's live neighbours, both sides, by the timeline index (one statement for all).
_SIDE = """
SELECT c.id, n.id FROM c CROSS JOIN sources AS n ON n.rowid IN (
  SELECT rowid FROM sources
  WHERE tenant_id = :tenant AND person_id = :person AND kind = c.kind AND deleted_at IS NULL
    AND captured_at BETWEEN {low} AND {high} AND rowid != c.rid AND {side}
  ORDER BY captured_at {order}, rowid {order} LIMIT :window)
"""
_NEIGHBOURS = (
    """
WITH c AS (
  SELECT s.rowid AS rid, s.id, s.kind, s.captured_at AS at
  FROM json_each(:ids) AS j CROSS JOIN sources AS s ON s.id = j.value
  WHERE s.tenant_id = :tenant AND s.person_id = :person AND s.deleted_at IS NULL
)"""
    + _SIDE.format(
        low="c.at - :gap",
        high="c.at",
        side="(captured_at < c.at OR rowid < c.rid)",
        order="DESC",
    )
    + " UNION ALL "
    + _SIDE.format(
        low="c.at",
        high="c.at + :gap",
        side="(captured_at > c.at OR rowid > c.rid)",
        order="ASC",
    )
)


def neighbours(
    conn: sqlite3.Connection, tenant_id: str, person_id: str, source_ids: Sequence[str]
) -> dict[str, list[str]]:
    """The live timeline neighbours of each live source among *source_ids* (one query)."""
    found: dict[str, list[str]] = {}
    if not source_ids:
        return found
    params = {
        "ids": json.dumps(list(dict.fromkeys(source_ids))),
        "tenant": tenant_id,
        "person": person_id,
        "gap": SESSION_GAP_SECONDS,
        "window": SPREAD,
    }
    for source_id, neighbour_id in conn.execute(_NEIGHBOURS, params):
        found.setdefault(source_id, []).append(neighbour_id)
    return found


_ANCHORS = """
SELECT s.id, s.kind, s.captured_at
FROM json_each(:ids) AS j CROSS JOIN sources AS s ON s.id = j.value
WHERE s.tenant_id = :tenant AND s.person_id = :person AND s.deleted_at IS NULL
"""


def anchor_times(
    conn: sqlite3.Connection, tenant_id: str, person_id: str, source_ids: Sequence[str]
) -> dict[str, tuple[str, int]]:
    """``(kind, captured_at)`` of each live source among *source_ids* (one query)."""
    if not source_ids:
        return {}
    params = {
        "ids": json.dumps(list(dict.fromkeys(source_ids))),
        "tenant": tenant_id,
        "person": person_id,
    }
    return {
        source_id: (kind, captured_at)
        for source_id, kind, captured_at in conn.execute(_ANCHORS, params)
    }


def _session_best(
    lexical_part: Mapping[Target, float],
    anchor: Mapping[Target, str],
    times: Mapping[str, tuple[str, int]],
) -> dict[str, float]:
    """The best lexical term among the lexical entries anchored within ``SESSION_GAP_SECONDS``
    of each anchor of *times* (same kind), its own entries included; 0 when there is none."""
    by_kind: dict[str, list[tuple[int, float]]] = {}
    for target, part in lexical_part.items():
        found = times.get(anchor[target])
        if found is not None:
            by_kind.setdefault(found[0], []).append((found[1], part))
    columns: dict[str, tuple[list[int], list[float]]] = {}
    for kind, entries in by_kind.items():
        entries.sort()
        columns[kind] = ([at for at, _ in entries], [part for _, part in entries])
    best: dict[str, float] = {}
    for source_id, (kind, at) in times.items():
        column = columns.get(kind)
        if column is None:
            best[source_id] = 0.0
            continue
        moments, parts = column
        low = bisect_left(moments, at - SESSION_GAP_SECONDS)
        high = bisect_right(moments, at + SESSION_GAP_SECONDS)
        best[source_id] = max(parts[low:high], default=0.0)
    return best


def fuse_scores(
    lexical: Sequence[tuple[Target, float, str]],
    dense: Sequence[Target],
    dense_z: Mapping[Target, float],
    neighbour_z: Mapping[str, float],
    limit: int,
    *,
    times: Mapping[str, tuple[str, int]] | None = None,
    date_spans: Sequence[tuple[int, int]] = (),
    lexical_share: float = LEXICAL_SHARE,
    neighbour_weight: float = NEIGHBOUR_WEIGHT,
    session_weight: float = SESSION_WEIGHT,
    date_weight: float = DATE_WEIGHT,
    weak: Collection[Target] = (),
    stated: Collection[Target] = (),
    claim_weight: float = CLAIM_WEIGHT,
) -> list[tuple[Target, int]]:
    """The best *limit* candidates with relevance in basis points: 10000 for the best, minus
    10000 per unit of score behind it (a unit: the lexical term of the best bm25 at share 1),
    at least 0 — so float noise between near-equal scores never shows as a relevance gap.

    *lexical* holds ``(target, bm25 score (higher better), the source it was found through)``;
    *dense* the dense list's head (one entry per memory); *dense_z* each candidate's dense
    z-score (missing: 0); *neighbour_z* the mean z of a source's neighbours (missing: 0; below 0
    counts as 0). A
    source's own neighbours count for it; a claim found lexically through a source counts that
    source's. *times* holds ``(kind, captured_at)`` of the live anchors (:func:`anchor_times`;
    an anchor missing from it gets no session or date term), *date_spans* the capture-time spans
    the query names (:func:`zkr.retrieval._query_dates.query_date_spans`).

    *weak* holds the candidates that match nothing on their own (found only through their
    neighbours): they rank after every other candidate, whatever their neighbours lend them, and
    a relevance never rises down the list. *stated* holds the claims whose statement matches
    the query's words: each gains *claim_weight* (claims first: the claim that says what is asked
    outranks a capture that shares an incidental word with the question).
    """
    lexical_part, anchor = _lexical_parts(lexical, dense)
    times = times or {}
    terms = _Terms(
        lexical_part=lexical_part,
        anchor=anchor,
        dense_z=dense_z,
        neighbour_z=neighbour_z,
        stated=stated,
        times=times,
        session=_session_best(lexical_part, anchor, times) if session_weight else {},
        date_spans=date_spans,
        lexical_share=lexical_share,
        neighbour_weight=neighbour_weight,
        session_weight=session_weight,
        date_weight=date_weight,
        claim_weight=claim_weight,
    )
    scores: dict[Target, int] = {}
    for target in [*lexical_part, *dense]:
        if target not in scores:
            scores[target] = terms.score(target)
    return _shown(scores, weak, limit)


def _lexical_parts(
    lexical: Sequence[tuple[Target, float, str]], dense: Sequence[Target]
) -> tuple[dict[Target, float], dict[Target, str]]:
    """Each lexical candidate's share of the best bm25 (its first occurrence counts), and every
    candidate's anchor: the source it was found through (a dense source is its own)."""
    best_lexical = max((score for _, score, _ in lexical), default=0.0)
    lexical_part: dict[Target, float] = {}
    anchor: dict[Target, str] = {}
    for target, score, source_id in lexical:
        if target not in lexical_part:
            lexical_part[target] = score / best_lexical if best_lexical > 0 else 0.0
            anchor[target] = source_id
    for target in dense:
        if target not in anchor and target[0] == "source":
            anchor[target] = target[1]
    return lexical_part, anchor


@dataclass(frozen=True, slots=True)
class _Terms:
    """What one candidate's score is made of (see :func:`fuse_scores`)."""

    lexical_part: Mapping[Target, float]
    anchor: Mapping[Target, str]
    dense_z: Mapping[Target, float]
    neighbour_z: Mapping[str, float]
    stated: Collection[Target]
    times: Mapping[str, tuple[str, int]]
    session: Mapping[str, float]
    date_spans: Sequence[tuple[int, int]]
    lexical_share: float
    neighbour_weight: float
    session_weight: float
    date_weight: float
    claim_weight: float

    def score(self, target: Target) -> int:
        """The candidate's score in quanta."""
        anchored = self.anchor.get(target)
        spread = self.neighbour_z.get(anchored, 0.0) if anchored is not None else 0.0
        # Neighbours lend, never take: a turn beside unlike turns keeps its own score, so the
        # memory that matches is never outranked by its neighbour only because it is one (two
        # captures of a session would otherwise swap places). On the development conversations
        # the clamp is neutral (dev any@10 83.3 %, held-out 80.3 %, benchmarks/recall_lab.py).
        spread = max(spread, 0.0)
        dense_share = 1.0 - self.lexical_share
        lent = self.neighbour_weight * spread
        value = (
            self.lexical_share * self.lexical_part.get(target, 0.0)
            + dense_share * (self.dense_z.get(target, 0.0) + lent) / Z_SPAN
        )
        if target in self.stated:
            value += self.claim_weight
        placed = self.times.get(anchored) if anchored is not None else None
        if placed is not None:
            value += self.session_weight * self.session.get(anchored or "", 0.0)
            if any(start <= placed[1] < end for start, end in self.date_spans):
                value += self.date_weight
        return round(value * _QUANTUM)


def _shown(
    scores: Mapping[Target, int], weak: Collection[Target], limit: int
) -> list[tuple[Target, int]]:
    """The best *limit* candidates, weak ones last, with relevance in basis points that never
    rises down the list."""
    if not scores:
        return []
    ranked = sorted(
        scores.items(), key=lambda pair: (pair[0] in weak, -pair[1], target_key(pair[0]))
    )
    best = ranked[0][1]
    shown: list[tuple[Target, int]] = []
    ceiling = _POINTS
    for target, score in ranked[:limit]:
        ceiling = min(ceiling, max(0, _POINTS - (best - score) * _POINTS // _QUANTUM))
        shown.append((target, ceiling))
    return shown
