"""Host kit: one JSON-lines loop, one envelope, for ``zkr serve`` and ``zkr-postgres serve``.

Each input line is ``{"command": NAME, "request": {...}}`` (optionally with an ``"id"``); each
answer is exactly one line, flushed at once: the command's output, or ``{"error": message,
"code": code}`` (:mod:`zkr.envelope`). With an ``"id"`` the answer is ``{"id": <id>, "result":
<output>}`` or ``{"id": <id>, "error": ..., "code": ...}`` (``result`` is needed because some
outputs are arrays or ``null``). A failing request never ends the loop; lines holding only
whitespace get no answer; EOF ends it cleanly. A surface supplies only what answers a command
(:data:`Runner`): the SQLite file's operations, or the PostgreSQL replica's reads.

The envelope is read leniently and the request strictly, field by field (as the one-shot command
reads stdin): a line whose id is valid is answered with that id whatever is wrong with its request,
even when the line is not JSON elsewhere (``NaN``, invalid UTF-8 in the request). An id that cannot
be written back as JSON (``1e999`` reads as infinity, a lone surrogate) is an error of its own,
answered without an id: no answer line is ever anything but JSON. A line longer than
:data:`LINE_LIMIT` is refused unread; the request's size is that of its raw text in the line
(whitespace included), as the one-shot command measures stdin.
"""

from __future__ import annotations

import json
import os
import re
import sys
import traceback
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from zkr.debug_str import rust_debug_str
from zkr.envelope import error_envelope
from zkr.errors import InvalidRequest, LimitExceeded, RequestParseError
from zkr.jsonio import (
    JsonObject,
    canonical_dumps,
    check_envelope_id,
    parse_request,
    salvage_envelope_id,
)
from zkr.operations import MAX_REQUEST_BYTES

__all__ = ["LINE_LIMIT", "MAX_REQUEST_BYTES", "Runner", "answer_line", "serve_lines"]

#: Room for the envelope around a request of up to MAX_REQUEST_BYTES. A longer line is refused
#: without being parsed (and without being held in memory).
LINE_LIMIT = MAX_REQUEST_BYTES + 65_536

#: What answers one command: ``run(command, request)`` -> plain JSON data, or raises. It is
#: given only names *knows* accepted and a request within the size limit.
Runner = Callable[[str, Any], Any]

_ENVELOPE_FIELDS = frozenset({"command", "request", "id"})
_DISCARD_CHUNK = 65_536
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_STRUCTURE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_SCALAR = re.compile(r"[^\s,\]}]+")
_TOO_LONG = object()


def render(value: Any) -> bytes:
    """One answer line: compact, keys sorted at every depth, raw UTF-8, newline-terminated."""
    return canonical_dumps(value).encode("utf-8") + b"\n"


def _lines(stream: BinaryIO) -> Iterator[bytes | object]:
    """Input lines, each at most LINE_LIMIT bytes; a longer one yields ``_TOO_LONG``."""
    while line := stream.readline(LINE_LIMIT + 1):
        if len(line) > LINE_LIMIT and not line.endswith(b"\n"):
            while (rest := stream.readline(_DISCARD_CHUNK)) and not rest.endswith(b"\n"):
                pass  # drop the rest of the oversized line
            yield _TOO_LONG
        else:
            yield line


def _too_large() -> LimitExceeded:
    return LimitExceeded(f"request exceeds {MAX_REQUEST_BYTES} bytes")


def _answer(run: Runner, knows: Callable[[str], bool], envelope: dict[str, Any], size: int) -> Any:
    """Run the envelope's request; returns plain JSON data or raises."""
    if "command" not in envelope:
        raise RequestParseError("missing field `command`")
    name = envelope["command"]
    if not isinstance(name, str):
        raise RequestParseError("invalid type: expected a string for `command`")
    if not knows(name):
        raise InvalidRequest(f"unknown command {rust_debug_str(name)}")
    if "request" not in envelope:
        raise RequestParseError("missing field `request`")
    if size > MAX_REQUEST_BYTES:
        raise _too_large()
    return run(name, envelope["request"])


def _envelope(line: bytes) -> dict[str, Any]:
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
    return envelope


def answer_line(run: Runner, knows: Callable[[str], bool], line: bytes) -> bytes | None:
    """The answer line (newline-terminated) for one input line; ``None`` for a blank line."""
    if not line.strip():
        return None
    answer: dict[str, Any]
    try:
        envelope = _envelope(line)
    except Exception as exc:  # the envelope itself (or its id) is not acceptable
        _debug(exc)
        answer = error_envelope(exc)
        # A line that is not JSON somewhere (NaN, invalid UTF-8) may still name a usable id.
        found, ident = salvage_envelope_id(line)
        if found:
            answer["id"] = ident
        return render(answer)
    try:
        output = _answer(run, knows, envelope, _request_size(line))
    except Exception as exc:
        _debug(exc)
        answer = error_envelope(exc)
    else:
        if "id" not in envelope:
            return _rendered(output)
        answer = {"result": output}
    if "id" in envelope:
        answer["id"] = envelope["id"]
    return _rendered(answer)


def _rendered(value: Any) -> bytes:
    try:
        return render(value)
    except Exception as exc:  # an output that cannot be encoded (never expected)
        return render(error_envelope(exc))


def _debug(exc: BaseException) -> None:
    if os.environ.get("ZKR_DEBUG") == "1":
        traceback.print_exception(exc, file=sys.stderr)


def _request_size(line: bytes) -> int:
    """UTF-8 size of the raw text of the line's ``request`` value (an upper bound when the line
    itself is within the limit: then nothing more is needed).

    Only called on a line that parsed as a JSON object, so the scan needs no error handling.
    """
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


def serve_lines(
    run: Runner, knows: Callable[[str], bool], stdin: BinaryIO, stdout: BinaryIO
) -> None:
    """Answer every line of *stdin* on *stdout* until EOF."""
    for line in _lines(stdin):
        if line is _TOO_LONG:
            answer: bytes | None = render(error_envelope(_too_large()))
        else:
            assert isinstance(line, bytes)
            answer = answer_line(run, knows, line)
        if answer is not None:
            stdout.write(answer)
            stdout.flush()
