"""Dense retrieval: an exact float32 scan of one lane's vectors (contract §5.4).

``dense_ranks`` validates the query vector, finds the lane (§6.3), scores every row that still
counts — valid, target live, revision and hash current — with one matrix product, maps each vector
to retrieval targets (a source or evidence that supports a current claim counts for the claim)
keeping each target's best score, and ranks by score, then target order (source < evidence < claim,
then id). The ranking is exposed lazily (:class:`DenseRanks`): fusion needs the head of the list and
the positions of the lexical candidates, never the whole list as Python objects.

The counting rows of a lane stay in memory between searches of a long-lived process (``serve``,
Hermes) as a :class:`DenseLane`: one slot per row (vector, norm, mapped targets). A write does not
drop it: triggers tick every target whose vector, liveness or mapping may have changed in
``embedding_dirty`` (:mod:`zkr.store._embedding_tracking`), by any connection or process, so a
cached lane
at tick T re-reads only the targets ticked after T, in a few set-based queries. A lane is rebuilt
in full only when its configuration changes or much of it changed. A search inside a write
transaction never touches the cache (it could see rows that are later rolled back).

Arithmetic: vectors and query are float32 and the scores are computed in float32 with numpy (BLAS).
The reference sums left to right in float32; BLAS sums in blocks, so scores may differ from it in
the last bits and exact ties may break differently in rare cases. Rankings are otherwise the same.
"""

from __future__ import annotations

import json
import sqlite3
import weakref
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from zkr import models as m
from zkr.embeddings.projections import Config, Target, _checks, current_lane, input_hash
from zkr.embeddings.vectors import F32, row_vector, to_float32
from zkr.errors import EmbeddingError, UnknownPluginError
from zkr.store.budget import budget_paused, within_budget
from zkr.store.schema import has_table
from zkr.store.validation import is_blank

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from zkr.store.database import Database

__all__ = [
    "DenseLane",
    "DenseRanks",
    "cached_lanes",
    "dense_ranking",
    "dense_ranks",
    "dense_ranks_started",
    "load_lane",
    "query_vector",
    "row_scores",
]

_KIND_ORDER = {"source": 0, "evidence": 1, "claim": 2}
_CURRENT = "c.status = 'accepted' AND c.valid_until IS NULL AND c.recorded_until IS NULL"
_SUPPORTS = "'\"supports\"'"
# Euclidean scores are computed in row blocks so the difference matrix stays small.
_BLOCK_ROWS = 8192
# Vectors copied into the matrix per step of a full load (bounds the transient bytes objects).
_LOAD_CHUNK = 4096
# A refresh touching more targets than this share of the lane rebuilds it instead.
_REBUILD_SHARE = 4

# Cached lanes of each open Database, kept across writes (``db.caches`` is cleared on every write).
# Keyed by the (tenant, person, model, version) tuple itself: any joined string could collide, as
# every character (NUL included) is legal in an id (issue 18, defect 5).
_LANES: weakref.WeakKeyDictionary[Database, dict[tuple[str, str, str, str], DenseLane]] = (
    weakref.WeakKeyDictionary()
)


def _target_order(target: Target) -> tuple[int, str]:
    return _KIND_ORDER[target[0]], target[1]


def query_vector(query: m.QueryEmbedding, text: str | None = None) -> NDArray[np.float32]:
    """The validated float32 query vector (§5.4 step 1), embedding *text* when none is given.

    :raises EmbeddingError: blank model/version, empty or non-finite vector.
    :raises UnknownPluginError: no vector and no installed embedder for (model, version).
    """
    if is_blank(query.model):
        raise EmbeddingError("query embedding model must not be empty")
    if is_blank(query.version):
        raise EmbeddingError("query embedding version must not be empty")
    values: Any = query.vector
    if values is None:
        from zkr.plugins import get_embedder
        from zkr.plugins.embedders import embed_texts

        embedder = get_embedder(query.model, query.version)
        if text is None:
            raise UnknownPluginError("a query embedding without a vector needs the query text")
        try:
            values = next(iter(embed_texts(embedder, [text], "query")))
        except Exception as exc:  # an embedder is third-party code: report, don't crash
            raise EmbeddingError(f"embedder failed: {exc}") from exc
    vector = to_float32(values)
    if vector.ndim != 1 or len(vector) == 0 or not bool(np.isfinite(vector).all()):
        raise EmbeddingError("query embedding vector must contain finite values")
    return vector


