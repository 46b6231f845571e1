"""``zkr-postgres serve``'s envelope, line by line, without a server (issue 26).

Before: an id of ``1e999`` (which parses, as infinity) was echoed into an answer that could not be
written, which then said ``internal error (ValueError)``; a request holding ``NaN`` or invalid
UTF-8 lost its id. Now an id that cannot be written back is refused with the same message as
``zkr serve``, and a usable id is echoed whatever is wrong elsewhere in the line.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from zkr_postgres.serve import answer

SEARCH = b'"command":"search","request":{"tenant_id":"acme","person_id":"sam","query":"x"}'


def _line(line: bytes) -> Any:
    # No replica: every line here is refused before one is needed.
    return answer(None, line)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("ident", "error"),
    [
        (b"1e999", "invalid envelope id: it holds a number out of range"),
        (b"-1e999", "invalid envelope id: it holds a number out of range"),
        (b'"\\ud800"', "invalid envelope id: it holds a lone surrogate"),
    ],
)
def test_an_id_that_cannot_be_written_back_is_refused_clearly(ident: bytes, error: str) -> None:
    answered = _line(b'{"id":' + ident + b"," + SEARCH + b"}")
    assert answered == {"error": error, "code": "parse_error"}


@pytest.mark.parametrize(
    "request_text",
    [b'{"query":NaN}', b'{"query":"\xff"}', b'{"limit":-Infinity}', b'{"query":"\xc3("}'],
)
def test_a_usable_id_is_echoed_when_the_request_is_not_json(request_text: bytes) -> None:
    answered = _line(b'{"id":"c-1","command":"search","request":' + request_text + b"}")
    assert answered["id"] == "c-1" and answered["code"] == "parse_error"


@pytest.mark.parametrize(
    "line",
    [
        b"{not json\n",
        b'{"command":"teleport","request":{}}\n',
        b'{"id":7,"request":{}}\n',
        b'{"id":1e999,' + SEARCH + b"}\n",
        b'{"id":"x","command":"search","request":{"query":NaN}}\n',
    ],
)
def test_zkr_serve_and_the_replica_answer_a_bad_line_alike(line: bytes, tmp_path: Any) -> None:
    """One loop, one envelope (issue 31): the same refusal, message and code, from both."""
    serve = pytest.importorskip("zkr_cli.serve")
    from zkr import MemoryDb

    with MemoryDb(tmp_path / "m.db") as db:
        from_sqlite = json.loads(serve.handle_line(db, line) or b"null")
    assert _line(line) == from_sqlite
    assert set(from_sqlite) - {"id"} == {"error", "code"}
