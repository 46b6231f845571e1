"""Disposable projections kept in files beside the database (``<db>.zkr-projections/``).

A sidecar file is a cache of something SQLite can always rebuild (a dense lane's matrix, so a
new process loads 100,000 vectors in one read instead of re-checking every row). Deleting the
folder never changes an answer. Because a sidecar may hold vectors derived from a text,
:func:`discard_sidecars` runs on every erasure (``forget`` and an applied erasure record), before
the erasure commits: it overwrites each file with zeros, then removes it, as ``secure_delete``
does for the database's own pages. A process that built a lane before the erasure and saves it
afterwards saves only what its refreshed snapshot still holds.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["SIDECAR_SUFFIX", "discard_sidecars", "sidecar_dir"]

#: The folder beside the database file: ``<database file><SIDECAR_SUFFIX>``.
SIDECAR_SUFFIX = ".zkr-projections"
_ZEROS = bytes(1 << 20)


def sidecar_dir(conn: sqlite3.Connection) -> Path | None:
    """The sidecar folder of *conn*'s main database, ``None`` for an in-memory or temp one."""
    from pathlib import Path  # here: a one-shot ``forget`` need not import pathlib (issue 27.4)

    folder = _sidecar_path(conn)
    return None if folder is None else Path(folder)


def _sidecar_path(conn: sqlite3.Connection) -> str | None:
    for _seq, name, file in conn.execute("PRAGMA database_list"):
        if name == "main":
            return file + SIDECAR_SUFFIX if file else None
    return None


def discard_sidecars(conn: sqlite3.Connection) -> None:
    """Zero and remove every sidecar of *conn*'s database (best effort: a file that cannot be
    removed is left to be ignored, it is never read without checking it against the database)."""
    folder = _sidecar_path(conn)
    if folder is None or not os.path.isdir(folder):
        return
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        with contextlib.suppress(OSError):
            _zero(path)
            os.unlink(path)


def _zero(path: str) -> None:
    with open(path, "r+b") as handle:
        left = os.fstat(handle.fileno()).st_size
        while left > 0:
            left -= handle.write(_ZEROS[: min(left, len(_ZEROS))])
        handle.flush()
        os.fsync(handle.fileno())
