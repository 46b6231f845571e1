"""Which scopes a database's export feed holds, and how far each goes (an addition).

A consumer of the feed (``zkr-postgres sync``, a backup job) replicates scope by scope, so it
needs the list of scopes without reading zkr's tables itself. Each head names a scope and the
highest commit sequence of its feed: a consumer whose cursor is already there can skip the scope.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from zkr.store.database import Database

__all__ = ["FeedHead", "feed_heads"]


class FeedHead(NamedTuple):
    """One scope of the feed and its highest commit sequence."""

    tenant_id: str
    person_id: str
    last_commit: int


def feed_heads(db: Database) -> list[FeedHead]:
    """Every scope with at least one commit, ordered by (tenant_id, person_id)."""
    with db.atomic(write=False) as conn:
        rows = conn.execute(
            "SELECT tenant_id, person_id, max(sequence) FROM memory_commits"
            " GROUP BY tenant_id, person_id ORDER BY tenant_id, person_id"
        ).fetchall()
    return [FeedHead(str(t), str(p), int(s)) for t, p, s in rows]
