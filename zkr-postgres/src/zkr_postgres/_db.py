"""Connections: one alias for the connection type, and how a connection is opened."""

from __future__ import annotations

from typing import Any

import psycopg

__all__ = ["Conn", "connect"]

Conn = psycopg.Connection[Any]


def connect(dsn: str) -> Conn:
    """An autocommit connection: every write runs in an explicit ``conn.transaction()``."""
    return psycopg.connect(dsn, autocommit=True)
