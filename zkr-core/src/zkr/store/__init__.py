"""The store: the SQLite connection and its transactions, the schema and its migrations, and the
rows' snapshots as feed records."""

from __future__ import annotations

from zkr.store.database import BUSY_TIMEOUT_SECONDS, Database

__all__ = ["BUSY_TIMEOUT_SECONDS", "Database"]
