"""The ``serve`` envelope and the contract's parsing edges (issue 18, defects 8, 10, 11; issue 14).

Through the real ``zkr`` process: every answer is one JSON line; an id that cannot be written back
is refused without it; a valid id is echoed whatever is wrong with the request; the request's raw
text is what the 1 MiB limit measures; ``-0`` is a float where an integer is required; what a
request model does not know is never validated.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import MAX_REQUEST_BYTES, Outcome, db_snapshot

SCOPE = '"tenant_id":"a","person_id":"sam"'


def answers_of(outcome: Outcome) -> list[Any]:
    assert outcome.returncode == 0, outcome.stderr
    assert b"Traceback" not in outcome.stderr
    lines = outcome.stdout.splitlines()
    assert all(b"Infinity" not in line and b"NaN" not in line for line in lines), lines
    return [json.loads(line) for line in lines]


def test_an_id_that_cannot_be_echoed_never_makes_a_non_json_line(
    run: Callable[..., Outcome], db_path: Path
) -> None:
    stdin = b"".join(
        [
            b'{"id":1e999,"command":"search","request":{' + SCOPE.encode() + b',"query":"x"}}\n',
            b'{"id":-1e999,"command":"profiles","request":{}}\n',
            b'{"id":"\\ud800","command":"profiles","request":{}}\n',
        ]
    )
    answers = answers_of(run("--db", str(db_path), "serve", stdin=stdin))
    assert answers == [
        {"error": "invalid envelope id: it holds a number out of range", "code": "parse_error"},
        {"error": "invalid envelope id: it holds a number out of range", "code": "parse_error"},
        {"error": "invalid envelope id: it holds a lone surrogate", "code": "parse_error"},
    ]


@pytest.mark.parametrize(
    ("request_text", "error"),
    [
        ('{"tenant_id":"a","tenant_id":"b"}', "duplicate field `tenant_id`"),
        ('{"tenant_id":"\\ud800","person_id":"p","query":"x"}', "lone leading surrogate"),
        ('{"tenant_id":"a","person_id":"p","query":"x","limit":1.0}', "floating point `1.0`"),
    ],
)
def test_a_valid_id_is_echoed_when_the_request_fails_strict_parsing(
    run: Callable[..., Outcome], db_path: Path, request_text: str, error: str
) -> None:
    line = '{"id":"call-7","command":"search","request":' + request_text + "}\n"
    [answer] = answers_of(run("--db", str(db_path), "serve", stdin=line.encode()))
    assert answer["id"] == "call-7" and error in answer["error"]


def test_whitespace_padding_counts_as_in_the_one_shot_command(
    run: Callable[..., Outcome], zkr: Callable[..., Outcome], db_path: Path
) -> None:
    padded = "{" + SCOPE + "," + " " * MAX_REQUEST_BYTES + '"query":"x"}'
    assert zkr("search", padded.encode()).error == "request exceeds 1048576 bytes"
    line = '{"id":1,"command":"search","request":' + padded + "}\n"
    [answer] = answers_of(run("--db", str(db_path), "serve", stdin=line.encode()))
    assert answer == {"id": 1, "error": "request exceeds 1048576 bytes", "code": "limit_exceeded"}


def test_minus_zero_is_a_float_where_an_integer_is_required(
    zkr: Callable[..., Outcome],
) -> None:
    request = "{" + SCOPE + ',"query":"x","limit":-0}'
    assert zkr("search", request.encode()).error == (
        "invalid type: floating point `-0.0`, expected an integer (field `limit`)"
    )
    # A vector element is a float anyway: -0 is accepted there.
    embed = "{" + SCOPE + ',"target":{"kind":"source","id":"nope"},"embedding":{"vector":[-0],'
    embed += '"model":"m","version":"1","input_hash":"h","normalization":"none","distance":"dot"}}'
    assert zkr("embed", embed.encode()).error == "record not found"


IGNORED_VALUES = [
    "[" * 5000 + "]" * 5000,
    '{"k":1,"k":2}',
    '"\\ud800"',
    '{"\\udc00":"\\ud800"}',
    "1e999",
    "-" + "9" * 5000,
]


@pytest.mark.parametrize("value", IGNORED_VALUES, ids=range(len(IGNORED_VALUES)))
def test_values_of_ignored_fields_are_never_validated(
    run: Callable[..., Outcome], zkr: Callable[..., Outcome], db_path: Path, value: str
) -> None:
    # At the top level and inside a nested object that ignores unknown keys (as_of).
    request = (
        "{" + SCOPE + ',"query":"x","extra":' + value
        + ',"as_of":{"valid_at":1,"recorded_at":1,"extra":' + value + "}}"
    )  # fmt: skip
    assert zkr("search", request.encode()).json["gaps"] == ["no cited memory matched"]
    line = '{"id":2,"command":"search","request":' + request + "}\n"
    [answer] = answers_of(run("--db", str(db_path), "serve", stdin=line.encode()))
    assert answer["id"] == 2 and answer["result"]["gaps"] == ["no cited memory matched"]


def test_a_tilde_in_db_is_expanded_for_the_folder_and_the_file(
    run: Callable[..., Outcome], home: Path
) -> None:
    remember = "{" + SCOPE + ',"kind":"conversation","text":"t","captured_at":1,"recorded_at":1}'
    (home / "memories").mkdir()  # an explicit --db needs its folder (issue 14)
    run("--db", "~/memories/zkr.db", "remember", stdin=remember.encode()).ok()
    assert not Path("~").exists()  # never the literal path, relative to the working directory
    assert (home / "memories" / "zkr.db").is_file()
    assert db_snapshot(home / "memories" / "zkr.db")["sources"]


def _strict_answers(outcome: Outcome) -> list[Any]:
    """Each answer line as strict JSON (the messages themselves may name NaN)."""
    assert outcome.returncode == 0 and b"Traceback" not in outcome.stderr, outcome.stderr

    def refuse(name: str) -> Any:
        raise AssertionError(f"non-JSON constant {name} in an answer")

    return [json.loads(line, parse_constant=refuse) for line in outcome.stdout.splitlines()]


@pytest.mark.parametrize(
    "line",
    [
        b'{"id":"call-9","command":"search","request":{' + SCOPE.encode() + b',"query":NaN}}\n',
        b'{"id":"call-9","command":"search","request":{'
        + SCOPE.encode()
        + b',"limit":Infinity}}\n',
        b'{"id":"call-9","command":"search","request":{' + SCOPE.encode() + b',"query":"\xff"}}\n',
        b'{"command":"search","id":"call-9","request":{"query":"\xc3("}}\n',
    ],
)
def test_the_id_is_echoed_when_the_request_holds_nan_or_invalid_utf8(
    run: Callable[..., Outcome], db_path: Path, line: bytes
) -> None:
    # Issue 26 (D11): such a line is not JSON, but its id is; a pipelining host matches answers
    # by id, so the refusal carries it.
    [answer] = _strict_answers(run("--db", str(db_path), "serve", stdin=line))
    assert answer["id"] == "call-9"
    assert "NaN" in answer["error"] or "Infinity" in answer["error"] or "UTF-8" in answer["error"]


@pytest.mark.parametrize(
    "line",
    [
        b'{"id":NaN,"command":"profiles","request":{}}\n',
        b'{"id":"\xff","command":"profiles","request":{"q":NaN}}\n',
        b'{"id":1,"id":2,"command":"profiles","request":{"q":NaN}}\n',
        b'{"id":1e999,"command":"profiles","request":{"q":NaN}}\n',
    ],
)
def test_an_id_that_is_not_usable_itself_is_never_echoed(
    run: Callable[..., Outcome], db_path: Path, line: bytes
) -> None:
    [answer] = _strict_answers(run("--db", str(db_path), "serve", stdin=line))
    assert "id" not in answer and answer["error"]
