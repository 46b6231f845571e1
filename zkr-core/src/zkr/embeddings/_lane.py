"""A lane in memory: the counting rows of one (scope, model, version), scored in one product.

One slot per counting row: its float32 vector (a row of ``matrix``), its norm, and the retrieval
targets it maps to (a source or evidence that supports current claims counts for the claims). A
full build fills the slots in blocks (:meth:`DenseLane.append_block`, :meth:`DenseLane.map_all`:
one bytes join per block and a handful of C-level passes, no Python per row), because a lane of
100,000 rows must load in well under a second. A refresh replaces a few rows one by one
(:meth:`DenseLane.put`, :meth:`DenseLane.drop`).

Arithmetic: vectors and query are float32 and the scores are computed in float32 with numpy (BLAS).
The reference sums left to right in float32; BLAS sums in blocks, so scores may differ from it in
the last bits and exact ties may break differently in rare cases. Rankings are otherwise the same.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from zkr.embeddings._ranks import DenseRanks
from zkr.embeddings.projections import Config, Target
from zkr.embeddings.vectors import F32
from zkr.errors import EmbeddingError

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["DenseLane", "LaneRow", "LaneTuning"]


@dataclass(frozen=True, slots=True)
class LaneTuning:
    """How a lane trades memory for speed; the defaults suit 384-d lanes up to about 1M rows.

    ``block_rows``: rows per step of a euclidean scan (bounds the difference matrix).
    ``load_chunk``: rows fetched and copied per step of a full build (bounds transient bytes).
    ``rebuild_share``: a refresh touching more than 1/share of the lane rebuilds it instead.
    ``headroom_share``: a full build reserves 1/share more slots, so new vectors rarely force a
    copy of the matrix (every spare slot is resident memory in ``serve``).
    ``file_rows``: a full build of at least this many rows is saved beside the database
    (:mod:`zkr.embeddings._lane_file`) for the next process; 0 never saves or reads a file.
    """

    block_rows: int = 8192
    load_chunk: int = 4096
    rebuild_share: int = 4
    headroom_share: int = 32
    file_rows: int = 20_000


@dataclass(frozen=True, slots=True)
class LaneRow:
    """One counting row: its own target, its float32 bytes, the retrieval targets it maps to."""

    target: Target
    vector: bytes
    mapped: tuple[Target, ...]


@dataclass
class _Pairs:
    """(slot, target) mapping pairs, derived from the slots after a change.

    ``targets`` index ``DenseLane.target_keys``; ``present`` lists (ascending) the targets some
    counting row maps to, ``group_of`` maps a target index to its place in ``present`` (or -1).
    """

    slots: NDArray[np.intp]
    targets: NDArray[np.intp]
    present: NDArray[np.intp]
    group_of: NDArray[np.intp]


@dataclass
class DenseLane:
    """The counting rows of one lane, one slot each.

    Slots ``[0, high)`` of ``matrix``/``norms`` are in use where ``alive``; ``first`` is the first
    mapped target (an index into ``target_keys``, -1 for none) and ``extra`` the others (a vector
    of evidence supporting several current claims). ``tick`` is the ``embedding_dirty`` tick the
    lane reflects (``None``: a lane that cannot be refreshed).
    """

    config: Config | None
    tick: int | None
    tuning: LaneTuning = field(default_factory=LaneTuning)
    stamp: Any = None
    matrix: NDArray[np.float32] = field(default_factory=lambda: np.zeros((0, 0), F32))
    norms: NDArray[np.float32] = field(default_factory=lambda: np.zeros(0, np.float32))
    alive: NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, bool))
    first: NDArray[np.intp] = field(default_factory=lambda: np.zeros(0, np.intp))
    high: int = 0
    slot_of: dict[Target, int] = field(default_factory=dict)
    slot_target: list[Target | None] = field(default_factory=list)
    extra: dict[int, tuple[int, ...]] = field(default_factory=dict)
    free: list[int] = field(default_factory=list)
    target_keys: list[Target] = field(default_factory=list)
    target_index: dict[Target, int] = field(default_factory=dict)
    pairs: _Pairs | None = None

    @property
    def dimension(self) -> int:
        return self.config[0] if self.config is not None else 0

    def __len__(self) -> int:
        return len(self.slot_of)

    # -- slots -----------------------------------------------------------------------------

    def reserve(self, rows: int) -> None:
        """Room for *rows* more slots beyond ``high`` (capacity grows by a quarter at least)."""
        needed = self.high + rows
        if needed <= len(self.alive):
            return
        capacity = max(needed, len(self.alive) + len(self.alive) // 4, 16)
        # np.empty: slots past ``high`` are written before they are read (alive is False there).
        matrix = np.empty((capacity, self.dimension), F32)
        if self.high:
            matrix[: self.high] = self.matrix[: self.high]
        self.matrix = matrix
        self.norms = np.concatenate([self.norms[: self.high], np.zeros(capacity - self.high, F32)])
        self.alive = np.concatenate([self.alive[: self.high], np.zeros(capacity - self.high, bool)])
        self.first = np.concatenate(
            [self.first[: self.high], np.full(capacity - self.high, -1, np.intp)]
        )
        self.slot_target.extend([None] * (capacity - len(self.slot_target)))

    def reserve_for_build(self, count: int) -> None:
        """Room for a full build of about *count* rows plus the tuning's headroom."""
        self.reserve(count + count // max(self.tuning.headroom_share, 1))

    def _target(self, target: Target) -> int:
        index = self.target_index.get(target)
        if index is None:
            index = self.target_index[target] = len(self.target_keys)
            self.target_keys.append(target)
        return index

    def _assign(self, slot: int, row: LaneRow) -> None:
        self.slot_of[row.target] = slot
        self.slot_target[slot] = row.target
        self.alive[slot] = True
        mapped = [self._target(t) for t in row.mapped]
        self.first[slot] = mapped[0] if mapped else -1
        if len(mapped) > 1:
            self.extra[slot] = tuple(mapped[1:])
        else:
            self.extra.pop(slot, None)

    def put(self, row: LaneRow) -> None:
        """Add or replace the counting row of ``row.target``."""
        self.drop(row.target)
        if self.free:
            slot = self.free.pop()
        else:
            self.reserve(1)
            slot = self.high
            self.high += 1
        vector = np.frombuffer(row.vector, dtype=F32)
        self.matrix[slot] = vector
        self.norms[slot] = np.sqrt(np.dot(vector, vector))
        self._assign(slot, row)
        self.pairs = None

    def drop(self, target: Target) -> None:
        """Forget the row of *target* (no-op when it has none)."""
        slot = self.slot_of.pop(target, None)
        if slot is None:
            return
        self.alive[slot] = False
        self.slot_target[slot] = None
        self.first[slot] = -1
        self.extra.pop(slot, None)
        self.free.append(slot)
        self.pairs = None

    # -- a full build, block by block ------------------------------------------------------

    def append_block(self, keys: Sequence[Target], blob: bytes) -> None:
        """Append rows *keys* (not yet in the lane) whose vectors are *blob*, concatenated.

        The rows map to nothing until :meth:`map_all` or :meth:`put` says otherwise.
        """
        count = len(keys)
        if not count:
            return
        self.reserve(count)
        start, end = self.high, self.high + count
        block = np.frombuffer(blob, dtype=F32).reshape(count, self.dimension)
        self.matrix[start:end] = block
        self.norms[start:end] = np.sqrt(np.einsum("ij,ij->i", block, block))
        self.alive[start:end] = True
        self.slot_target[start:end] = keys
        self.slot_of.update(zip(keys, itertools.count(start)))
        self.high = end
        self.pairs = None

    def map_all(self, blocks: Iterable[tuple[Sequence[Target], Sequence[Target]]]) -> None:
        """Set the mapping of a freshly built lane from blocks of pairs (in any order): in each
        block, row ``rows[i]`` maps to target ``mapped[i]``. Pairs of rows not in the lane are
        ignored. Each block is reduced to two integer arrays before the next is read, and a
        target that is also a row is kept as that row's own tuple, so the build holds no second
        copy of the lane's keys (a lane read from its file shares them the same way)."""
        slot_parts: list[NDArray[np.intp]] = []
        index_parts: list[NDArray[np.intp]] = []
        for rows, mapped in blocks:
            if not rows:
                continue
            slot_list = list(map(self.slot_of.get, rows, itertools.repeat(-1)))
            slots = np.fromiter(slot_list, np.intp, len(slot_list))
            known = slots >= 0
            if not bool(known.all()):
                keep = np.flatnonzero(known).tolist()
                mapped = [mapped[i] for i in keep]
                slots = slots[known]
                if not keep:
                    continue
            for target in dict.fromkeys(mapped):
                if target not in self.target_index:
                    slot = self.slot_of.get(target)
                    own = None if slot is None else self.slot_target[slot]
                    key = target if own is None else own
                    self.target_index[key] = len(self.target_keys)
                    self.target_keys.append(key)
            slot_parts.append(slots)
            index_parts.append(
                np.fromiter(map(self.target_index.__getitem__, mapped), np.intp, len(mapped))
            )
        if not slot_parts:
            return
        slots, index = np.concatenate(slot_parts), np.concatenate(index_parts)
        # A row's pairs side by side, its targets in first-seen order.
        order = np.argsort(slots, kind="stable")
        slots, index = slots[order], index[order]
        # Each slot's first pair sets ``first``; the (rare) slots with more pairs keep the rest.
        starts = np.flatnonzero(np.r_[True, slots[1:] != slots[:-1]])
        self.first[slots[starts]] = index[starts]
        ends = np.r_[starts[1:], len(slots)]
        several = ends - starts > 1
        for start, end in zip(starts[several].tolist(), ends[several].tolist(), strict=True):
            self.extra[int(slots[start])] = tuple(index[start + 1 : end].tolist())
        self.pairs = None

    # -- ranking ---------------------------------------------------------------------------

    def _pairs(self) -> _Pairs:
        if self.pairs is None:
            high = self.high
            single = np.flatnonzero(self.alive[:high] & (self.first[:high] >= 0))
            slots = [single]
            targets = [self.first[single]]
            for slot, more in self.extra.items():
                slots.append(np.full(len(more), slot, np.intp))
                targets.append(np.asarray(more, np.intp))
            slot_arr = np.concatenate(slots).astype(np.intp, copy=False)
            target_arr = np.concatenate(targets).astype(np.intp, copy=False)
            counts = np.bincount(target_arr, minlength=len(self.target_keys))
            present = np.flatnonzero(counts).astype(np.intp)
            group_of = np.full(len(self.target_keys), -1, np.intp)
            group_of[present] = np.arange(len(present), dtype=np.intp)
            self.pairs = _Pairs(slot_arr, target_arr, present, group_of)
        return self.pairs

    def _group(self, target: Target) -> int | None:
        index = self.target_index.get(target)
        if index is None or self.pairs is None:
            return None
        group = int(self.pairs.group_of[index])
        return group if group >= 0 else None

    def _raw_scores(
        self, vector: NDArray[np.float32], distance: str
    ) -> tuple[NDArray[np.float32], NDArray[np.bool_]]:
        """Scores of slots ``[0, high)`` and which of them have a zero magnitude under cosine."""
        matrix, high = self.matrix[: self.high], self.high
        zero = np.zeros(high, dtype=bool)
        if distance == "dot":
            return (matrix @ vector).astype(np.float32, copy=False), zero
        if distance == "cosine":
            q_norm = np.float32(np.sqrt(np.dot(vector, vector)))
            zero = (self.norms[:high] == 0) | (q_norm == 0)
            scores = (matrix @ vector) / (q_norm * self.norms[:high])
            return scores.astype(np.float32, copy=False), zero
        scores = np.empty(high, dtype=np.float32)
        step = max(self.tuning.block_rows, 1)
        for start in range(0, high, step):
            diff = matrix[start : start + step] - vector
            scores[start : start + step] = -np.sqrt(np.einsum("ij,ij->i", diff, diff))
        return scores, zero

    def scores(self, vector: NDArray[np.float32]) -> NDArray[np.float32]:
        """One float32 score per slot in ``[0, high)`` (dead slots hold garbage).

        :raises EmbeddingError: dimension mismatch, zero magnitude under cosine, non-finite score
            (for the first failing row in (kind, id) order, as the reference's scan fails).
        """
        if not self.slot_of or self.config is None:
            return np.zeros(0, dtype=np.float32)
        dimension, _normalization, distance = self.config
        if len(vector) != dimension:
            raise EmbeddingError(
                f"query embedding dimension {len(vector)} does not match stored dimension"
                f" {dimension}"
            )
        with np.errstate(all="ignore"):
            scores, zero = self._raw_scores(vector, distance)
        bad = self.alive[: self.high] & (zero | ~np.isfinite(scores))
        if bool(bad.any()):
            failing = np.flatnonzero(bad)
            first = min(failing, key=lambda slot: self.slot_target[int(slot)] or ("", ""))
            if bool(zero[first]):
                raise EmbeddingError("cosine embeddings must have non-zero magnitude")
            raise EmbeddingError("embedding similarity is not finite")
        return scores

    def rank(self, vector: NDArray[np.float32]) -> DenseRanks:
        """The dense list of a query *vector* against this lane."""
        scores = self.scores(vector)
        pairs = self._pairs()
        if not len(pairs.present):
            return DenseRanks(np.zeros(0, np.float32), [])
        best = np.full(len(self.target_keys), -np.inf, np.float32)
        np.maximum.at(best, pairs.targets, scores[pairs.slots])
        return DenseRanks(best[pairs.present], self.target_keys, pairs.present, self._group)
