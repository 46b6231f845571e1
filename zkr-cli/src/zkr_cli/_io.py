"""The CLI's envelope: bounded request reading, result and error lines, error messages.

Every command (contract, additional or plugin) answers the same way: one compact JSON line with keys
sorted at every depth on stdout and exit status 0, or ``{"error": "<message>"}`` on stderr, exit 1,
and nothing at all on stdout.
"""

from __future__ import annotations

import os
import sys

from zkr.debug_str import rust_debug_str

# Not ``typing``: its import is a fifth of ``zkr --help`` (start-up, issue 14); mypy reads any
# constant of this name as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, BinaryIO

__all__ = [
    "FORMATS",
    "MAX_REQUEST_BYTES",
    "error_message",
    "fail",
    "fail_as",
    "read_request",
    "render",
    "rust_debug_str",
    "write_line",
]

#: Contract §2.2 (same value as ``zkr.operations.MAX_REQUEST_BYTES``; kept here so that reading
#: stdin needs no import of the operation table).
MAX_REQUEST_BYTES = 1_048_576


def render(value: Any) -> bytes:
    """One output line: compact, keys sorted at every depth, raw UTF-8, newline-terminated.

    Rendered completely before anything is written, so a value that cannot be encoded fails as an
    error instead of leaving half a line on stdout.
    """
    from zkr.jsonio import canonical_dumps

    return canonical_dumps(value).encode("utf-8") + b"\n"


def write_line(stream: BinaryIO, value: Any) -> None:
    """Write one rendered line and flush it (hosts read line by line)."""
    stream.write(render(value))
    stream.flush()


#: What ``--format`` accepts: JSON (the default, the contract's output) or text for a person.
FORMATS = ("json", "text")


def fail_as(output_format: str, message: str, exc: BaseException | None = None) -> int:
    """:func:`fail` in the command's output format: text is one ``zkr: error: ...`` line."""
    if output_format != "text":
        return fail(message, exc)
    if exc is not None and debug_enabled():
        import traceback

        traceback.print_exception(exc, file=sys.stderr)
    sys.stderr.write(f"zkr: error: {message}\n")
    sys.stderr.flush()
    return 1


def error_message(exc: BaseException) -> str:
    """What the user sees for *exc* (:func:`zkr.envelope.error_message`, loaded when needed)."""
    from zkr.envelope import error_message as message

    return message(exc)


def debug_enabled() -> bool:
    return os.environ.get("ZKR_DEBUG") == "1"


def fail(message: str, exc: BaseException | None = None) -> int:
    """Report an error the contract's way and return the exit status (1)."""
    if exc is not None and debug_enabled():
        import traceback

        traceback.print_exception(exc, file=sys.stderr)
    write_line(sys.stderr.buffer, {"error": message})
    return 1


def read_request(stream: BinaryIO | None) -> bytes:
    """Read stdin up to one byte past the limit, so an oversized request is known without parsing.

    :raises zkr.errors.LimitExceeded: more than ``MAX_REQUEST_BYTES`` bytes are waiting.
    """
    if stream is None:
        return b""
    chunks: list[bytes] = []
    remaining = MAX_REQUEST_BYTES + 1
    while remaining > 0:
        chunk = stream.read(remaining)
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    data = b"".join(chunks)
    if len(data) > MAX_REQUEST_BYTES:
        from zkr.errors import LimitExceeded

        raise LimitExceeded(f"request exceeds {MAX_REQUEST_BYTES} bytes")
    return data
