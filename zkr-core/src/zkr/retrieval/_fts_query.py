"""The two FTS5 match expressions a search runs (contract §5.2).

* The **phrase query** is the whole user text as one FTS5 string: FTS5 tokenizes it with unicode61,
  so punctuation is ignored and the tokens must appear in order. A text without word characters
  gives a phrase that matches nothing (never a syntax error).
* The **token query** recalls natural-language questions: the text split on every character that
  is not alphanumeric *in Rust's sense*, de-duplicated case-insensitively (first spelling wins), at
  most :data:`MAX_TOKEN_TERMS` terms, each quoted, joined with ``OR``. It exists only for two or
  more terms (one term is the phrase query again).

Every term is quoted, so FTS5 operators (``AND``, ``NEAR``, ``*``, ``^``, ``:``) in user text are
plain words.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator

from zkr.retrieval._alphabetic_marks import OTHER_ALPHABETIC_RANGES
from zkr.retrieval._distinct import extend_distinct

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from zkr._named_tuple import NamedTuple

__all__ = [
    "MAX_TOKEN_TERMS",
    "LexicalQueries",
    "build_queries",
    "is_alphanumeric",
    "phrase_query",
    "quote",
    "token_query",
    "token_terms",
]

#: The token query keeps at most this many unique terms, which bounds the FTS5 expression.
MAX_TOKEN_TERMS = 32

#: Byte translation table: ASCII letters and digits stay, every other byte becomes a space.
_ASCII_SEPARATORS = bytes(byte if chr(byte).isascii() and chr(byte).isalnum() else 0x20
                          for byte in range(256))  # fmt: skip
_RANGE_STARTS = tuple(first for first, _ in OTHER_ALPHABETIC_RANGES)


def is_alphanumeric(char: str) -> bool:
    """Rust's ``char::is_alphanumeric``: Unicode ``Alphabetic`` or a numeric category (Nd/Nl/No).

    ``str.isalnum`` covers letters and numbers but not ``Other_Alphabetic`` combining marks such as
    U+0345, so those come from a range table (see :mod:`zkr.retrieval._alphabetic_marks`).
    """
    if char.isalnum():
        return True
    code = ord(char)
    index = bisect_right(_RANGE_STARTS, code) - 1
    return index >= 0 and code <= OTHER_ALPHABETIC_RANGES[index][1]


def quote(text: str) -> str:
    """An FTS5 string literal: double quotes around, inner double quotes doubled."""
    return '"' + text.replace('"', '""') + '"'


def phrase_query(query: str) -> str:
    """The whole query as one FTS5 phrase.

    A NUL character would end the FTS5 expression early (``unterminated string``); it is a
    separator for unicode61 anyway, so it becomes a space. (The contract does not cover NUL in
    queries; zkr answers instead of failing.)
    """
    return quote(query.replace("\x00", " "))


def token_terms(query: str) -> list[str]:
    """The unique alphanumeric runs of *query*, first spelling kept, at most 32 of them.

    Uniqueness is case-insensitive by Unicode lowercase (``Alice`` and ``ALICE`` are one term).
    """
    if query.isascii():
        # Rust's alphanumeric is [0-9A-Za-z] on ASCII: every other byte becomes a space and the
        # runs are what split() leaves (bytes at C speed: a 1 MiB query of repeated words cost
        # 0.5 s in a loop per character, 0.15 s with a regex, well under 0.1 s so). dict.fromkeys
        # drops repeated spellings keeping first occurrences in order; only the first unique
        # spellings are decoded.
        runs = dict.fromkeys(query.encode("ascii").translate(_ASCII_SEPARATORS).split())
        return _unique_terms(run.decode("ascii") for run in runs)
    return _unique_terms(_alphanumeric_runs(query))


def _alphanumeric_runs(query: str) -> Iterator[str]:
    """The runs of alphanumeric characters of *query*, in order, lazily (one pass)."""
    start: int | None = None
    # A trailing separator closes the last run.
    for index, char in enumerate(query + " "):
        if is_alphanumeric(char):
            if start is None:
                start = index
        elif start is not None:
            yield query[start:index]
            start = None


def _unique_terms(runs: Iterator[str]) -> list[str]:
    terms: list[str] = []
    extend_distinct(terms, runs, set(), MAX_TOKEN_TERMS, key=str.lower)
    return terms


def token_query(query: str) -> str | None:
    """``"t1" OR "t2" OR ...`` for two or more unique terms, else ``None``."""
    terms = token_terms(query)
    if len(terms) < 2:
        return None
    return " OR ".join(quote(term) for term in terms)


# A NamedTuple, not a dataclass: importing dataclasses (with inspect) is a few ms of every
# one-shot search (start-up, issue 14).
class LexicalQueries(NamedTuple):
    """The match expressions of one search: the phrase always, the token query when useful."""

    phrase: str
    tokens: str | None


def build_queries(query: str) -> LexicalQueries:
    """Both match expressions for a user query (contract §5.2)."""
    return LexicalQueries(phrase=phrase_query(query), tokens=token_query(query))
