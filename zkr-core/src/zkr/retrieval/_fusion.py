"""Reciprocal-rank fusion in integer arithmetic (contract §5.5).

A target is a ``(kind, id)`` pair with kind ``source``, ``evidence`` or ``claim``. Each ranked list
gives the target at 0-based position ``p`` the integer ``1_000_000 // (61 + p)`` (k = 60 on 1-based
ranks, scaled by 10**6), the scores of both lists add up, and relevance is the score as integer
basis points of the best score. Ties are broken on the *truncated* basis points, then by kind
(source < evidence < claim), then by id, so the order never depends on float rounding or on the
order in which targets were found.

A ranked list may be long (a dense list holds every vector target of the scope), but only its
head can reach the top ``limit``: :func:`fuse` reads every list to a depth ``d`` and scores what it
saw exactly (a target seen in one list is looked up deeper in the others), while anything unseen
scores at most ``1_000_000 // (61 + d)`` per list it may be in. When that bound truncates to fewer
basis points than the ``limit``-th seen target has, the seen targets' top is the answer; otherwise
``d`` doubles. The result equals sorting every target (``tests/core/test_fusion.py`` compares the
two on random lists full of ties). A hybrid search does not even build its dense list:
:func:`zkr.retrieval._hybrid.fuse_hybrid` does the same with a lazily ranked one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import compress, count, islice

__all__ = ["KIND_ORDER", "RRF_K", "RRF_SCALE", "Target", "fuse", "rank_contribution", "target_key"]

#: A retrieval target: ``(kind, id)``.
Target = tuple[str, str]

RRF_K = 60
RRF_SCALE = 1_000_000
#: Sources sort before evidence, evidence before claims (not alphabetical).
KIND_ORDER = {"source": 0, "evidence": 1, "claim": 2}
#: Relevance is a share of the best score in these units (basis points).
_POINTS = 10_000


def target_key(target: Target) -> tuple[int, str]:
    """The contract's target order: kind (source < evidence < claim), then id."""
    kind, target_id = target
    return KIND_ORDER[kind], target_id


def rank_contribution(position: int) -> int:
    """What the target at 0-based *position* of one list adds to its fused score."""
    return RRF_SCALE // (RRF_K + 1 + position)


def _first_positions(ranking: Sequence[Target], depth: int) -> dict[Target, int]:
    """Each target's first position among the first *depth* entries of *ranking*."""
    positions: dict[Target, int] = {}
    for position, target in enumerate(islice(ranking, depth)):
        positions.setdefault(target, position)
    return positions


def _deep_positions(
    ranking: Sequence[Target], depth: int, wanted: set[Target]
) -> dict[Target, int]:
    """First positions at or after *depth* of the *wanted* targets that occur there.

    The membership test runs in C over the tail (``compress``/``map``), and stops once every wanted
    target was found.
    """
    found: dict[Target, int] = {}
    if not wanted or depth >= len(ranking):
        return found
    hits = compress(count(depth), map(wanted.__contains__, islice(ranking, depth, None)))
    for position in hits:
        target = ranking[position]
        if target not in found:
            found[target] = position
            if len(found) == len(wanted):
                break
    return found


def _ranked(scores: dict[Target, int], best: int) -> list[tuple[Target, int]]:
    relevances = [(target, score * _POINTS // best) for target, score in scores.items()]
    relevances.sort(key=lambda pair: (-pair[1], target_key(pair[0])))
    return relevances


def _fuse_to_depth(
    rankings: list[Sequence[Target]], limit: int, depth: int
) -> list[tuple[Target, int]] | None:
    """The fused top *limit* from the first *depth* entries of each list, or ``None`` when an
    unseen target might still belong to it."""
    heads = [_first_positions(ranking, depth) for ranking in rankings]
    seen: set[Target] = set().union(*heads)
    scores = dict.fromkeys(seen, 0)
    unseen_bound = 0
    for ranking, head in zip(rankings, heads, strict=True):
        for target, position in head.items():
            scores[target] += rank_contribution(position)
        if len(ranking) > depth:
            unseen_bound += rank_contribution(depth)
            for target, position in _deep_positions(ranking, depth, seen - head.keys()).items():
                scores[target] += rank_contribution(position)
    if not scores:
        return [] if unseen_bound == 0 else None
    best = max(scores.values())
    if best < unseen_bound:
        return None  # the best score itself may be unseen
    ranked = _ranked(scores, best)
    if unseen_bound == 0:
        return ranked[:limit]
    if len(ranked) >= limit and ranked[limit - 1][1] > unseen_bound * _POINTS // best:
        return ranked[:limit]
    return None


def fuse(rankings: Iterable[Sequence[Target]], limit: int) -> list[tuple[Target, int]]:
    """Fuse ranked target lists; the best *limit* targets with their relevance basis points.

    A target counted twice in one list keeps only its first (best) position.
    """
    lists = list(rankings)
    lengths = [len(ranking) for ranking in lists]
    if limit <= 0 or not lists:
        # Nothing to gain from a head: read everything (slicing as a full sort would).
        return _fuse_to_depth(lists, limit, max(lengths, default=0)) or []
    # Deep enough that the longest list's head alone holds `limit` targets the shorter lists
    # cannot all have taken.
    depth = max(1, limit + sum(lengths) - max(lengths))
    while True:
        fused = _fuse_to_depth(lists, limit, depth)
        if fused is not None:
            return fused
        depth *= 2
