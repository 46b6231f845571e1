"""The search page shows relevance as a meter and words, not as basis points (issue 24)."""

from __future__ import annotations

import html
import re

from tests.web.conftest import WebServer


def _relevance(body: str) -> list[tuple[str, str, str]]:
    """(meter value, meter text, words) of each result, in page order."""
    return re.findall(
        r'<meter min="0" max="10000"[^>]* value="(\d+)">([^<]*)</meter>\s*'
        r'<span class="relevance-words">([^<]*)</span>',
        body,
    )


def _visible(body: str) -> str:
    """The page's text as a reader sees it (tags and attributes dropped)."""
    return html.unescape(re.sub(r"<[^>]+>", " ", body))


def test_relevance_reads_as_words_and_a_meter(web: WebServer) -> None:
    for index, text in enumerate(
        [
            "The tide table for Cascais says low tide at noon.",
            "Low tide at Cascais again: the tide table was right, tide pools everywhere.",
            "Tide pools are fun.",
        ]
    ):
        web.remember(text, at=100 + index)
    web.login()
    body = web.request("/search?q=tide+table+Cascais").body
    shown = _relevance(body)
    assert len(shown) == 3
    assert shown[0] == ("10000", "100 %", "best match")
    for value, text, words in shown[1:]:
        assert int(value) < 10_000
        assert text == f"{int(value) // 100} %"
        assert words.endswith("the best match") and words != "best match"
    assert "rated against the best match of this search" in body
    # No bare basis points anywhere a person reads.
    visible = _visible(body)
    for value, _, _ in shown:
        assert not re.search(rf"\b{value}\b", visible), value
