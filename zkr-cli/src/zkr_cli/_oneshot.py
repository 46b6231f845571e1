"""One contract operation: the database is open, the command is known; read, parse, run, print.

Contract §10.14 fixes the order: the database was opened and migrated and the command dispatched by
the caller; here come the stdin size check, the JSON parse, the operation and the output line.
"""

from __future__ import annotations

import sys

from zkr_cli._io import error_message, fail_as, read_request, render

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zkr.operations import Operation
    from zkr.store.database import Database

__all__ = ["run_fast_operation", "run_operation"]


def run_operation(db: Database, operation: Operation, output_format: str = "json") -> int:
    """Answer one request from stdin; returns the exit status."""
    from zkr.operations import parse, to_json

    try:
        raw = read_request(sys.stdin.buffer if sys.stdin is not None else None)
        request = parse(operation, raw)
        answer = to_json(operation.call(db, request))
        line = _line(operation.name, answer, output_format)
    except Exception as exc:
        return fail_as(output_format, error_message(exc), exc)
    return _write(line)


def run_fast_operation(db: Database, name: str, output_format: str = "json") -> int:
    """:func:`run_operation` for a one-shot process that has not imported pydantic.

    Same order and same answers: read, parse (the same lenient parse), then
    :func:`zkr.fastpath.run.answer`, which runs the operation's handler on light classes when the
    generated description vouches for the request; anything else goes to pydantic's validation
    and the table's handler, which give the contract's error or answer.
    """
    from zkr.fastpath.run import answer
    from zkr.jsonio import parse_request

    try:
        payload = parse_request(
            read_request(sys.stdin.buffer if sys.stdin is not None else None), lenient=True
        )
        fast = answer(db, name, payload)
        if fast is None:
            from zkr.operations import OPERATIONS, to_json, validate

            operation = OPERATIONS[name]
            result = to_json(operation.call(db, validate(operation, payload)))
        else:
            result = fast[0]
        line = _line(name, result, output_format)
    except Exception as exc:
        return fail_as(output_format, error_message(exc), exc)
    return _write(line)


def _line(name: str, answer: Any, output_format: str) -> bytes:
    if output_format == "text":
        from zkr_cli._text import render_text

        return render_text(name, answer).encode("utf-8")
    return render(answer)


def _write(line: bytes) -> int:
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
    return 0
