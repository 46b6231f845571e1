"""The recall ranking's parameters: one :class:`RecallTuning` (the defaults are the shipped
ranking; benchmarks pass others in)."""

from __future__ import annotations

from zkr.retrieval._recall_query import PREFIX_FROM
from zkr.retrieval.fusion import (
    CLAIM_WEIGHT,
    DATE_WEIGHT,
    DENSE_WEIGHT,
    LEXICAL_SHARE,
    LEXICAL_WEIGHT,
    NEIGHBOUR_WEIGHT,
    RRF_K,
    SESSION_WEIGHT,
)

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from zkr._named_tuple import NamedTuple

__all__ = [
    "CANDIDATES_PER_ITEM",
    "CONTEXT_WEIGHT",
    "COVERAGE_FLOOR",
    "DEFAULT_TUNING",
    "MIN_CANDIDATES",
    "MODEL_TUNING",
    "OWN_Z",
    "STATEMENT_WEIGHT",
    "RecallTuning",
    "model_tuning",
]

#: bm25 weight of the context column (neighbours' text); capture text and statements weigh 1.
CONTEXT_WEIGHT = 0.35
#: bm25 weight of the statement column (claims read as words): a claim that says what is asked
#: ranks before a capture that only shares an incidental word with the question.
STATEMENT_WEIGHT = 2.0
#: A hybrid candidate whose own words do not match matches on its own when its dense z-score
#: (how far above the scope's usual similarity it is, in standard deviations) exceeds this.
OWN_Z = 0.0
#: A row's bm25 is multiplied by ``floor + (1 - floor) * share``, ``share`` being the share of the
#: query's words (each with the everyday predicate words it names) that the row holds: a memory
#: that holds several of the question's words outranks one that holds a single word strongly
#: (Lucene's classic "coord" factor, with a floor so that one rare word still counts). Chosen on
#: the everyday benchmark (0.4-0.6 alike there).
COVERAGE_FLOOR = 0.5
#: Each list brings this many candidates per requested item (at least :data:`MIN_CANDIDATES`).
CANDIDATES_PER_ITEM = 4
MIN_CANDIDATES = 50


# A NamedTuple, not a dataclass: a one-shot search imports this (start-up, issue 27.4).
class RecallTuning(NamedTuple):
    """The recall ranking's parameters (the defaults are the shipped ranking)."""

    context_weight: float = CONTEXT_WEIGHT
    statement_weight: float = STATEMENT_WEIGHT
    own_z: float = OWN_Z
    claim_weight: float = CLAIM_WEIGHT
    #: 1.0: bm25 alone, whatever share of the query's words a row holds.
    coverage_floor: float = COVERAGE_FLOOR
    rrf_k: int = RRF_K
    lexical_weight: float = LEXICAL_WEIGHT
    dense_weight: float = DENSE_WEIGHT
    candidates: int = MIN_CANDIDATES
    impute_missing: bool = False
    prefix_from: int = PREFIX_FROM
    #: ``"scores"`` (the shipped hybrid: :func:`zkr.retrieval.fusion.fuse_scores`) or ``"rrf"`` (the
    #: weighted reciprocal-rank fusion it replaced, kept to compare).
    fusion: str = "scores"
    lexical_share: float = LEXICAL_SHARE
    neighbour_weight: float = NEIGHBOUR_WEIGHT
    session_weight: float = SESSION_WEIGHT
    date_weight: float = DATE_WEIGHT


DEFAULT_TUNING = RecallTuning()


#: The hybrid fusion calibrated per embedding model: the tuning a lane of the model (the search's
#: ``query_embedding.model``) uses in place of :data:`DEFAULT_TUNING`, whose weights were chosen
#: with multilingual-e5-small. A z-unit of one model is not worth one of another's (e5 compresses
#: every cosine into 0.75-1.0, MiniLM spreads them): all-MiniLM-L6-v2 ranks better with a larger
#: dense part. Its lexical share, 0.5, is where both sets agree (``docs/embeddings.md``): on
#: LoCoMo's development conversations (0-4, categories 1-4) any@10 is 86.1-86.4 % for every share
#: in 0.425-0.5 against 85.7 % at 0.55, and on the everyday set (``benchmarks/everyday.py``) a
#: share below 0.5 loses hit@1 (81.4 % at 0.525-0.6, 80.0 at 0.5, 78.6 at 0.4-0.475). A model
#: missing here gets the defaults; searches without a dense lane do not change.
MODEL_TUNING: dict[str, RecallTuning] = {
    "sentence-transformers/all-MiniLM-L6-v2": DEFAULT_TUNING._replace(lexical_share=0.5),
}


def model_tuning(model: str, tuning: RecallTuning = DEFAULT_TUNING) -> RecallTuning:
    """The tuning for a lane of *model*: its calibration (:data:`MODEL_TUNING`) in place of the
    shipped *tuning*; a tuning a caller chose (a benchmark's sweep) is kept as it is."""
    return MODEL_TUNING.get(model, tuning) if tuning is DEFAULT_TUNING else tuning
