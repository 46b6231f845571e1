"""Dense retrieval: an exact float32 scan of one lane's vectors (contract §5.4).

``dense_ranks`` validates the query vector, finds the lane (§6.3), scores every row that still
counts — valid, target live, revision and hash current — with one matrix product
(:class:`~zkr.embeddings._lane.DenseLane`), maps each vector to retrieval targets keeping each
target's best score, and ranks by score, then target order
(:class:`~zkr.embeddings._ranks.DenseRanks`, lazily).

The counting rows of a lane stay in memory between searches of a long-lived process (``serve``,
Hermes). A write does not drop them: triggers tick every target whose vector, liveness or mapping
may have changed in ``embedding_dirty`` (:mod:`zkr.store._embedding_tracking`), by any connection
or process, so a cached lane at tick T re-reads only the targets ticked after T, in a few
set-based queries (:mod:`zkr.embeddings._lane_rows`). A lane is rebuilt in full only when its
configuration changes or much of it changed; a full build reads certified rows in blocks, with no
Python per row. A search inside a write transaction never touches the cache (it could see rows
that are later rolled back).
"""

from __future__ import annotations

import json
import sqlite3
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from threading import Lock
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from zkr import models as m
from zkr.embeddings._blas import one_blas_thread
from zkr.embeddings._lane import DenseLane, LaneRow, LaneTuning
from zkr.embeddings._lane_file import read_lane, save_lane
from zkr.embeddings._lane_rows import (
    LaneKey,
    certified_blocks,
    checked_rows,
    lane_row_count,
    mapping_blocks,
    mapping_pairs,
    spellings_on_lane,
)
from zkr.embeddings._memory import return_free_memory
from zkr.embeddings._ranks import DenseRanks
from zkr.embeddings.projections import Target, current_lane
from zkr.embeddings.vectors import to_float32
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
    "DenseScan",
    "LaneTuning",
    "cached_lanes",
    "dense_ranking",
    "dense_ranks",
    "dense_ranks_started",
    "load_lane",
    "query_vector",
    "row_scores",
]

# Cached lanes of each open Database, kept across writes (``db.caches`` is cleared on every write).
# Keyed by the (tenant, person, model, version) tuple itself: any joined string could collide, as
# every character (NUL included) is legal in an id (issue 18, defect 5).
_LANES: weakref.WeakKeyDictionary[Database, dict[LaneKey, DenseLane]] = weakref.WeakKeyDictionary()


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


class DenseScan(NamedTuple):
    """What every dense scan of a search is asked with: the database and the search's
    connection, the scope, the query embedding, and the search text (embedded by the installed
    embedder of (model, version) when ``query.vector`` is omitted). *cache* False (a search inside
    a write transaction) neither reads nor updates the cached lane."""

    db: Database
    conn: sqlite3.Connection
    tenant_id: str
    person_id: str
    query: m.QueryEmbedding
    text: str | None = None
    cache: bool = True


def dense_ranks(scan: DenseScan) -> DenseRanks:
    """The dense list of a search (§5.4), lazily ranked. Run it inside the search's transaction.

    :raises EmbeddingError: the query is refused (§5.4) or cannot be scored against the lane.
    :raises UnknownPluginError: no vector was given and no embedder serves (model, version).
    """
    lane, vector = _lane_and_vector(scan)
    return lane.rank(vector)


def _lane_and_vector(scan: DenseScan) -> tuple[DenseLane, Any]:
    """The scope's lane and the query's vector: everything a scan needs, read on *conn*'s thread."""
    # Embedding the query runs outside SQLite, where the budget's progress handler cannot stop it
    # (a worker thread waited on with the budget's time left); a given vector is only checked:
    # a thread started for that cost more than the check itself on every hybrid search.
    conn, query, text = scan.conn, scan.query, scan.text
    if query.vector is not None:
        vector = query_vector(query, text)
    else:
        vector = within_budget(conn, lambda: query_vector(query, text))
    with budget_paused(conn):  # the lane's load is the store's cost, paid once (see there)
        lane = load_lane(
            scan.db, conn, scan.tenant_id, scan.person_id, query.model, query.version,
            cache=scan.cache,
        )  # fmt: skip
    return lane, vector


def dense_ranks_started(scan: DenseScan) -> Callable[[], DenseRanks]:
    """:func:`dense_ranks` with the scan started on a worker thread; returns the function that
    waits for it and answers its result, or raises what :func:`dense_ranks` raises.

    The lane is read here, on *conn*'s thread; only the scan (:meth:`DenseLane.rank`: the matrix
    product, which releases the GIL) runs on the worker, so a caller can run its SQL meanwhile
    (SQLite releases the GIL too): a recall search ranks its lexical list while the 100,000 x
    384 product runs (a lane under :data:`INLINE_SCAN_ROWS` rows is scanned here). Same
    arithmetic, same scores as :func:`dense_ranks`. A refusal (a bad query vector, no lane) is
    raised when the result is asked for, where :func:`dense_ranks` would have raised it, not
    before the caller's own work.
    """
    try:
        lane, vector = _lane_and_vector(scan)
        if lane.high < INLINE_SCAN_ROWS:
            ranks = lane.rank(vector)
            return lambda: ranks
    except Exception as exc:
        refused = exc

        def refuse() -> DenseRanks:
            raise refused

        return refuse
    return _StartedScan(lane, vector).result


