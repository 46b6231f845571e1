"""Reciprocal-rank fusion in integer arithmetic (contract §5.5).

A target is a ``(kind, id)`` pair with kind ``source``, ``evidence`` or ``claim``. Each ranked list
gives the target at 0-based position ``p`` the integer ``1_000_000 // (61 + p)`` (k = 60 on 1-based
ranks, scaled by 10**6), the scores of both lists add up, and relevance is the score as integer
basis points of the best score. Ties are broken on the *truncated* basis points, then by kind
(source < evidence < claim), then by id, so the order never depends on float rounding or on the
order in which targets were found.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["KIND_ORDER", "RRF_K", "RRF_SCALE", "Target", "fuse", "rank_contribution", "target_key"]

#: A retrieval target: ``(kind, id)``.
Target = tuple[str, str]

RRF_K = 60
RRF_SCALE = 1_000_000
#: Sources sort before evidence, evidence before claims (not alphabetical).
KIND_ORDER = {"source": 0, "evidence": 1, "claim": 2}


def target_key(target: Target) -> tuple[int, str]:
    """The contract's target order: kind (source < evidence < claim), then id."""
    kind, target_id = target
    return KIND_ORDER[kind], target_id


def rank_contribution(position: int) -> int:
    """What the target at 0-based *position* of one list adds to its fused score."""
    return RRF_SCALE // (RRF_K + 1 + position)


def fuse(rankings: Iterable[Sequence[Target]], limit: int) -> list[tuple[Target, int]]:
    """Fuse ranked target lists; the best *limit* targets with their relevance basis points.

    A target counted twice in one list keeps only its first (best) position.
    """
    scores: dict[Target, int] = {}
    for ranking in rankings:
        counted: set[Target] = set()
        for position, target in enumerate(ranking):
            if target in counted:
                continue
            counted.add(target)
            scores[target] = scores.get(target, 0) + rank_contribution(position)
    if not scores:
        return []
    best = max(scores.values())
    relevances = [(target, score * 10_000 // best) for target, score in scores.items()]
    relevances.sort(key=lambda pair: (-pair[1], target_key(pair[0])))
    return relevances[:limit]
