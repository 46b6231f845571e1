"""A built lane saved beside the database, so the next process loads it in one read.

Building a lane from SQLite checks every row (liveness, certificate, mapping): about 3 CPU-seconds
at 100,000 vectors, paid by the first hybrid search of every new process. A lane file is that
build at one ``embedding_dirty`` tick: a JSON header (lane key, configuration, tick, the slots'
targets and mapping) and the float32 matrix, read with one ``readinto`` into the lane's
preallocated matrix. The loader then refreshes it to the current tick like any cached lane (only
the targets ticked since are re-read), so the file never has to be current, only honest:

* it names its lane, and it is used only when the database's tick is at least the file's and the
  ``embedding_dirty`` row holding the file's tick is still the one it recorded (a file of another
  database, or of this one before a restore, does not match and is ignored);
* it lives in the database's sidecar folder (:mod:`zkr.store.sidecars`), which every erasure
  zeroes and removes, so no vector of an erased text outlives ``forget`` on disk.

Any unreadable, truncated or foreign file is ignored (and replaced by the next full build).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import struct
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from zkr.embeddings._lane import DenseLane, LaneTuning
from zkr.embeddings._lane_rows import LaneKey
from zkr.embeddings.projections import Target
from zkr.embeddings.vectors import F32
from zkr.store.sidecars import sidecar_dir

__all__ = ["read_lane", "save_lane"]

_MAGIC = b"ZKRLANE1"
_HEAD = struct.Struct("<8sQ")
_ALIGN = 64


def _path(conn: sqlite3.Connection, lane_key: LaneKey) -> Path | None:
    folder = sidecar_dir(conn)
    if folder is None:
        return None
    name = hashlib.sha256(json.dumps(lane_key).encode()).hexdigest()[:32]
    return folder / f"lane-{name}.f32"


def _mark(conn: sqlite3.Connection, tick: int) -> list[str] | None:
    """The ``embedding_dirty`` row holding *tick*: what ties a file to this database's history."""
    row = conn.execute(
        "SELECT tenant_id, person_id, target_kind, target_id FROM embedding_dirty WHERE tick = ?",
        (tick,),
    ).fetchone()
    return None if row is None else list(row)


def save_lane(conn: sqlite3.Connection, lane_key: LaneKey, lane: DenseLane) -> bool:
    """Write *lane* (built at ``lane.tick``) to its file; best effort: whether it was written."""
    path = _path(conn, lane_key)
    if path is None or lane.tick is None or lane.config is None:
        return False
    mark = _mark(conn, lane.tick)
    if mark is None:
        return False
    header, slots = _header(lane_key, lane, mark)
    with contextlib.suppress(OSError):
        path.parent.mkdir(exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".lane-")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(_HEAD.pack(_MAGIC, len(header)))
                out.write(header)
                out.write(bytes(-out.tell() % _ALIGN))
                out.write(_rows_of(lane, slots).data)
            os.replace(temporary, path)
        except OSError:
            os.unlink(temporary)
            raise
        return True
    return False


def _rows_of(lane: DenseLane, slots: Any) -> Any:
    """The matrix rows of *slots*: a view when they are ``[0, n)`` (a fresh build), no copy."""
    if len(slots) == lane.high:
        return np.ascontiguousarray(lane.matrix[: lane.high], dtype=F32)
    return np.ascontiguousarray(lane.matrix[slots], dtype=F32)


def _header(lane_key: LaneKey, lane: DenseLane, mark: list[str]) -> tuple[bytes, Any]:
    """The JSON header of *lane* and the slots it saves (the live ones, in slot order).

    A mapped target that is also a row is written as that row's index, so a reader shares one
    tuple between the two.
    """
    alive = lane.alive[: lane.high]
    slots = np.flatnonzero(alive)
    rows = [lane.slot_target[int(slot)] for slot in slots]
    position = (np.cumsum(alive) - 1).tolist()  # a live slot's index in ``rows``
    slot_of = lane.slot_of  # a row's slot: live, since dropping a row removes it here
    # Tuples are encoded as JSON arrays: no list is built per row or target (issue 27.5's
    # memory: this header is built while the whole lane is held).
    targets = [
        target if slot is None else position[slot]
        for target, slot in zip(lane.target_keys, map(slot_of.get, lane.target_keys), strict=True)
    ]
    extra = [[rows_slot, list(lane.extra[int(slot)])] for rows_slot, slot in enumerate(slots)
             if int(slot) in lane.extra]  # fmt: skip
    header = {
        "lane": list(lane_key),
        "config": list(lane.config or ()),
        "tick": lane.tick,
        "mark": mark,
        "rows": [row for row in rows if row is not None],
        "targets": targets,
        "first": lane.first[slots].tolist(),
        "extra": extra,
    }
    return json.dumps(header, ensure_ascii=False).encode(), slots


def read_lane(
    conn: sqlite3.Connection, lane_key: LaneKey, tick: int, tuning: LaneTuning
) -> DenseLane | None:
    """The lane saved for *lane_key* when its file fits this database at *tick*, else ``None``.

    The lane is at the file's tick: the caller refreshes it to *tick*.
    """
    path = _path(conn, lane_key)
    if path is None:
        return None
    try:
        with open(path, "rb") as handle:
            magic, size = _HEAD.unpack(handle.read(_HEAD.size))
            if magic != _MAGIC:
                return None
            header = json.loads(handle.read(size))
            if not _fits(conn, lane_key, header, tick):
                return None
            handle.seek(-handle.tell() % _ALIGN, os.SEEK_CUR)
            return _lane_from(header, handle, tuning)
    except (OSError, ValueError, KeyError, TypeError, struct.error):
        return None


def _fits(conn: sqlite3.Connection, lane_key: LaneKey, header: dict[str, Any], tick: int) -> bool:
    return (
        header["lane"] == list(lane_key)
        and isinstance(header["tick"], int)
        and header["tick"] <= tick
        and header["mark"] == _mark(conn, header["tick"])
    )


def _lane_from(header: dict[str, Any], handle: Any, tuning: LaneTuning) -> DenseLane | None:
    dimension, normalization, distance = header["config"]
    lane = DenseLane((int(dimension), str(normalization), str(distance)), header["tick"], tuning)
    rows: list[Target] = [(kind, target_id) for kind, target_id in header["rows"]]
    count = len(rows)
    lane.reserve_for_build(count)
    target = lane.matrix[:count].reshape(-1).view(np.uint8)  # the matrix's own bytes
    if handle.readinto(target.data) != target.nbytes:
        return None  # truncated
    block = lane.matrix[:count]
    lane.norms[:count] = np.sqrt(np.einsum("ij,ij->i", block, block))
    lane.alive[:count] = True
    lane.slot_target[:count] = rows
    lane.slot_of = dict(zip(rows, range(count), strict=True))
    lane.high = count
    lane.target_keys = [
        rows[entry] if isinstance(entry, int) else (entry[0], entry[1])
        for entry in header["targets"]
    ]
    lane.target_index = dict(zip(lane.target_keys, range(len(lane.target_keys)), strict=True))
    lane.first[:count] = np.asarray(header["first"], np.intp)
    lane.extra = {int(slot): tuple(more) for slot, more in header["extra"]}
    return lane
