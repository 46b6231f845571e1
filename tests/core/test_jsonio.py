"""Strict request parsing: lone surrogates are refused however they arrive, pairs are kept."""

from __future__ import annotations

import pytest

from zkr.errors import RequestParseError
from zkr.jsonio import parse_request

LONE = "lone leading surrogate in hex escape"


@pytest.mark.parametrize(
    "raw",
    [
        b'{"query": "a\\ud800b"}',
        b'{"nested": [{"k\\udc00": 1}]}',
        '{"query": "a\\ud800b"}',
        '{"query": "a\ud800b"}',  # a str may carry a surrogate code point without any escape
    ],
    ids=["bytes escape", "escaped key", "str escape", "str code point"],
)
def test_lone_surrogates_are_refused(raw: bytes | str) -> None:
    with pytest.raises(RequestParseError) as caught:
        parse_request(raw)
    assert caught.value.message == LONE


def test_surrogate_pairs_and_raw_utf8_parse() -> None:
    assert parse_request(b'{"q": "\\ud83d\\ude00"}') == {"q": "\U0001f600"}
    assert parse_request('{"q": "café 😀"}'.encode()) == {"q": "café 😀"}
    assert parse_request('{"q": "café"}') == {"q": "café"}


@pytest.mark.parametrize("lenient", [False, True])
def test_nesting_too_deep_for_the_parser_is_a_parse_error(lenient: bool) -> None:
    # A RecursionError escaped the strict parse (zkr-postgres serve answered "internal error").
    deep = "[" * 200_000 + "]" * 200_000
    if lenient:  # flattened below the depth of any field: an ignored value, parsed
        value = parse_request(deep, lenient=True)
        while value != [None]:
            assert isinstance(value, list) and len(value) == 1
            value = value[0]
        return
    with pytest.raises(RequestParseError) as caught:
        parse_request(deep)
    assert caught.value.message == "recursion limit exceeded"
