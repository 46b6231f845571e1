"""Host kit: what a caller is told when a request fails, the same on every surface.

Every error answer is ``{"error": <message>, "code": <code>}``: the message is the contract's
exact string for a refusal (``zkr/errors.py``), or a line that names no stored data for anything
else; the code is the error class's stable ``code`` (``busy``, ``database_error`` and ``internal``
for what is not a refusal). ``zkr serve``, ``zkr-postgres serve`` and the hosts' tool calls all
answer from here, so a host can branch on the code without parsing the message.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from zkr.errors import ZkrError
from zkr.store.opening import is_busy

__all__ = ["INTERNAL", "error_code", "error_envelope", "error_message"]

#: The code of a failure that is a bug, not the caller's input.
INTERNAL = "internal"


def error_message(exc: BaseException) -> str:
    """What the caller sees for *exc*: the contract's message, or a line without internals."""
    if isinstance(exc, ZkrError):
        return exc.message
    if isinstance(exc, sqlite3.Error):
        # SQLite's own messages ("database is locked", "file is not a database") name no user data.
        return f"database error: {exc}"
    if isinstance(exc, RecursionError):
        return "recursion limit exceeded"
    return f"internal error ({type(exc).__name__}); set ZKR_DEBUG=1 for details"


def error_code(exc: BaseException) -> str:
    """The stable code of *exc*: its class's for a zkr error, else what kind of failure it was."""
    if isinstance(exc, ZkrError):
        return exc.code
    if isinstance(exc, sqlite3.Error):
        return "busy" if is_busy(exc) else "database_error"
    return INTERNAL


def error_envelope(exc: BaseException) -> dict[str, Any]:
    """``{"error": message, "code": code}`` for *exc*."""
    return {"error": error_message(exc), "code": error_code(exc)}
