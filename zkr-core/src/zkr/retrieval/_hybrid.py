"""Fusing the lexical list with a dense list that is ranked lazily (contract §5.5, exactly).

A hybrid search's dense list holds every vector target of the scope (100,000 and more); building
it as Python objects costs more than the search. :func:`fuse_hybrid` gives what
``zkr.retrieval._fusion.fuse([lexical, dense], limit)`` gives while reading only the head of the
dense list
and the dense positions of the lexical candidates (:class:`RankedList`, e.g.
:class:`zkr.embeddings.dense.DenseRanks`, answers both from its score array).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from zkr.retrieval._fusion import Target, rank_contribution, target_key

__all__ = ["RankedList", "fuse_hybrid"]


class RankedList(Protocol):
    """A ranked list without repeats, read lazily: its length, its head, one target's place."""

    def __len__(self) -> int: ...

    def prefix(self, count: int) -> Sequence[Target]: ...

    def position(self, target: Target) -> int | None: ...


def fuse_hybrid(
    lexical: Sequence[Target], dense: RankedList, limit: int
) -> list[tuple[Target, int]]:
    """The best *limit* targets of the two lists with their relevance basis points.

    Exact: a target only in the dense list at position ``p`` scores ``rank_contribution(p)``, which
    never grows with ``p``; with a head of ``K`` positions every such target beyond it scores at
    most ``rank_contribution(K)``, and the head holds at least *limit* of them, so the best score
    is known. A target beyond the head could still enter only by tying the last kept relevance
    (and winning on target order); then the head doubles until none can.
    """
    first: dict[Target, int] = {}
    for position, target in enumerate(lexical):
        first.setdefault(target, position)  # a repeated target keeps its first position
    dense_positions = {target: dense.position(target) for target in first}
    total = len(dense)
    head = min(total, limit + len(first))
    while True:
        scores = {
            target: rank_contribution(position)
            + (rank_contribution(p) if (p := dense_positions[target]) is not None else 0)
            for target, position in first.items()
        }
        for position, target in enumerate(dense.prefix(head)):
            if target not in first:
                scores[target] = rank_contribution(position)
        if not scores:
            return []
        best = max(scores.values())
        ranked = sorted(
            ((target, score * 10_000 // best) for target, score in scores.items()),
            key=lambda pair: (-pair[1], target_key(pair[0])),
        )[:limit]
        if head >= total or len(ranked) < limit:
            return ranked
        if rank_contribution(head) * 10_000 // best < ranked[-1][1]:
            return ranked
        head = min(total, head * 2)