# ----------------------------------------------------------------------------------------------
# The ranking
# ----------------------------------------------------------------------------------------------


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
            (int(i) for i in indices), key=lambda i: (-float(best[i]), _target_order(key(i)))
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
            order = _target_order(target)
            ahead += sum(1 for j in tied if _target_order(self.key(int(j))) < order)
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


def dense_ranks(
    db: Database,
    conn: sqlite3.Connection,
    tenant_id: str,
    person_id: str,
    query: m.QueryEmbedding,
    *,
    text: str | None = None,
    cache: bool = True,
) -> DenseRanks:
    """The dense list of a search (§5.4), lazily ranked. Run it inside the search's transaction.

    *text* is the search query; it is embedded by the installed embedder of (model, version) when
    ``query.vector`` is omitted. *cache* False (a search inside a write transaction) neither reads
    nor updates the cached lane.

    :raises EmbeddingError: the query is refused (§5.4) or cannot be scored against the lane.
    :raises UnknownPluginError: no vector was given and no embedder serves (model, version).
    """
    lane, vector = _lane_and_vector(db, conn, tenant_id, person_id, query, text, cache)
    return lane.rank(vector)


def _lane_and_vector(
    db: Database,
    conn: sqlite3.Connection,
    tenant_id: str,
    person_id: str,
    query: m.QueryEmbedding,
    text: str | None,
    cache: bool,
) -> tuple[DenseLane, Any]:
    """The scope's lane and the query's vector: everything a scan needs, read on *conn*'s thread."""
    # Embedding the query runs outside SQLite, where the budget's progress handler cannot stop it.
    vector = within_budget(conn, lambda: query_vector(query, text))
    with budget_paused(conn):  # the lane's load is the store's cost, paid once (see there)
        lane = load_lane(db, conn, tenant_id, person_id, query.model, query.version, cache=cache)
    return lane, vector


def dense_ranks_started(
    db: Database,
    conn: sqlite3.Connection,
    tenant_id: str,
    person_id: str,
    query: m.QueryEmbedding,
    *,
    text: str | None = None,
    cache: bool = True,
) -> Callable[[], DenseRanks]:
    """:func:`dense_ranks` with the scan started on a worker thread; returns the function that
    waits for it and answers its result, or raises what :func:`dense_ranks` raises.

    The lane is read here, on *conn*'s thread; only the scan (:meth:`DenseLane.rank`: the matrix
    product, which releases the GIL) runs on the worker, so a caller can run its SQL meanwhile
    (SQLite releases the GIL too): a recall search ranks its lexical list while the 100,000 x
    384 product runs. Same arithmetic, same scores as :func:`dense_ranks`. A refusal (a bad query
    vector, no lane) is raised when the result is asked for, where :func:`dense_ranks` would have
    raised it, not before the caller's own work.
    """
    try:
        lane, vector = _lane_and_vector(db, conn, tenant_id, person_id, query, text, cache)
    except Exception as exc:
        refused = exc

        def refuse() -> DenseRanks:
            raise refused

        return refuse
    return _scanner().submit(lane.rank, vector).result


def row_scores(
    db: Database,
    conn: sqlite3.Connection,
    tenant_id: str,
    person_id: str,
    query: m.QueryEmbedding,
    *,
    text: str | None = None,
    cache: bool = True,
) -> list[tuple[Target, float]]:
    """Each counting row's *own* target (the source, evidence or claim embedded) with its score,
    in no particular order: for a search ``as_of`` a past time, whose caller maps the rows to what
    was visible then instead of to the current claims the lane maps them to.

    :raises EmbeddingError: as :func:`dense_ranks`.
    :raises UnknownPluginError: as :func:`dense_ranks`.
    """
    lane, vector = _lane_and_vector(db, conn, tenant_id, person_id, query, text, cache)
    scores = lane.scores(vector)
    return [
        (target, float(scores[slot]))
        for slot, target in enumerate(lane.slot_target[: lane.high])
        if target is not None and bool(lane.alive[slot])
    ]


_SCANNER: list[ThreadPoolExecutor] = []


def _scanner() -> ThreadPoolExecutor:
    """The process's dense-scan worker (one thread, started on first use)."""
    if not _SCANNER:
        _SCANNER.append(ThreadPoolExecutor(max_workers=1, thread_name_prefix="zkr-dense-scan"))
    return _SCANNER[0]