def _rank_on_one_thread(lane: DenseLane, vector: NDArray[np.float32]) -> DenseRanks:
    """A started scan, its product on one BLAS thread: the caller's SQL runs on the other core
    meanwhile (:mod:`zkr.embeddings._blas`)."""
    with one_blas_thread():
        return lane.rank(vector)


class _StartedScan:
    """A scan handed to the worker, run by whichever thread begins it first.

    When the caller asks for the result before the worker has begun (its own work was short — a
    rare word — or a loaded machine has not given the worker a time slice yet), the caller scans
    itself instead of waiting for the worker to be scheduled; the worker then finds the scan
    taken and does nothing. Either way the same :func:`_rank_on_one_thread`, once.
    """

    __slots__ = ("future", "lane", "lock", "taken", "vector")

    def __init__(self, lane: DenseLane, vector: NDArray[np.float32]) -> None:
        self.lane, self.vector = lane, vector
        self.lock = Lock()
        self.taken = False
        self.future = _scanner().submit(self._on_worker)

    def _take(self) -> bool:
        with self.lock:
            taken, self.taken = self.taken, True
        return not taken

    def _on_worker(self) -> DenseRanks | None:
        return _rank_on_one_thread(self.lane, self.vector) if self._take() else None

    def result(self) -> DenseRanks:
        """The scan's ranks (or its refusal, raised), scanned here if the worker has not begun."""
        if self._take():
            self.future.cancel()  # still queued: never run; else it returns at once
            return _rank_on_one_thread(self.lane, self.vector)
        ranks = self.future.result()
        assert ranks is not None  # the worker took it
        return ranks


def row_scores(scan: DenseScan) -> list[tuple[Target, float]]:
    """Each counting row's *own* target (the source, evidence or claim embedded) with its score,
    in no particular order: for a search ``as_of`` a past time, whose caller maps the rows to what
    was visible then instead of to the current claims the lane maps them to.

    :raises EmbeddingError: as :func:`dense_ranks`.
    :raises UnknownPluginError: as :func:`dense_ranks`.
    """
    lane, vector = _lane_and_vector(scan)
    scores = lane.scores(vector)
    return [
        (target, float(scores[slot]))
        for slot, target in enumerate(lane.slot_target[: lane.high])
        if target is not None and bool(lane.alive[slot])
    ]


_SCANNER: list[ThreadPoolExecutor] = []
#: A lane of fewer rows is scanned on the caller's thread: handing a scan of a few thousand rows
#: to the worker and back cost more than the scan (a recall hybrid search at 1,000 memories).
INLINE_SCAN_ROWS = 20_000


def _scanner() -> ThreadPoolExecutor:
    """The process's dense-scan worker (one thread, started on first use)."""
    if not _SCANNER:
        _SCANNER.append(ThreadPoolExecutor(max_workers=1, thread_name_prefix="zkr-dense-scan"))
    return _SCANNER[0]


def dense_ranking(scan: DenseScan) -> list[tuple[Target, float]]:
    """The whole dense list: ``[((kind, id), score), ...]``, best first, not truncated."""
    return dense_ranks(scan).ranked()


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
    tuning: LaneTuning | None = None,
) -> DenseLane:
    """The counting rows of (scope, model, version) with their mapping, current for *conn*'s
    snapshot: the cached lane refreshed by what was ticked since, or a fresh build (with
    *tuning*, or the defaults)."""
    lane_key = (tenant_id, person_id, model, version)
    tuning = tuning or getattr(db, "lane_tuning", None) or LaneTuning()
    if not cache:
        return _build(conn, lane_key, None, tuning)
    # No ticks to follow (no embedding_dirty table): keep a lane only until the data changes.
    if not has_table(conn, "embedding_dirty"):
        return _stamped_lane(db, conn, lane_key, tuning)
    tick: int = conn.execute("SELECT COALESCE(MAX(tick), 0) FROM embedding_dirty").fetchone()[0]
    lanes = _LANES.setdefault(db, {})
    kept = lanes.get(lane_key)
    if (
        kept is not None
        and kept.tick is not None
        and kept.tick <= tick
        and (kept.tick == tick or _refresh(conn, lane_key, kept, tick))
    ):
        return kept
    lane = _saved_lane(conn, lane_key, tick, tuning)
    if lane is None:
        lane = _build(conn, lane_key, tick, tuning)
        if tuning.file_rows and len(lane) >= tuning.file_rows and save_lane(conn, lane_key, lane):
            # The same lane read back from the file it was just saved to: a build leaves its
            # temporaries' memory scattered over the heap, and a long-lived `serve` kept it (at
            # 100k, 340 MB resident with the lane against 300 for a process that read the file;
            # issue 27.5). Dropped first, so the two never coexist.
            del lane
            lane = read_lane(conn, lane_key, tick, tuning) or _build(conn, lane_key, tick, tuning)
            return_free_memory()
    lanes[lane_key] = lane
    return lane


