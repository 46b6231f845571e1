"""The dense list of one search, ranked lazily (contract §5.4 step 4).

A lane scores every counting row at once; what fusion then needs is the head of the list and the
positions of a few lexical candidates, never the whole list as Python objects. :class:`DenseRanks`
answers both from the score array: :meth:`~DenseRanks.prefix` sorts only the head,
:meth:`~DenseRanks.position` counts. Ties break on target order (source < evidence < claim,
then id).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from zkr.embeddings.projections import Target

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["DenseRanks", "target_order"]

_KIND_ORDER = {"source": 0, "evidence": 1, "claim": 2}


def target_order(target: Target) -> tuple[int, str]:
    """A target's place among equal scores: source < evidence < claim, then id."""
    return _KIND_ORDER[target[0]], target[1]


class DenseRanks:
    """The dense list of one search: targets by score descending, then target order.

    ``best[i]`` is the score of target ``keys[present[i]]`` (``keys[i]`` without *present*);
    *index* maps a target to its ``i``. The list is never materialised unless asked for:
    :meth:`prefix` sorts only the head, :meth:`position` counts.
    """

    def __init__(
        self,
        best: NDArray[np.float32],
        keys: list[Target],
        present: NDArray[np.intp] | None = None,
        index: Callable[[Target], int | None] | None = None,
    ) -> None:
        self.best = best
        self._keys = keys
        self._present = present
        self._index = index

    def __len__(self) -> int:
        return len(self.best)

    def key(self, i: int) -> Target:
        """The target scored by ``best[i]``."""
        return self._keys[int(self._present[i]) if self._present is not None else i]

    def _sorted(self, indices: Any) -> list[int]:
        best, key = self.best, self.key
        return sorted(
            (int(i) for i in indices), key=lambda i: (-float(best[i]), target_order(key(i)))
        )

    def prefix(self, count: int) -> list[Target]:
        """The first *count* targets of the list."""
        count = min(count, len(self))
        if count <= 0:
            return []
        if count == len(self):
            head = self._sorted(range(count))
        else:
            threshold = -np.partition(-self.best, count - 1)[count - 1]
            head = self._sorted(np.flatnonzero(self.best >= threshold))[:count]
        return [self.key(i) for i in head]

    def position(self, target: Target) -> int | None:
        """The 0-based position of *target* in the list, ``None`` when it is not listed."""
        if self._index is None:
            positions = {self.key(i): i for i in range(len(self))}
            self._index = positions.get
        i = self._index(target)
        if i is None:
            return None
        score = self.best[i]
        ahead = int(np.count_nonzero(self.best > score))
        tied = np.flatnonzero(self.best == score)
        if len(tied) > 1:
            order = target_order(target)
            ahead += sum(1 for j in tied if target_order(self.key(int(j))) < order)
        return ahead

    def score(self, target: Target) -> float | None:
        """The score of *target*, ``None`` when it is not listed."""
        if self._index is None:
            positions = {self.key(i): i for i in range(len(self))}
            self._index = positions.get
        i = self._index(target)
        return None if i is None else float(self.best[i])

    def ranked(self) -> list[tuple[Target, float]]:
        """The whole list with scores (for callers that want it all)."""
        order = np.argsort(-self.best, kind="stable")
        ordered = self.best[order]
        indices = order.tolist()
        # Runs of equal scores (rare) are put in target order; the rest is ordered by score.
        same = (ordered[1:] == ordered[:-1]).astype(np.int8)
        edges = np.flatnonzero(np.diff(np.r_[np.int8(0), same, np.int8(0)]))
        for start, end in zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True):
            indices[start : end + 1] = self._sorted(indices[start : end + 1])
        return [(self.key(i), score) for i, score in zip(indices, ordered.tolist(), strict=True)]
