"""``zkr-postgres serve``: JSON lines in, one JSON line out per request, like ``zkr serve``.

Each line is ``{"command": NAME, "request": {...}}`` (optionally with ``"id"``); the answer is the
operation's result, or ``{"error": message, "code": code}``; with an ``id`` it is wrapped as
``{"id": …, "result": …}`` / ``{"id": …, "error": …, "code": …}``. Blank lines get no answer; EOF
ends the loop. One connection stays open; each request runs in its own transaction as the serving
role with its own scope (see :func:`zkr_postgres.retrieval.scoped`).
"""

from __future__ import annotations

import json
import sys
from typing import Any, BinaryIO, TextIO

import psycopg

from zkr.errors import RequestParseError, ZkrError
from zkr_postgres.api import Replica

__all__ = ["answer", "serve_forever"]

#: One request line may hold at most this many bytes (zkr's request limit plus the envelope).
LINE_LIMIT = 1_048_576 + 65_536


def _error(exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, ZkrError):
        return {"error": exc.message, "code": exc.code}
    if isinstance(exc, psycopg.Error):
        return {"error": f"database error: {type(exc).__name__}", "code": "database_error"}
    return {"error": f"internal error ({type(exc).__name__})", "code": "internal"}


def answer(replica: Replica, line: bytes | str) -> dict[str, Any] | list[Any] | None:
    """The JSON answer to one request line (never raises for a bad request)."""
    envelope: Any = None
    try:
        if len(line) > LINE_LIMIT:
            raise RequestParseError("request exceeds 1048576 bytes")
        try:
            envelope = json.loads(line)
        except (ValueError, UnicodeDecodeError) as exc:
            raise RequestParseError(f"invalid JSON: {exc}") from None
        if not isinstance(envelope, dict):
            raise RequestParseError("invalid type: expected a JSON object envelope")
        command = envelope.get("command")
        if not isinstance(command, str):
            raise RequestParseError("missing field `command`")
        request = envelope.get("request")
        if not isinstance(request, dict):
            raise RequestParseError(f"invalid type: expected a JSON object for `{command}` request")
        result = replica.run(command, request)
        data: Any = result.model_dump(mode="json", by_alias=True)
        if "id" in envelope:
            return {"id": envelope["id"], "result": data}
        return data  # type: ignore[no-any-return]
    except Exception as exc:  # one bad request never ends the loop
        failure = _error(exc)
        if isinstance(envelope, dict) and "id" in envelope:
            return {"id": envelope["id"], **failure}
        return failure


def serve_forever(replica: Replica, stdin: BinaryIO, stdout: TextIO) -> None:
    """Answer every non-blank line of *stdin* on *stdout* until EOF."""
    for line in stdin:
        if not line.strip():
            continue
        result = answer(replica, line)
        stdout.write(json.dumps(result, ensure_ascii=False, separators=(",", ":")) + "\n")
        stdout.flush()


def main_loop(dsn: str) -> None:
    with Replica(dsn) as replica:
        serve_forever(replica, sys.stdin.buffer, sys.stdout)