def _saved_lane(
    conn: sqlite3.Connection, lane_key: LaneKey, tick: int, tuning: LaneTuning
) -> DenseLane | None:
    """The lane's file brought to *tick*, ``None`` when there is none or a build is better."""
    if not tuning.file_rows:
        return None
    lane = read_lane(conn, lane_key, tick, tuning)
    if lane is None or lane.tick is None:
        return None
    return lane if lane.tick == tick or _refresh(conn, lane_key, lane, tick) else None


def _stamped_lane(
    db: Database, conn: sqlite3.Connection, lane_key: LaneKey, tuning: LaneTuning
) -> DenseLane:
    """A lane of a database without ``embedding_dirty``, kept until its data version changes."""
    stamp = _stamp(conn)
    cache_key = "dense:" + json.dumps(lane_key)  # unambiguous, unlike a joined string
    cached = db.caches.get(cache_key)
    if isinstance(cached, DenseLane) and cached.stamp == stamp:
        return cached
    lane = _build(conn, lane_key, None, tuning)
    lane.stamp = stamp
    db.caches[cache_key] = lane
    return lane


def cached_lanes(db: Database) -> dict[LaneKey, DenseLane]:
    """The lanes kept for *db* (keyed by scope, model and version); for tests and diagnostics."""
    return dict(_LANES.get(db, {}))


def _build(
    conn: sqlite3.Connection, lane_key: LaneKey, tick: int | None, tuning: LaneTuning
) -> DenseLane:
    """A lane read in full: certified rows in blocks, the others checked one by one, then the
    mapping of every row in one set-based query."""
    tenant_id, person_id, model, version = lane_key
    config = current_lane(conn, tenant_id, person_id, model, version)
    lane = DenseLane(config, tick, tuning)
    if config is None:
        return lane
    lane.reserve_for_build(lane_row_count(conn, lane_key, config))
    if spellings_on_lane(conn, lane_key, config):
        for keys, blob in certified_blocks(conn, lane_key, config, tuning.load_chunk):
            lane.append_block(keys, blob)
        unchecked = checked_rows(conn, lane_key, config, None, uncertified=True)
    else:  # stray spellings of the configuration: every row is checked on its own
        unchecked = checked_rows(conn, lane_key, config, None)
    for target, blob in unchecked:
        lane.append_block([target], blob)
    lane.map_all(mapping_blocks(conn, lane_key, config, None))
    return lane


def _refresh(conn: sqlite3.Connection, lane_key: LaneKey, lane: DenseLane, tick: int) -> bool:
    """Bring *lane* from its tick to *tick*; False when a full build is the better (or only) way."""
    assert lane.tick is not None
    dirty = conn.execute(
        "SELECT target_kind, target_id FROM embedding_dirty WHERE tick > ? AND tenant_id = ?"
        " AND person_id = ?",
        (lane.tick, lane_key[0], lane_key[1]),
    ).fetchall()
    if dirty:
        if len(dirty) > max(256, len(lane) // max(lane.tuning.rebuild_share, 1)):
            return False
        config = current_lane(conn, *lane_key)
        if config != lane.config:
            return False
        if config is not None:  # else still no lane: nothing to keep
            _replace(conn, lane_key, lane, dirty)
    lane.tick = tick
    return True


def _replace(
    conn: sqlite3.Connection, lane_key: LaneKey, lane: DenseLane, dirty: list[Target]
) -> None:
    """Re-read the *dirty* targets of *lane*: drop their rows, put back those that still count."""
    assert lane.config is not None
    only: dict[str, list[str]] = {}
    for kind, target_id in dirty:
        only.setdefault(kind, []).append(target_id)
    rows = list(checked_rows(conn, lane_key, lane.config, only))
    pair_rows, pair_mapped = mapping_pairs(conn, lane_key, lane.config, only)
    mapped: dict[Target, list[Target]] = {}
    for row, target in zip(pair_rows, pair_mapped, strict=True):
        mapped.setdefault(row, []).append(target)
    for target in dirty:
        lane.drop(target)
    for target, blob in rows:
        lane.put(LaneRow(target, blob, tuple(mapped.get(target, ()))))
