"""The retrieval parts that another store of the same records reuses (public).

The PostgreSQL replica ranks "recall" with zkr's own terms, parameters and fusion, and cuts and
cites items as zkr does, so that both stores answer alike; it reads these from here, never from
this package's private modules. The definitions stay where zkr's own retrieval uses them; this
module only names what is promised:

* the index's terms (:func:`recall_terms` for a stored text, :func:`fts_tokens` for a query's
  already analysed words) and the query's words (:func:`recall_words`);
* the lexical list's parameters (:data:`DEFAULT_TUNING`: column weights, coverage floor, own z);
  a hybrid search's, calibrated per embedding model (:func:`model_tuning`);
* the fusion (:func:`fuse_scores`, :func:`keyword_trust`, :func:`query_date_spans`) and what it
  reads around a memory (:data:`SPREAD` neighbours within :data:`SESSION_GAP_SECONDS`, z-scores
  spread at least :data:`MIN_SPREAD`);
* the recall index's neighbour window (:data:`BEFORE`, :data:`AFTER`) and claim statements
  (:func:`statement_text`).
"""

from __future__ import annotations

from zkr.retrieval._fts_query import token_terms
from zkr.retrieval._materialize import MAX_EXCERPT_BYTES, cap_excerpt
from zkr.retrieval._neighbours import MIN_SPREAD, SPREAD
from zkr.retrieval._query_dates import query_date_spans
from zkr.retrieval._recall import (
    CANDIDATES_PER_ITEM,
    CONTEXT_WEIGHT,
    DENSE_WEIGHT,
    LEXICAL_WEIGHT,
    MIN_CANDIDATES,
    PREFIX_FROM,
    RRF_K,
    STOP_WORDS,
    RecallTuning,
    fuse_weighted,
)
from zkr.retrieval._recall_query import RecallWord, recall_words
from zkr.retrieval._recall_tuning import DEFAULT_TUNING, model_tuning
from zkr.retrieval._search import FULL_RELEVANCE, NO_MATCH_GAP
from zkr.retrieval.fusion import fuse_scores
from zkr.retrieval.keyword_trust import HEAD as TRUST_HEAD
from zkr.retrieval.keyword_trust import keyword_trust
from zkr.store.recall_index import AFTER, BEFORE, SESSION_GAP_SECONDS, statement_text
from zkr.store.recall_terms import fts_tokens, recall_terms

__all__ = [
    "AFTER",
    "BEFORE",
    "CANDIDATES_PER_ITEM",
    "CONTEXT_WEIGHT",
    "DEFAULT_TUNING",
    "DENSE_WEIGHT",
    "FULL_RELEVANCE",
    "LEXICAL_WEIGHT",
    "MAX_EXCERPT_BYTES",
    "MIN_CANDIDATES",
    "MIN_SPREAD",
    "NO_MATCH_GAP",
    "PREFIX_FROM",
    "RRF_K",
    "SESSION_GAP_SECONDS",
    "SPREAD",
    "STOP_WORDS",
    "TRUST_HEAD",
    "RecallTuning",
    "RecallWord",
    "cap_excerpt",
    "fts_tokens",
    "fuse_scores",
    "fuse_weighted",
    "keyword_trust",
    "model_tuning",
    "query_date_spans",
    "recall_terms",
    "recall_words",
    "statement_text",
    "token_terms",
]
