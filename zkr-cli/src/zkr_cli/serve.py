"""``zkr --db PATH serve``: one long-lived process answering JSON lines, for hosts and benchmarks.

Each input line is ``{"command": NAME, "request": {...}}`` (optionally with an ``"id"``); each
answer is exactly one line on stdout, flushed at once: what ``zkr --db PATH NAME`` would print for
that request, or ``{"error": "..."}`` with the same message. A failing request never ends the loop;
EOF ends it cleanly. One ``MemoryDb`` stays open, so caches (dense lane matrices) stay warm between
requests.

Additions for pipelining hosts: when the envelope carries ``"id"``, the answer is
``{"id": <id>, "result": <output>}`` or ``{"id": <id>, "error": "..."}`` (``result`` is needed
because some outputs are arrays or ``null``). Lines holding only whitespace get no answer.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, BinaryIO

from zkr_cli._io import MAX_REQUEST_BYTES, debug_enabled, error_message, render, rust_debug_str

if TYPE_CHECKING:
    from zkr.db import MemoryDb

__all__ = ["LINE_LIMIT", "handle_line", "serve_forever"]

#: Room for the envelope around a request of up to MAX_REQUEST_BYTES. A longer line is refused
#: without being parsed (and without being held in memory); the request inside a line that fits is
#: then measured in its compact form against MAX_REQUEST_BYTES.
LINE_LIMIT = MAX_REQUEST_BYTES + 65_536

#: Commands a plugin serves besides the contract's: name -> ``fn(db, request) -> JSON data``.
#: Passed by a plugin's own serve command (for instance ``zkr openclaw-serve``); plain ``serve``
#: has none, so it never loads plugins.
ExtraCommands = Mapping[str, "Callable[[MemoryDb, Any], Any]"]

_DISCARD_CHUNK = 65_536
_TOO_LONG = object()


def _lines(stream: BinaryIO) -> Iterator[bytes | object]:
    """Input lines, each at most LINE_LIMIT bytes; a longer one yields ``_TOO_LONG``."""
    while True:
        line = stream.readline(LINE_LIMIT + 1)
        if not line:
            return
        if len(line) > LINE_LIMIT and not line.endswith(b"\n"):
            while True:  # drop the rest of the oversized line
                rest = stream.readline(_DISCARD_CHUNK)
                if not rest or rest.endswith(b"\n"):
                    break
            yield _TOO_LONG
        else:
            yield line


def _too_large() -> Exception:
    from zkr.errors import LimitExceeded

    return LimitExceeded(f"request exceeds {MAX_REQUEST_BYTES} bytes")


def _answer(db: MemoryDb, envelope: dict[str, Any], extra: ExtraCommands | None = None) -> Any:
    """Run the envelope's request; returns plain JSON data or raises a ZkrError."""
    from zkr.errors import RequestParseError
    from zkr.jsonio import compact_len
    from zkr.operations import OPERATIONS, to_json, validate

    if "command" not in envelope:
        raise RequestParseError("missing field `command`")
    name = envelope["command"]
    if not isinstance(name, str):
        raise RequestParseError("invalid type: expected a string for `command`")
    operation = OPERATIONS.get(name)
    plugin_command = extra.get(name) if operation is None and extra is not None else None
    if operation is None and plugin_command is None:
        from zkr.errors import InvalidRequest

        raise InvalidRequest(f"unknown command {rust_debug_str(name)}")
    if "request" not in envelope:
        raise RequestParseError("missing field `request`")
    request = envelope["request"]
    if compact_len(request) > MAX_REQUEST_BYTES:
        raise _too_large()
    if plugin_command is not None:
        return plugin_command(db, request)
    assert operation is not None
    return to_json(operation.call(db, validate(operation, request)))


def handle_line(db: MemoryDb, line: bytes, extra: ExtraCommands | None = None) -> bytes | None:
    """The answer line (newline-terminated) for one input line; ``None`` for a blank line."""
    from zkr.errors import RequestParseError
    from zkr.jsonio import parse_request

    if not line.strip():
        return None
    envelope: Any = None
    answer: dict[str, Any] | None = None
    try:
        envelope = parse_request(line)
        if not isinstance(envelope, dict):
            raise RequestParseError(
                'invalid type: expected a JSON object {"command": ..., "request": ...}'
            )
        output: Any = _answer(db, envelope, extra)
        if "id" not in envelope:
            return render(output)
        answer = {"id": envelope["id"], "result": output}
    except Exception as exc:
        if debug_enabled():
            traceback.print_exception(exc, file=sys.stderr)
        answer = {"error": error_message(exc)}
        if isinstance(envelope, dict) and "id" in envelope:
            answer["id"] = envelope["id"]
    try:
        return render(answer)
    except Exception as exc:  # an id that cannot be encoded
        return render({"error": error_message(exc)})


def serve_forever(
    db: MemoryDb, stdin: BinaryIO, stdout: BinaryIO, extra: ExtraCommands | None = None
) -> None:
    """Answer every line of *stdin* on *stdout* until EOF (*extra*: a plugin's own commands)."""
    for line in _lines(stdin):
        if line is _TOO_LONG:
            answer: bytes | None = render({"error": error_message(_too_large())})
        else:
            assert isinstance(line, bytes)
            answer = handle_line(db, line, extra)
        if answer is not None:
            stdout.write(answer)
            stdout.flush()
