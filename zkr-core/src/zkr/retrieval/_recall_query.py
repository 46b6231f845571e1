"""The recall ranking's query: the question's words without stop words, as FTS5 expressions
(whole, and one per word for the coverage factor)."""

from __future__ import annotations

from zkr.retrieval._claim_words import statement_words
from zkr.retrieval._fts_query import quote, token_terms
from zkr.store.analysis import query_terms
from zkr.store.languages import ENGLISH, stop_words

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from zkr._named_tuple import NamedTuple

__all__ = [
    "PREFIX_FROM",
    "STOP_WORDS",
    "RecallWord",
    "recall_concepts",
    "recall_match",
    "recall_words",
]

#: English function and question words, dropped from a recall query (the list is the language
#: table's, :mod:`zkr.store.languages`). A query made only of them is searched as it is.
STOP_WORDS = stop_words(ENGLISH)

#: Alphabetic query words this long also match as prefixes (0: never).
PREFIX_FROM = 4


def _kept_terms(query: str) -> list[str]:
    """The query's words without stop words (all of them when only stop words remain)."""
    terms = token_terms(query)
    # Other languages' words as the index stores them (zkr.store.analysis); English as it was.
    return query_terms(query, [term for term in terms if term.lower() not in STOP_WORDS] or terms)


def _word_match(term: str, prefix_from: int) -> str:
    """One query word as FTS5: quoted, and as a prefix when alphabetic and long enough."""
    prefix = prefix_from and len(term) >= prefix_from and term.isalpha()
    return quote(term) + ("*" if prefix else "")


def recall_match(query: str, prefix_from: int = PREFIX_FROM) -> str | None:
    """The FTS5 expression of a recall query: its non-stop words, quoted, OR-ed; alphabetic words
    of at least *prefix_from* letters also match as prefixes (0: never); and the everyday words
    of the claim predicates they name, in the statement column only
    (:mod:`zkr.retrieval._claim_words`: "work" also finds ``me employer Globex``).

    ``None`` when the query has no word at all (nothing can match).
    """
    kept = _kept_terms(query)
    if not kept:
        return None
    words = [_word_match(term, prefix_from) for term in kept]
    words.extend(f"statement : {quote(word)}" for word in statement_words(kept))
    return " OR ".join(words)


def recall_concepts(query: str, prefix_from: int = PREFIX_FROM) -> list[str]:
    """One FTS5 expression per word of :func:`recall_match`: the word (in any column: a turn's
    neighbours' words count, as they do for its bm25), or the everyday predicate words it names
    in a statement."""
    concepts = []
    for term in _kept_terms(query):
        either = [
            _word_match(term, prefix_from),
            *(f"statement : {quote(word)}" for word in statement_words([term])),
        ]
        concepts.append(" OR ".join(either))
    return concepts


class RecallWord(NamedTuple):
    """One word of a recall query, as :func:`recall_match` searches it: the term (before the
    index's tokenizer), whether it also matches as a prefix, and the everyday predicate words it
    names, searched in claim statements only."""

    term: str
    prefix: bool
    statement_words: tuple[str, ...]


def recall_words(query: str, prefix_from: int = PREFIX_FROM) -> list[RecallWord]:
    """The words of :func:`recall_match` (one per :func:`recall_concepts` expression), for a
    store that matches them itself (the PostgreSQL replica)."""
    return [
        RecallWord(
            term,
            bool(prefix_from and len(term) >= prefix_from and term.isalpha()),
            tuple(statement_words([term])),
        )
        for term in _kept_terms(query)
    ]
