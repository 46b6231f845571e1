"""``zkr-postgres serve``: JSON lines in, one JSON line out per request, like ``zkr serve``.

Each line is ``{"command": NAME, "request": {...}}`` (optionally with ``"id"``); the answer is the
operation's result, or ``{"error": message, "code": code}``; with an ``id`` it is wrapped as
``{"id": …, "result": …}`` / ``{"id": …, "error": …, "code": …}``. Blank lines get no answer; EOF
ends the loop. One connection stays open; each request runs in its own transaction as the serving
role with its own scope (see :func:`zkr_postgres.retrieval.scoped`).

Lines are read as ``zkr serve`` reads them (issue 18): at most 1 MiB + 64 KiB each (a longer one is
refused unread), parsed with zkr's strictness (no NaN/Infinity, duplicate keys, lone surrogates,
invalid UTF-8), the request at most 1 MiB in compact form; an id is echoed only when it can be
written back as strict JSON, and every answer line is strict JSON in UTF-8.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any, BinaryIO

import psycopg

from zkr.errors import LimitExceeded, RequestParseError, ZkrError
from zkr.jsonio import check_envelope_id, compact_len, parse_request, salvage_envelope_id
from zkr.operations import MAX_REQUEST_BYTES
from zkr_postgres.api import Replica

__all__ = ["answer", "serve_forever"]

#: One request line may hold at most this many bytes (zkr's request limit plus the envelope). A
#: longer line is refused without being held in memory.
LINE_LIMIT = MAX_REQUEST_BYTES + 65_536
_DISCARD_CHUNK = 65_536
_TOO_LONG = b""  # what _lines yields for an over-long line (a real line is never empty)


def _error(exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, ZkrError):
        return {"error": exc.message, "code": exc.code}
    if isinstance(exc, psycopg.Error):
        return {"error": f"database error: {type(exc).__name__}", "code": "database_error"}
    return {"error": f"internal error ({type(exc).__name__})", "code": "internal"}


def _too_large() -> LimitExceeded:
    return LimitExceeded(f"request exceeds {MAX_REQUEST_BYTES} bytes")


def _usable_id(envelope: Any) -> bool:
    """Whether *envelope* has an id that can be written back as strict JSON (finite numbers,
    no lone surrogate): only such an id is echoed; any other is answered without one."""
    if not isinstance(envelope, dict) or "id" not in envelope:
        return False
    try:
        check_envelope_id(envelope["id"])
    except RequestParseError:
        return False
    return True


def _envelope(line: bytes | str) -> dict[str, Any]:
    """The envelope, parsed with zkr's strictness (no NaN/Infinity, duplicate keys, lone
    surrogates or invalid UTF-8 anywhere in it; any nesting depth is a parse error).

    :raises RequestParseError: with ``envelope_id`` set when the line has a usable id.
    """
    try:
        envelope = parse_request(line)
    except RequestParseError as exc:
        # A line whose id is fine is answered with it, whatever is wrong elsewhere (NaN or
        # invalid UTF-8 in the request included).
        found, ident = salvage_envelope_id(line)
        if found:
            exc.envelope_id = ident  # type: ignore[attr-defined]
        raise exc from None
    if not isinstance(envelope, dict):
        raise RequestParseError("invalid type: expected a JSON object envelope")
    if "id" in envelope:
        check_envelope_id(envelope["id"])  # 1e999 parses, as infinity: refused, not echoed
    return envelope


def answer(replica: Replica, line: bytes | str) -> dict[str, Any] | list[Any] | None:
    """The JSON answer to one request line (never raises for a bad request)."""
    envelope: Any = None
    try:
        if len(line) > LINE_LIMIT:
            raise _too_large()
        envelope = _envelope(line)
        command = envelope.get("command")
        if not isinstance(command, str):
            raise RequestParseError("missing field `command`")
        request = envelope.get("request")
        if not isinstance(request, dict):
            raise RequestParseError(f"invalid type: expected a JSON object for `{command}` request")
        if compact_len(request) > MAX_REQUEST_BYTES:
            raise _too_large()
        result = replica.run(command, request)
        data: Any = result.model_dump(mode="json", by_alias=True)
        if _usable_id(envelope):
            return {"id": envelope["id"], "result": data}
        return data  # type: ignore[no-any-return]
    except Exception as exc:  # one bad request never ends the loop
        failure = _error(exc)
        if hasattr(exc, "envelope_id"):
            return {"id": exc.envelope_id, **failure}
        if _usable_id(envelope):
            return {"id": envelope["id"], **failure}
        return failure


def _render(result: Any) -> bytes:
    """One answer line: strict JSON (never NaN/Infinity), valid UTF-8."""
    try:
        text = json.dumps(result, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return text.encode("utf-8") + b"\n"
    except (ValueError, UnicodeError) as exc:  # not expected: the input was checked
        return json.dumps(_error(exc)).encode("utf-8") + b"\n"


def _lines(stream: BinaryIO) -> Iterator[bytes]:
    """Input lines, each at most LINE_LIMIT bytes; a longer one is skipped unread and yields
    :data:`_TOO_LONG`."""
    while line := stream.readline(LINE_LIMIT + 1):
        if len(line) > LINE_LIMIT and not line.endswith(b"\n"):
            while (rest := stream.readline(_DISCARD_CHUNK)) and not rest.endswith(b"\n"):
                pass
            yield _TOO_LONG
        else:
            yield line


def serve_forever(replica: Replica, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Answer every non-blank line of *stdin* on *stdout* until EOF."""
    for line in _lines(stdin):
        if line is _TOO_LONG:
            result: Any = _error(_too_large())
        elif not line.strip():
            continue
        else:
            result = answer(replica, line)
        stdout.write(_render(result))
        stdout.flush()


def main_loop(dsn: str) -> None:
    with Replica(dsn) as replica:
        serve_forever(replica, sys.stdin.buffer, sys.stdout.buffer)
