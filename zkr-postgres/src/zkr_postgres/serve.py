"""``zkr-postgres serve``: JSON lines in, one JSON line out per request, like ``zkr serve``.

The loop and its envelope are zkr-core's (:mod:`zkr.serve_lines`, the same as ``zkr serve``'s):
each line is ``{"command": NAME, "request": {...}}`` (optionally with ``"id"``); the answer is the
operation's result, or ``{"error": message, "code": code}``; with an ``id`` it is wrapped as
``{"id": …, "result": …}`` / ``{"id": …, "error": …, "code": …}``. This module only says what
answers a command: the replica's reads. One connection stays open; each request runs in its own
transaction as the serving role with its own scope (see :func:`zkr_postgres.retrieval.scoped`).
"""

from __future__ import annotations

import json
import sys
from typing import Any, BinaryIO

import psycopg

from zkr.errors import StorageError
from zkr.serve_lines import Runner, answer_line, serve_lines
from zkr_postgres.api import READ_OPERATIONS, Replica

__all__ = ["answer", "serve_forever"]


def _runner(replica: Replica) -> Runner:
    def run(command: str, request: Any) -> Any:
        try:
            result = replica.run(command, request)
        except psycopg.Error as exc:  # the server's message may quote stored rows: its kind only
            raise StorageError(f"database error: {type(exc).__name__}") from exc
        return result.model_dump(mode="json", by_alias=True)

    return run


def _knows(command: str) -> bool:
    return command in READ_OPERATIONS


def answer(replica: Replica, line: bytes | str) -> Any:
    """The decoded answer to one request line (``None`` for a blank line); never raises for a
    bad request."""
    raw = line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
    answered = answer_line(_runner(replica), _knows, raw)
    return None if answered is None else json.loads(answered)


def serve_forever(replica: Replica, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Answer every non-blank line of *stdin* on *stdout* until EOF."""
    serve_lines(_runner(replica), _knows, stdin, stdout)


def main_loop(dsn: str) -> None:
    with Replica(dsn) as replica:
        serve_forever(replica, sys.stdin.buffer, sys.stdout.buffer)
