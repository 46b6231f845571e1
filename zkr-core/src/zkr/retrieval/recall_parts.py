"""The recall ranking's parts that another store of the same records reuses (public).

The PostgreSQL replica ranks "recall" in SQL with zkr's own parameters and fusion, so that both
stores answer alike; it reads them from here, never from this package's private modules. The
definitions stay where the ranking uses them; this module only names what is promised.
"""

from __future__ import annotations

from zkr.retrieval._fts_query import token_terms
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

__all__ = [
    "CANDIDATES_PER_ITEM",
    "CONTEXT_WEIGHT",
    "DENSE_WEIGHT",
    "LEXICAL_WEIGHT",
    "MIN_CANDIDATES",
    "PREFIX_FROM",
    "RRF_K",
    "STOP_WORDS",
    "fuse_weighted",
    "token_terms",
]