def dense_ranking(
    db: Database,
    conn: sqlite3.Connection,
    tenant_id: str,
    person_id: str,
    query: m.QueryEmbedding,
    *,
    text: str | None = None,
    cache: bool = True,
) -> list[tuple[Target, float]]:
    """The whole dense list: ``[((kind, id), score), ...]``, best first, not truncated."""
    return dense_ranks(db, conn, tenant_id, person_id, query, text=text, cache=cache).ranked()


# ----------------------------------------------------------------------------------------------
# A lane in memory
# ----------------------------------------------------------------------------------------------


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
    """The counting rows of one lane, one slot each, updated target by target.

    Slots ``[0, high)`` of ``matrix``/``norms`` are in use where ``alive``; ``first`` is the first
    mapped target (an index into ``target_keys``, -1 for none) and ``extra`` the others (a vector
    of evidence supporting several current claims). ``tick`` is the ``embedding_dirty`` tick the
    lane reflects (``None``: a lane that cannot be refreshed).
    """

    config: Config | None
    tick: int | None
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

    def _reserve(self, rows: int) -> None:
        """Room for *rows* more slots beyond ``high`` (capacity grows by a quarter at least)."""
        needed = self.high + rows
        if needed <= len(self.alive):
            return
        capacity = max(needed, len(self.alive) + len(self.alive) // 4, 16)
        matrix = np.zeros((capacity, self.dimension), F32)
        if self.high:
            matrix[: self.high] = self.matrix[: self.high]
        self.matrix = matrix
        self.norms = np.concatenate([self.norms[: self.high], np.zeros(capacity - self.high, F32)])
        self.alive = np.concatenate([self.alive[: self.high], np.zeros(capacity - self.high, bool)])
        self.first = np.concatenate(
            [self.first[: self.high], np.full(capacity - self.high, -1, np.intp)]
        )
        self.slot_target.extend([None] * (capacity - len(self.slot_target)))

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
            self._reserve(1)
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

    def load(self, rows: Iterator[tuple[Target, bytes]], count: int) -> list[Target]:
        """Fill an empty lane with *rows* (about *count* of them), chunk by chunk; their order."""
        self._reserve(count + count // 8)  # headroom: new vectors rarely force a copy
        targets: list[Target] = []
        chunk: list[bytes] = []

        def flush() -> None:
            if not chunk:
                return
            self._reserve(len(chunk))
            block = np.frombuffer(b"".join(chunk), dtype=F32).reshape(len(chunk), self.dimension)
            start = self.high
            self.matrix[start : start + len(chunk)] = block
            self.norms[start : start + len(chunk)] = np.sqrt(np.einsum("ij,ij->i", block, block))
            self.high += len(chunk)
            chunk.clear()

        for target, blob in rows:
            targets.append(target)
            chunk.append(blob)
            if len(chunk) >= _LOAD_CHUNK:
                flush()
        flush()
        return targets

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
        matrix, high = self.matrix[: self.high], self.high
        alive = self.alive[:high]
        with np.errstate(all="ignore"):
            zero = np.zeros(high, dtype=bool)
            if distance == "dot":
                scores = matrix @ vector
            elif distance == "cosine":
                q_norm = np.float32(np.sqrt(np.dot(vector, vector)))
                zero = (self.norms[:high] == 0) | (q_norm == 0)
                scores = (matrix @ vector) / (q_norm * self.norms[:high])
            else:
                scores = np.empty(high, dtype=np.float32)
                for start in range(0, high, _BLOCK_ROWS):
                    diff = matrix[start : start + _BLOCK_ROWS] - vector
                    scores[start : start + _BLOCK_ROWS] = -np.sqrt(
                        np.einsum("ij,ij->i", diff, diff)
                    )
            scores = scores.astype(np.float32, copy=False)
        bad = alive & (zero | ~np.isfinite(scores))
        if bool(bad.any()):
            failing = np.flatnonzero(bad)
            first = min(failing, key=lambda slot: self.slot_target[int(slot)] or ("", ""))
            if bool(zero[first]):
                raise EmbeddingError("cosine embeddings must have non-zero magnitude")
            raise EmbeddingError("embedding similarity is not finite")
        return scores

    def rank(self, vector: NDArray[np.float32]) -> DenseRanks:
        scores = self.scores(vector)
        pairs = self._pairs()
        if not len(pairs.present):
            return DenseRanks(np.zeros(0, np.float32), [])
        best = np.full(len(self.target_keys), -np.inf, np.float32)
        np.maximum.at(best, pairs.targets, scores[pairs.slots])
        return DenseRanks(best[pairs.present], self.target_keys, pairs.present, self._group)


# ----------------------------------------------------------------------------------------------
# Loading and refreshing a lane
# ----------------------------------------------------------------------------------------------


def _stamp(conn: sqlite3.Connection) -> tuple[int, int]:
    # A statement first, so a deferred read transaction has its snapshot before data_version.
    conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone()
    version: int = conn.execute("PRAGMA data_version").fetchone()[0]
    return version, conn.total_changes


def load_lane(
    db: Database,
    conn: sqlite3.Connection,
    tenant_id: str,
    person_id: str,
    model: str,
    version: str,
    *,
    cache: bool = True,
) -> DenseLane:
    """The counting rows of (scope, model, version) with their mapping, current for *conn*'s
    snapshot: the cached lane refreshed by what was ticked since, or a fresh build."""
    lane_key = (tenant_id, person_id, model, version)
    if not cache:
        return _build(conn, lane_key, None)
    key = lane_key
    # No ticks to follow (no embedding_dirty table): keep a lane only until the data changes.
    if not has_table(conn, "embedding_dirty"):
        stamp = _stamp(conn)
        cache_key = "dense:" + json.dumps(lane_key)  # unambiguous, unlike a joined string
        cached = db.caches.get(cache_key)
        if isinstance(cached, DenseLane) and cached.stamp == stamp:
            return cached
        lane = _build(conn, lane_key, None)
        lane.stamp = stamp
        db.caches[cache_key] = lane
        return lane
    tick: int = conn.execute("SELECT COALESCE(MAX(tick), 0) FROM embedding_dirty").fetchone()[0]
    lanes = _LANES.setdefault(db, {})
    kept = lanes.get(key)
    if (
        kept is not None
        and kept.tick is not None
        and kept.tick <= tick
        and (kept.tick == tick or _refresh(conn, lane_key, kept, tick))
    ):
        return kept
    lane = _build(conn, lane_key, tick)
    lanes[key] = lane
    return lane


def cached_lanes(db: Database) -> dict[tuple[str, str, str, str], DenseLane]:
    """The lanes kept for *db* (keyed by scope, model and version); for tests and diagnostics."""
    return dict(_LANES.get(db, {}))


def _build(
    conn: sqlite3.Connection, lane_key: tuple[str, str, str, str], tick: int | None
) -> DenseLane:
    tenant_id, person_id, model, version = lane_key
    config = current_lane(conn, tenant_id, person_id, model, version)
    lane = DenseLane(config, tick)
    if config is None:
        return lane
    count = conn.execute(
        "SELECT count(*) FROM embeddings WHERE tenant_id = ? AND person_id = ? AND model = ?"
        " AND version = ? AND dimension = ?",
        (*lane_key, config[0]),
    ).fetchone()[0]
    targets = lane.load(_counting_rows(conn, lane_key, config, None), count)
    mapping = _map_targets(conn, lane_key, config, targets, None)
    for slot, (target, mapped) in enumerate(zip(targets, mapping, strict=True)):
        lane._assign(slot, LaneRow(target, b"", mapped))
    return lane


def _refresh(
    conn: sqlite3.Connection, lane_key: tuple[str, str, str, str], lane: DenseLane, tick: int
) -> bool:
    """Bring *lane* from its tick to *tick*; False when a full build is the better (or only) way."""
    assert lane.tick is not None
    dirty = conn.execute(
        "SELECT target_kind, target_id FROM embedding_dirty WHERE tick > ? AND tenant_id = ?"
        " AND person_id = ?",
        (lane.tick, lane_key[0], lane_key[1]),
    ).fetchall()
    if dirty:
        if len(dirty) > max(256, len(lane) // _REBUILD_SHARE):
            return False
        config = current_lane(conn, *lane_key)
        if config != lane.config:
            return False
        if config is None:  # still no lane: nothing to keep
            lane.tick = tick
            return True
        only: dict[str, list[str]] = {}
        for kind, target_id in dirty:
            only.setdefault(kind, []).append(target_id)
        rows = list(_counting_rows(conn, lane_key, config, only))
        mapping = _map_targets(conn, lane_key, config, [t for t, _ in rows], only)
        for kind, target_id in dirty:
            lane.drop((kind, target_id))
        for (target, blob), mapped in zip(rows, mapping, strict=True):
            lane.put(LaneRow(target, blob, mapped))
    lane.tick = tick
    return True


# The lane's rows whose target is live at the stored revision, with the certificate and, for
# uncertified rows only, the current text to hash.
_ROWS_SQL = """
SELECT e.target_kind, e.target_id, e.dimension, e.input_hash, e.normalization, e.distance,
  e.vector, k.target_id IS NOT NULL AS certified,
  CASE WHEN k.target_id IS NULL THEN CASE e.target_kind
    WHEN 'source' THEN (SELECT content FROM sources s WHERE s.id = e.target_id
      AND s.tenant_id = e.tenant_id AND s.person_id = e.person_id)
    WHEN 'evidence' THEN (SELECT quote FROM evidence v WHERE v.id = e.target_id
      AND v.tenant_id = e.tenant_id AND v.person_id = e.person_id)
    WHEN 'claim' THEN (SELECT c.subject || ' ' || c.predicate || ' ' || c.value FROM claims c
      WHERE c.id = e.target_id AND c.tenant_id = e.tenant_id AND c.person_id = e.person_id)
  END END AS text
FROM embeddings e LEFT JOIN {checks} k ON k.tenant_id = e.tenant_id AND k.person_id = e.person_id
  AND k.target_kind = e.target_kind AND k.target_id = e.target_id AND k.model = e.model
  AND k.version = e.version
WHERE e.tenant_id = ? AND e.person_id = ? AND e.model = ? AND e.version = ? AND e.dimension = ?
  AND {live}{only}
ORDER BY e.target_kind, e.target_id
"""

# Restricts a query on `embeddings e` to the targets of one kind listed in a JSON array.
_ONLY = " AND e.target_kind = ? AND e.target_id IN (SELECT value FROM json_each(?))"


def _restricted(only: dict[str, list[str]] | None) -> list[tuple[str, tuple[str, ...]]]:
    """(SQL suffix, parameters) per query: one unrestricted, or one per listed kind."""
    if only is None:
        return [("", ())]
    return [(_ONLY, (kind, json.dumps(ids))) for kind, ids in sorted(only.items())]


def _counting_rows(
    conn: sqlite3.Connection,
    lane_key: tuple[str, str, str, str],
    config: Config,
    only: dict[str, list[str]] | None,
) -> Iterator[tuple[Target, bytes]]:
    """The lane's counting rows (of the *only* targets, when given): target and float32 bytes."""
    from zkr.embeddings.projections import _live_at_revision
    from zkr.embeddings.vectors import encode, stored_config

    expected_bytes = config[0] * F32.itemsize
    on_lane: dict[tuple[Any, Any, Any], bool] = {}  # a lane has a handful of spellings: parse once
    for suffix, extra in _restricted(only):
        sql = _ROWS_SQL.format(checks=_checks(conn), live=_live_at_revision("e"), only=suffix)
        cursor = conn.execute(sql, (*lane_key, config[0], *extra))
        for kind, target_id, dimension, stored_hash, norm, dist, vector, certified, text in cursor:
            spelling = (dimension, norm, dist)
            if spelling not in on_lane:
                on_lane[spelling] = stored_config(dimension, norm, dist) == config
            if not on_lane[spelling]:
                continue
            if certified:
                # Certified rows were validated on write and nothing changed since (triggers).
                if not isinstance(vector, bytes) or len(vector) != expected_bytes:
                    continue
                yield (kind, target_id), vector
            else:
                if text is None or stored_hash != input_hash(text):
                    continue
                decoded = row_vector(dimension, norm, dist, vector)
                if decoded is None:
                    continue
                yield (kind, target_id), encode(decoded)


def _map_targets(
    conn: sqlite3.Connection,
    lane_key: tuple[str, str, str, str],
    config: Config,
    rows: list[Target],
    only: dict[str, list[str]] | None,
) -> list[tuple[Target, ...]]:
    """Each counting row's retrieval targets (§5.4 step 3), computed per kind in set queries."""
    lane: tuple[Any, ...] = (*lane_key, config[0])
    lane_sql = (
        "e.tenant_id = ? AND e.person_id = ? AND e.model = ? AND e.version = ? AND e.dimension = ?"
    )
    listed = {kind: json.dumps(ids) for kind, ids in (only or {}).items()}
    # Evidence: live with a live source -> current supported claims; else nothing if it supports
    # any claim; else itself.
    evidence_live: set[str] = set()
    evidence_claims: dict[str, list[str]] = {}
    evidence_supports: set[str] = set()
    if only is None or "evidence" in listed:
        restrict, params = "", lane
        if only is not None:
            restrict = " AND e.target_id IN (SELECT value FROM json_each(?))"
            params = (*lane, listed["evidence"])
        for evidence_id, source_live, claim_id, current in conn.execute(
            "SELECT e.target_id, s.id IS NOT NULL, c.id, c.id IS NOT NULL AND "
            + _CURRENT
            + " FROM embeddings e JOIN evidence v ON v.id = e.target_id"
            " AND v.tenant_id = e.tenant_id AND v.person_id = e.person_id AND v.deleted_at IS NULL"
            " LEFT JOIN sources s ON s.id = v.source_id AND s.tenant_id = v.tenant_id"
            " AND s.person_id = v.person_id AND s.deleted_at IS NULL"
            " LEFT JOIN claim_evidence ce ON ce.evidence_id = v.id AND ce.tenant_id = v.tenant_id"
            f" AND ce.person_id = v.person_id AND ce.relation = {_SUPPORTS}"
            " LEFT JOIN claims c ON c.id = ce.claim_id AND c.tenant_id = ce.tenant_id"
            " AND c.person_id = ce.person_id"
            f" WHERE {lane_sql} AND e.target_kind = 'evidence'{restrict}",
            params,
        ):
            if source_live:
                evidence_live.add(evidence_id)
            if claim_id is not None:
                evidence_supports.add(evidence_id)
                if current:
                    evidence_claims.setdefault(evidence_id, []).append(claim_id)
    # Sources: live -> current claims supported by live evidence; else nothing if any evidence
    # (live or not) supports any claim, or if it has no evidence; else itself.
    source_claims: dict[str, set[str]] = {}
    source_supports: set[str] = set()
    source_has_evidence: set[str] = set()
    if only is None or "source" in listed:
        restrict, params = "", lane
        if only is not None:
            restrict = " AND e.target_id IN (SELECT value FROM json_each(?))"
            params = (*lane, listed["source"])
        for source_id, evidence_id, evidence_live_flag, claim_id, current in conn.execute(
            "SELECT e.target_id, v.id, v.deleted_at IS NULL, c.id, c.id IS NOT NULL AND "
            + _CURRENT
            + " FROM embeddings e JOIN evidence v ON v.source_id = e.target_id"
            " AND v.tenant_id = e.tenant_id AND v.person_id = e.person_id"
            " LEFT JOIN claim_evidence ce ON ce.evidence_id = v.id AND ce.tenant_id = v.tenant_id"
            f" AND ce.person_id = v.person_id AND ce.relation = {_SUPPORTS}"
            " LEFT JOIN claims c ON c.id = ce.claim_id AND c.tenant_id = ce.tenant_id"
            " AND c.person_id = ce.person_id"
            f" WHERE {lane_sql} AND e.target_kind = 'source'{restrict}",
            params,
        ):
            source_has_evidence.add(source_id)
            if evidence_id is None:
                continue
            if claim_id is not None:
                source_supports.add(source_id)
                if current and evidence_live_flag:
                    source_claims.setdefault(source_id, set()).add(claim_id)
    mapping: list[tuple[Target, ...]] = []
    for kind, target_id in rows:
        if kind == "claim":
            mapping.append((("claim", target_id),))  # counting rows of claims are current claims
        elif kind == "evidence":
            if target_id not in evidence_live:
                mapping.append(())
            elif target_id in evidence_claims:
                mapping.append(tuple(("claim", c) for c in sorted(evidence_claims[target_id])))
            elif target_id in evidence_supports:
                mapping.append(())
            else:
                mapping.append((("evidence", target_id),))
        else:
            if target_id in source_claims:
                mapping.append(tuple(("claim", c) for c in sorted(source_claims[target_id])))
            elif target_id in source_supports or target_id not in source_has_evidence:
                mapping.append(())
            else:
                mapping.append((("source", target_id),))
    return mapping
