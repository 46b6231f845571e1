"""The recall ranking's fusions, as pure functions of ranked lists and scores (no SQL).

Public because the PostgreSQL replica ranks with them too (one definition for both stores).

* :func:`fuse_weighted`: weighted reciprocal-rank fusion of ranked lists (``RecallTuning(fusion=
  "rrf")`` and the replica's hybrid);
* :func:`fuse_scores`: the shipped hybrid, lexical and dense *scores*, the dense one spread over a
  capture's session neighbours.

A candidate (the union of the lexical list's head and the dense list's head) scores::

    LEXICAL_SHARE * bm25 / best bm25                       (0 when the lexical list lacks it)
    + (1 - LEXICAL_SHARE) * (z + NEIGHBOUR_WEIGHT * n) / Z_SPAN

where ``z`` is its dense score as a z-score over the scope's lane (how far above the scope's typical
similarity it is; 0 for a memory without a vector) and ``n`` the mean ``z`` of its neighbours: the
live captures next to it on the recall index's timeline (:mod:`zkr.store.recall_index` — same scope
and kind), up to :data:`zkr.retrieval._neighbours.SPREAD` on each side within
``SESSION_GAP_SECONDS``. A turn that answers a question is often one step away from the turn that
resembles it; the lexical side already lends neighbours' words through the context column, and this
is the dense analogue. Neighbours come from the live ``sources`` rows in one query, so a deleted
capture lends nothing; a claim found by the dense lane alone has no timeline (``n`` = 0). ``Z_SPAN``
puts a z-score on the lexical term's 0..1 scale.

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

from bisect import bisect_left, bisect_right
from collections.abc import Collection, Mapping, Sequence

from zkr.retrieval._fusion import Target, target_key
from zkr.store.recall_index import SESSION_GAP_SECONDS

__all__ = [
    "CLAIM_WEIGHT",
    "DATE_WEIGHT",
    "DENSE_WEIGHT",
    "LEXICAL_SHARE",
    "LEXICAL_WEIGHT",
    "NEIGHBOUR_WEIGHT",
    "RRF_K",
    "SESSION_WEIGHT",
    "Z_SPAN",
    "Target",
    "fuse_scores",
    "fuse_weighted",
]

#: Weighted reciprocal-rank fusion (``fusion="rrf"``, and the replica's): constant and weights.
RRF_K = 10
LEXICAL_WEIGHT = 1.0
DENSE_WEIGHT = 0.3
_SCALE = 1_000_000_000
LEXICAL_SHARE = 0.55
NEIGHBOUR_WEIGHT = 1.0
SESSION_WEIGHT = 0.5
DATE_WEIGHT = 1.0
#: The lift of a claim whose statement matches the query (claims first; chosen on the everyday
#: benchmark, ``benchmarks/everyday.py``; LoCoMo stores no claims, so it does not move there).
CLAIM_WEIGHT = 0.5
Z_SPAN = 4.0
_POINTS = 10_000
# Scores are compared as integers (parts per 10**9): the order never depends on float noise.
_QUANTUM = 1_000_000_000


def fuse_weighted(
    lists: Sequence[tuple[Sequence[Target], float]],
    limit: int,
    *,
    k: int = RRF_K,
    impute_missing: bool = False,
) -> list[tuple[Target, int]]:
    """Weighted reciprocal-rank fusion of ``(ranked targets, weight)`` lists; the best *limit*
    targets with relevance in basis points of the best score.

    Integer arithmetic (weights in parts per million), ties by target order, as the contract's
    fusion. With *impute_missing*, a target missing from a list scores there as the position just
    past that list's end.
    """
    scores: dict[Target, int] = {}
    for ranking, _ in lists:
        for target in ranking:
            scores.setdefault(target, 0)
    for ranking, weight in lists:
        parts = round(weight * 1_000_000)
        positions: dict[Target, int] = {}
        for position, target in enumerate(ranking):
            positions.setdefault(target, position)
        missing = parts * (_SCALE // 1_000_000) // (k + 1 + len(ranking)) if impute_missing else 0
        for target in scores:
            found = positions.get(target)
            if found is None:
                scores[target] += missing
            else:
                scores[target] += parts * (_SCALE // 1_000_000) // (k + 1 + found)
    if not scores:
        return []
    best = max(scores.values())
    ranked = sorted(
        ((target, score * _POINTS // best) for target, score in scores.items()),
        key=lambda pair: (-pair[1], target_key(pair[0])),
    )
    return ranked[:limit]


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
    keyword_trust: float = 1.0,
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

    *keyword_trust* (0..1, :func:`zkr.retrieval.keyword_trust.keyword_trust`) scales the keyword
    list's whole part: its share (the dense part takes what it leaves) and its session term. At
    0 the lexical scores rank nothing; the claim, date and weak rules still apply.
    """
    lexical_share *= keyword_trust
    session_weight *= keyword_trust
    lexical_part, anchor = _lexical_parts(lexical, dense)
    times = times or {}
    session = _session_best(lexical_part, anchor, times) if session_weight else {}
    scores: dict[Target, int] = {}
    for target in [*lexical_part, *dense]:
        if target in scores:
            continue
        anchored = anchor.get(target)
        spread = neighbour_z.get(anchored, 0.0) if anchored is not None else 0.0
        # Neighbours lend, never take: a turn beside unlike turns keeps its own score, so the
        # memory that matches is never outranked by its neighbour only because it is one (two
        # captures of a session would otherwise swap places). On the development conversations
        # the clamp is neutral (dev any@10 83.3 %, held-out 80.3 %, benchmarks/recall_lab.py).
        spread = max(spread, 0.0)
        value = (
            lexical_share * lexical_part.get(target, 0.0)
            + (1.0 - lexical_share)
            * (dense_z.get(target, 0.0) + neighbour_weight * spread)
            / Z_SPAN
        )
        if target in stated:
            value += claim_weight
        placed = times.get(anchored) if anchored is not None else None
        if placed is not None:
            value += session_weight * session.get(anchored or "", 0.0)
            if any(start <= placed[1] < end for start, end in date_spans):
                value += date_weight
        scores[target] = round(value * _QUANTUM)
    return _shown(scores, weak, limit)


def _lexical_parts(
    lexical: Sequence[tuple[Target, float, str]], dense: Sequence[Target]
) -> tuple[dict[Target, float], dict[Target, str]]:
    """Each lexical candidate's bm25 as a share of the best, and every candidate's anchor (the
    source it was found through; a dense source is its own)."""
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


def _shown(
    scores: Mapping[Target, int], weak: Collection[Target], limit: int
) -> list[tuple[Target, int]]:
    """The best *limit* of *scores*, weak ones last, with relevances that never rise."""
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
