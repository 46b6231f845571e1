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
