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

from zkr_postgres.serve import _render, answer

SEARCH = b'"command":"search","request":{"tenant_id":"acme","person_id":"sam","query":"x"}'


def _line(line: bytes) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"non-JSON constant {name}")

    # No replica: every line here is refused before one is needed.
    return json.loads(_render(answer(None, line)), parse_constant=refuse)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("ident", "error"),
    [
        (b"1e999", "invalid envelope id: it holds a number out of range"),
        (b"-1e999", "invalid envelope id: it holds a number out of range"),
        (b'"\\ud800"', "lone leading surrogate in hex escape"),
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
