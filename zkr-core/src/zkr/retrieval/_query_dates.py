"""Calendar dates named in a recall query, as spans of capture time.

"What did Alice paint on October 13, 2023?" names the day the memory was captured on far more
often than a word of it: the recall ranking's hybrid fusion (:mod:`zkr.retrieval.fusion`)
lifts the candidates captured within a named date. Only absolute English dates are read — a day
(``October 13, 2023``, ``13 October 2023``), a month (``October 2023``) or a year (``2023``, from
1900 to 2099); a month or day without its year, and relative dates ("last week"), are left alone:
zkr does not know when the asker stands. A span is the named day, month or year in UTC widened
by :data:`SLACK_SECONDS` on each side, since a capture's time zone is not stored.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from functools import cache

__all__ = ["SLACK_SECONDS", "query_date_spans"]

#: Each span is widened by a day on both sides (time zones, a late-night capture).
SLACK_SECONDS = 86_400

_MONTHS = (
    *("january", "february", "march", "april", "may", "june"),
    *("july", "august", "september", "october", "november", "december"),
)
_MONTH = "|".join(_MONTHS)


# Compiled on first use: a query without a year (most) never needs it (start-up, issue 27.4).
@cache
def _date_pattern() -> re.Pattern[str]:
    return re.compile(
        rf"\b(?:(?P<day_first>\d{{1,2}})(?:st|nd|rd|th)?\s+)?(?P<month>{_MONTH})\b"
        rf"(?:\s+(?P<day_after>\d{{1,2}})(?:st|nd|rd|th)?\b)?,?\s+(?P<year>(?:19|20)\d\d)\b"
        rf"|\b(?P<year_only>(?:19|20)\d\d)\b",
        re.IGNORECASE,
    )


def _seconds(year: int, month: int, day: int) -> int:
    return int(datetime(year, month, day, tzinfo=UTC).timestamp())


def query_date_spans(query: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` capture-time spans (Unix seconds, end excluded) of the absolute
    dates *query* names, slack included; an impossible day (``February 30, 2023``) names nothing.
    """
    spans: list[tuple[int, int]] = []
    if "19" not in query and "20" not in query:  # every date it reads names a year 19xx/20xx
        return spans
    for found in _date_pattern().finditer(query):
        if found["year_only"] is not None:
            year = int(found["year_only"])
            start, end = _seconds(year, 1, 1), _seconds(year + 1, 1, 1)
        else:
            year = int(found["year"])
            month = _MONTHS.index(found["month"].lower()) + 1
            day = found["day_first"] or found["day_after"]
            if day is not None:
                try:
                    start = _seconds(year, month, int(day))
                except ValueError:
                    continue
                end = start + 86_400
            else:
                start = _seconds(year, month, 1)
                end = _seconds(year + month // 12, month % 12 + 1, 1)
        spans.append((start - SLACK_SECONDS, end + SLACK_SECONDS))
    return spans
