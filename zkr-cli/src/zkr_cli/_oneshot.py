"""One contract operation: the database is open, the command is known; read, parse, run, print.

Contract §10.14 fixes the order: the database was opened and migrated and the command dispatched by
the caller; here come the stdin size check, the JSON parse, the operation and the output line.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from zkr_cli._io import error_message, fail_as, read_request, render

if TYPE_CHECKING:
    from zkr.db import MemoryDb
    from zkr.operations import Operation

__all__ = ["run_operation"]


def run_operation(db: MemoryDb, operation: Operation, output_format: str = "json") -> int:
    """Answer one request from stdin; returns the exit status."""
    from zkr.operations import parse, to_json

    try:
        raw = read_request(sys.stdin.buffer if sys.stdin is not None else None)
        request = parse(operation, raw)
        answer = to_json(operation.call(db, request))
        if output_format == "text":
            from zkr_cli._text import render_text

            line = render_text(operation.name, answer).encode("utf-8")
        else:
            line = render(answer)
    except Exception as exc:
        return fail_as(output_format, error_message(exc), exc)
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
    return 0
