"""The retrieval parts that another store of the same records reuses (public).

The PostgreSQL replica ranks "recall" in SQL with zkr's own parameters and fusion, and cuts and
cites items as zkr does, so that both stores answer alike; it reads these from here, never from
this package's private modules. The definitions stay where zkr's own retrieval uses them; this
module only names what is promised.
"""

from __future__ import annotations

from zkr.retrieval._fts_query import token_terms
from zkr.retrieval._materialize import MAX_EXCERPT_BYTES, cap_excerpt
from zkr.retrieval._recall import (
    CANDIDATES_PER_ITEM,
    CONTEXT_WEIGHT,
    DENSE_WEIGHT,
    LEXICAL_WEIGHT,
    MIN_CANDIDATES,
    PREFIX_FROM,
    RRF_K,
    STOP_WORDS,
    fuse_weighted,
)
from zkr.retrieval._search import FULL_RELEVANCE, NO_MATCH_GAP

__all__ = [
    "CANDIDATES_PER_ITEM",
    "CONTEXT_WEIGHT",
    "DENSE_WEIGHT",
    "FULL_RELEVANCE",
    "LEXICAL_WEIGHT",
    "MAX_EXCERPT_BYTES",
    "MIN_CANDIDATES",
    "NO_MATCH_GAP",
    "PREFIX_FROM",
    "RRF_K",
    "STOP_WORDS",
    "cap_excerpt",
    "fuse_weighted",
    "token_terms",
]
