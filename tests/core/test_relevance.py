"""Relevance as a person reads it (issue 24): words and a bar for ``relevance_basis_points``."""

from __future__ import annotations

import pytest

from zkr.relevance import FULL, describe_relevance, relevance_bar, relevance_percent


@pytest.mark.parametrize(
    ("basis_points", "words"),
    [
        (FULL, "best match"),
        (9_999, "close to the best match"),
        (9_166, "close to the best match"),
        (7_500, "close to the best match"),
        (7_499, "weaker than the best match"),
        (4_000, "weaker than the best match"),
        (3_999, "much weaker than the best match"),
        (1, "much weaker than the best match"),
        (0, "far behind the best match"),
    ],
)
def test_words_name_the_comparison_with_the_best_item(basis_points: int, words: str) -> None:
    assert describe_relevance(basis_points) == words


def test_the_bar_fills_in_proportion_and_stays_in_bounds() -> None:
    assert relevance_bar(FULL) == "█" * 10
    assert relevance_bar(9_166) == "█" * 9 + "░"
    assert relevance_bar(499) == "░" * 10
    assert relevance_bar(500) == "█" + "░" * 9
    assert relevance_bar(0) == "░" * 10
    assert relevance_bar(-5) == relevance_bar(0) and relevance_bar(12_000) == relevance_bar(FULL)
    assert relevance_bar(5_000, width=4) == "██░░"


def test_the_percentage_rounds_down_so_only_the_best_reads_100() -> None:
    assert [relevance_percent(bp) for bp in (FULL, 9_999, 9_166, 0)] == [
        "100 %",
        "99 %",
        "91 %",
        "0 %",
    ]
