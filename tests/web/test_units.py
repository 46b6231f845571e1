"""The small pure pieces: reading and showing times, deriving and comparing tokens."""

from __future__ import annotations

import pytest

from zkr_web.moments import MomentError, format_moment, input_value, parse_moment
from zkr_web.security import csrf_token, new_token, session_path, tokens_match


def test_times_read_from_forms() -> None:
    assert parse_moment("") is None and parse_moment("  ") is None and parse_moment(None) is None
    assert parse_moment("1780272000") == 1_780_272_000
    assert parse_moment("-5") == -5
    assert parse_moment("2026-06-01T00:00") == 1_780_272_000
    assert parse_moment("2026-06-01T02:00:00+02:00") == 1_780_272_000
    assert parse_moment("2026-06-01 00:00:00 UTC") == 1_780_272_000
    for bad in ("yesterday", "2026-13-01", "1e9", "<script>"):
        with pytest.raises(MomentError, match="not a time"):
            parse_moment(bad)


def test_times_shown_to_a_person_round_trip() -> None:
    assert format_moment(1_780_272_000) == "2026-06-01 00:00:00 UTC"
    assert format_moment(None) == "open" and format_moment(None, open_end="now") == "now"
    assert format_moment(2**62) == f"{2**62} s"  # beyond the calendar: the number itself
    assert parse_moment(input_value(1_780_272_123)) == 1_780_272_123
    assert input_value(None) == "" and input_value(2**62) == ""


def test_tokens() -> None:
    token = new_token()
    assert len(token) >= 40 and token != new_token()
    assert tokens_match(token, token)
    assert not tokens_match(token[:-1], token) and not tokens_match(None, token)
    assert not tokens_match("", token)
    # The CSRF token is random per server process: the access token does not yield it.
    assert csrf_token() != csrf_token() and len(csrf_token()) >= 40
    # The session path is derived from the token and reveals none of it.
    assert session_path(token) == session_path(token) != session_path(new_token())
    assert token not in session_path(token) and len(session_path(token)) == len("/z/") + 32
