"""zkr's timestamps (integer seconds since the epoch) shown to a person and read back from forms.

Times are shown and read in UTC, written ``YYYY-MM-DD HH:MM:SS UTC``; a form may give seconds
since the epoch or an ISO date/time (what an ``<input type=datetime-local>`` sends), read as UTC.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

__all__ = ["MomentError", "format_moment", "input_value", "parse_moment"]

_INTEGER = re.compile(r"-?[0-9]{1,19}")


class MomentError(ValueError):
    """A form's time could not be read."""


def format_moment(seconds: int | None, *, open_end: str = "open") -> str:
    """A timestamp for a person; ``None`` (an interval still open) reads *open_end*."""
    if seconds is None:
        return open_end
    try:
        return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return f"{seconds} s"  # outside what a calendar date can show: the raw number


def input_value(seconds: int | None) -> str:
    """The value of a ``datetime-local`` input holding *seconds* (empty when unknown)."""
    if seconds is None:
        return ""
    try:
        return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    except (OverflowError, OSError, ValueError):
        return ""


def parse_moment(text: str | None) -> int | None:
    """Seconds since the epoch from a form value; blank means "not given" (``None``).

    :raises MomentError: neither an integer nor an ISO date/time.
    """
    if text is None or not text.strip():
        return None
    text = text.strip()
    if _INTEGER.fullmatch(text):
        return int(text)
    try:
        moment = datetime.fromisoformat(text.replace(" UTC", "").replace("Z", "+00:00"))
    except ValueError:
        raise MomentError(f"not a time: {text!r} (give YYYY-MM-DDTHH:MM or seconds)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp())
