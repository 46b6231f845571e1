"""Relevance as a person reads it: words and a bar for ``relevance_basis_points``.

An item's ``relevance_basis_points`` is its score as a share of the **best item's score in the
same answer**, in basis points: the first item of a pack is 10000, and 9166 means "91.66 % of the
best item's score". It says how an item compares with the best one of this search, not how well
anything matches the query (every pack has a 10000, even when its best match is weak), and it is
not a probability. ``docs/recall.md`` ("What the relevance number means") says how each ranking
computes it.

zkr-web and ``zkr --format text`` show it through :func:`describe_relevance` and
:func:`relevance_bar`, so both surfaces use the same words.
"""

from __future__ import annotations

__all__ = ["FULL", "describe_relevance", "relevance_bar", "relevance_percent"]

#: The relevance of the best item of a pack (basis points).
FULL = 10_000

#: Lower bounds (basis points) of the words, strongest first; below the last: "far behind".
_WORDS: tuple[tuple[int, str], ...] = (
    (FULL, "best match"),
    (7_500, "close to the best match"),
    (4_000, "weaker than the best match"),
    (1, "much weaker than the best match"),
)
_FAR = "far behind the best match"


def describe_relevance(basis_points: int) -> str:
    """Words for *basis_points*: ``best match``, ``close to the best match``, ...

    >>> describe_relevance(10_000), describe_relevance(9_166), describe_relevance(0)
    ('best match', 'close to the best match', 'far behind the best match')
    """
    for bound, words in _WORDS:
        if basis_points >= bound:
            return words
    return _FAR


def relevance_percent(basis_points: int) -> str:
    """*basis_points* as a whole percentage of the best item's score: ``92 %``.

    Rounded down, so only the best item itself reads 100 %.
    """
    return f"{max(0, min(basis_points, FULL)) // 100} %"


def relevance_bar(basis_points: int, width: int = 10) -> str:
    """A bar of *width* cells, filled in proportion (rounded to the nearest cell).

    >>> relevance_bar(10_000), relevance_bar(5_400), relevance_bar(0)
    ('██████████', '█████░░░░░', '░░░░░░░░░░')
    """
    share = max(0, min(basis_points, FULL))
    filled = (share * width + FULL // 2) // FULL
    return "█" * filled + "░" * (width - filled)
