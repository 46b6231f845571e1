"""``zkr --db PATH serve``: one long-lived process answering JSON lines, for hosts and benchmarks.

Each input line is ``{"command": NAME, "request": {...}}`` (optionally with an ``"id"``); each
answer is exactly one line on stdout, flushed at once: what ``zkr --db PATH NAME`` would print for
that request, or ``{"error": "..."}`` with the same message. A failing request never ends the loop;
EOF ends it cleanly. One ``MemoryDb`` stays open, so caches (dense lane matrices) stay warm between
requests.

Additions for pipelining hosts: when the envelope carries ``"id"``, the answer is
``{"id": <id>, "result": <output>}`` or ``{"id": <id>, "error": "..."}`` (``result`` is needed
because some outputs are arrays or ``null``). Lines holding only whitespace get no answer.

The envelope is read leniently and the request strictly, field by field (as the one-shot command
reads stdin): a line whose id is valid is answered with that id whatever is wrong with its request,
even when the line is not JSON elsewhere (``NaN``, invalid UTF-8 in the request).
An id that cannot be written back as JSON (``1e999`` reads as infinity, a lone surrogate) is an
error of its own, answered without an id: no answer line is ever anything but JSON. The request's
size is that of its raw text in the line (whitespace included), as the one-shot command measures
stdin - not of a re-encoded compact form.
"""

from __future__ import annotations

import re
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
#: then measured - its raw text, whitespace included - against MAX_REQUEST_BYTES.
LINE_LIMIT = MAX_REQUEST_BYTES + 65_536

#: Commands a plugin serves besides the contract's: name -> ``fn(db, request) -> JSON data``.
#: Passed by a plugin's own serve command (for instance ``zkr openclaw-serve``); plain ``serve``
#: has none, so it never loads plugins.
ExtraCommands = Mapping[str, "Callable[[MemoryDb, Any], Any]"]

_DISCARD_CHUNK = 65_536
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_STRUCTURE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_SCALAR = re.compile(r"[^\s,\]}]+")
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


def _answer(
    db: MemoryDb, envelope: dict[str, Any], raw_size: int, extra: ExtraCommands | None = None
) -> Any:
    """Run the envelope's request; returns plain JSON data or raises a ZkrError.

    *raw_size* is the UTF-8 size of the request's text as it stood in the line.
    """
    from zkr.errors import RequestParseError
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
    if raw_size > MAX_REQUEST_BYTES:
        raise _too_large()
    if plugin_command is not None:
        return plugin_command(db, request)
    assert operation is not None
    return to_json(operation.call(db, validate(operation, request)))


def handle_line(db: MemoryDb, line: bytes, extra: ExtraCommands | None = None) -> bytes | None:
    """The answer line (newline-terminated) for one input line; ``None`` for a blank line."""
    from zkr.errors import RequestParseError
    from zkr.jsonio import JsonObject, check_envelope_id, parse_request, salvage_envelope_id

    if not line.strip():
        return None
    answer: dict[str, Any]
    has_id = False
    try:
        envelope = parse_request(line, lenient=True)
        if not isinstance(envelope, dict):
            raise RequestParseError(
                'invalid type: expected a JSON object {"command": ..., "request": ...}'
            )
        if isinstance(envelope, JsonObject):
            for key in envelope.duplicates:
                if key in _ENVELOPE_FIELDS:
                    raise RequestParseError(f"duplicate field `{key}`")
        if "id" in envelope:
            check_envelope_id(envelope["id"])
            has_id = True
        try:
            output: Any = _answer(db, envelope, _request_size(line), extra)
        except Exception as exc:
            _debug(exc)
            answer = {"error": error_message(exc)}
        else:
            if not has_id:
                return render(output)
            answer = {"result": output}
        if has_id:
            answer["id"] = envelope["id"]
    except Exception as exc:  # the envelope itself (or its id) is not acceptable
        _debug(exc)
        answer = {"error": error_message(exc)}
        # A line that is not JSON somewhere (NaN, invalid UTF-8) may still name a usable id.
        found, ident = salvage_envelope_id(line)
        if found:
            answer["id"] = ident
    try:
        return render(answer)
    except Exception as exc:  # an output that cannot be encoded (never expected)
        return render({"error": error_message(exc)})


_ENVELOPE_FIELDS = frozenset({"command", "request", "id"})


def _debug(exc: BaseException) -> None:
    if debug_enabled():
        traceback.print_exception(exc, file=sys.stderr)


def _request_size(line: bytes) -> int:
    """UTF-8 size of the raw text of the line's ``request`` value (an upper bound when the line
    itself is within the limit: then nothing more is needed).

    Only called on a line that parsed as a JSON object, so the scan needs no error handling.
    """
    import json

    if len(line) <= MAX_REQUEST_BYTES:  # the request is part of the line: it fits as well
        return len(line)
    text = line.decode("utf-8")
    end = len(text)
    size = 0
    index = _skip_space(text, 0) + 1  # past "{"
    while index < end:
        index = _skip_space(text, index)
        if text[index] == "}":
            break
        quoted = _STRING.match(text, index)
        assert quoted is not None
        key, index = json.loads(quoted.group()), quoted.end()
        index = _skip_space(text, index) + 1  # past ":"
        start = _skip_space(text, index)
        index = _value_end(text, start)
        if key == "request":
            size = len(text[start:index].encode("utf-8"))
        index = _skip_space(text, index)
        if text[index] == ",":
            index += 1
    return size


def _skip_space(text: str, index: int) -> int:
    while index < len(text) and text[index] in " \t\n\r":
        index += 1
    return index


def _value_end(text: str, start: int) -> int:
    """Index just past the JSON value starting at *start* (iterative: any nesting depth)."""
    if text[start] not in "[{":
        if text[start] == '"':
            return _STRING.match(text, start).end()  # type: ignore[union-attr]
        return _SCALAR.match(text, start).end()  # type: ignore[union-attr]
    depth = 0
    for token in _STRUCTURE.finditer(text, start):
        char = token.group()[0]
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return token.end()
    return len(text)


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
