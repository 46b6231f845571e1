"""``sync``: every scope of zkr databases, read through the export feed, applied to PostgreSQL.

Per (upstream, scope) the loop is zkr's own (``zkr.feed.export.export_pages``): read the durable
position, export pages from it with the first page's ``high_water_mark`` frozen, apply each page in
one transaction (:func:`zkr_postgres.apply.apply_page`), stop at the mark. A scope whose cursor is
already at the feed's head is skipped without an export. Killing the process at any point loses
nothing: the next run resumes from the position PostgreSQL holds.

Only zkr's public API reads the SQLite side (``MemoryDb.export``, ``zkr.feed_scopes.feed_heads``).
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from pathlib import Path

from zkr.db import MemoryDb
from zkr.feed.export import export_pages
from zkr.feed.scopes import feed_heads
from zkr_postgres._db import Conn
from zkr_postgres.analyze import analyze_changed
from zkr_postgres.apply import apply_page_counted, position
from zkr_postgres.nul import has_nul
from zkr_postgres.schema import lane_tables

__all__ = ["SyncStats", "Upstream", "follow", "sync_database", "sync_scope", "upstream_of"]

#: Events per exported page (the feed's maximum).
PAGE_LIMIT = 100


@dataclass(frozen=True)
class Upstream:
    """One source database and the name its cursors are kept under in PostgreSQL."""

    name: str
    path: Path


def upstream_of(argument: str) -> Upstream:
    """``NAME=PATH`` or ``PATH``; a bare path is named ``host:/absolute/path`` so that the same
    path on two machines is two upstreams."""
    name, sep, path = argument.partition("=")
    if sep and name and "/" not in name:
        return Upstream(name, Path(path))
    resolved = Path(argument).expanduser().resolve()
    return Upstream(f"{socket.gethostname()}:{resolved}", resolved)


# slots: the counters are bumped by name all over this module; a misspelt one raises instead of
# quietly becoming a new attribute that the printed answer leaves out.
@dataclass(slots=True)
class SyncStats:
    """What one run did (``zkr-postgres sync`` prints it)."""

    scopes: int = 0
    pages: int = 0
    commits: int = 0
    events: int = 0
    erasures: int = 0
    #: Events that copied content an erasure held in PostgreSQL names (an older backup, the same
    #: feed under another name): their text was dropped, not stored.
    dropped_events: int = 0
    #: Scopes not replicated: their tenant or person id holds NUL (see :mod:`zkr_postgres.nul`).
    refused_scopes: int = 0

    def add(self, other: SyncStats) -> None:
        """Count *other*'s run into this one (every field is a count, none can be left out)."""
        for counter in fields(self):
            setattr(self, counter.name, getattr(self, counter.name) + getattr(other, counter.name))


def sync_scope(
    conn: Conn,
    db: MemoryDb,
    upstream: str,
    tenant_id: str,
    person_id: str,
    *,
    limit: int = PAGE_LIMIT,
) -> SyncStats:
    """Replicate one scope of *db* up to its current head, page by page."""
    scope = (tenant_id, person_id, upstream)
    stats = SyncStats(scopes=1)
    start = position(conn, scope).cursor()
    for after, page in export_pages(db.export, tenant_id, person_id, start, limit=limit):
        done = apply_page_counted(conn, scope, after, page)
        stats.pages += 1
        stats.commits += done.commits
        stats.dropped_events += done.dropped_events
        stats.events += sum(len(c.records) for c in page.commits)
        stats.erasures += sum(
            1 for c in page.commits for r in c.records if r.get("kind") == "erasure"
        )
    return stats


def _applied(conn: Conn, upstream: str) -> dict[tuple[str, str], int]:
    rows = conn.execute(
        "SELECT tenant_id, person_id, applied_commit FROM zkr.cursors WHERE upstream = %s",
        (upstream,),
    ).fetchall()
    return {(str(t), str(p)): int(a) for t, p, a in rows}


def sync_database(conn: Conn, db: MemoryDb, upstream: str, *, limit: int = PAGE_LIMIT) -> SyncStats:
    """Every scope of *db* whose feed goes beyond what PostgreSQL holds."""
    stats = SyncStats()
    applied = _applied(conn, upstream)
    for head in feed_heads(db):
        if has_nul(head.tenant_id, head.person_id):
            stats.refused_scopes += 1  # PostgreSQL cannot key it; every other scope goes on
            continue
        if applied.get((head.tenant_id, head.person_id), 0) >= head.last_commit:
            continue
        stats.add(sync_scope(conn, db, upstream, head.tenant_id, head.person_id, limit=limit))
    if stats.erasures:
        vacuum_erased(conn)
    if stats.pages:
        # Serve's plans need statistics of what this run wrote (zkr_postgres.analyze says why).
        analyze_changed(conn)
    return stats


def vacuum_erased(conn: Conn) -> None:
    """VACUUM the tables an erasure rewrites, so that no dead row version (what an UPDATE leaves
    behind until vacuumed) keeps erased text."""
    tables = [*_ERASED_TABLES, *(f"zkr.{t}" for t in lane_tables(conn))]
    for table in tables:
        conn.execute(f"VACUUM {table}")


_ERASED_TABLES = (
    "zkr.sources",
    "zkr.evidence",
    "zkr.claims",
    "zkr.profile_entries",
    "zkr.daily_reviews",
    "zkr.staging",
)


def follow(
    conn: Conn,
    databases: Iterable[tuple[Upstream, MemoryDb]],
    *,
    interval: float = 1.0,
    keep_going: Callable[[], bool] = lambda: True,
    report: Callable[[SyncStats], None] | None = None,
) -> SyncStats:
    """Sync every database again and again (sleeping *interval* seconds after a pass that found
    nothing new) while *keep_going* says so."""
    total = SyncStats()
    pairs = list(databases)
    while keep_going():
        found = SyncStats()
        for upstream, db in pairs:
            found.add(sync_database(conn, db, upstream.name))
        total.add(found)
        if report is not None and found.pages:
            report(found)
        if not found.pages:
            time.sleep(interval)
    return total
