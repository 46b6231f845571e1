"""The pydantic-free half of the contract's shapes: integer bounds, the limit rule and every
enumeration (JSON spellings are the contract's).

:mod:`zkr.models` re-exports all of it; it lives here so that the one-shot fast path
(:mod:`zkr.fastpath`) and the retrieval code it runs can use these without importing pydantic
(start-up time, issue 14).
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "I64_MAX",
    "I64_MIN",
    "ClaimKind",
    "ClaimStatus",
    "CorrectionMode",
    "EvidenceRelation",
    "MemoryKind",
    "ProfileStability",
    "ProjectionState",
    "Ranking",
    "SourceKind",
    "TargetKind",
    "VectorDistance",
    "VectorNormalization",
    "bounded_limit",
]

I64_MIN = -(2**63)
I64_MAX = 2**63 - 1


def bounded_limit(limit: int) -> int:
    """The contract's limit rule: 0 means the default 10, anything over 100 is 100."""
    if limit == 0:
        return 10
    return min(limit, 100)


class SourceKind(StrEnum):
    """Where a capture came from: a conversation turn, screen text, an audio transcript, a
    document, another integration, or a correction the person made."""

    conversation = "conversation"
    screen = "screen"
    audio = "audio"
    document = "document"
    integration = "integration"
    user_correction = "user_correction"


class ClaimKind(StrEnum):
    """What a claim asserts: a fact, a profile fact (may back a profile entry), a preference, a
    task, a skill or a recommendation."""

    fact = "fact"
    profile_fact = "profile_fact"
    preference = "preference"
    task = "task"
    skill = "skill"
    recommendation = "recommendation"


class ClaimStatus(StrEnum):
    """A claim's state: accepted (believed), superseded (replaced by a correction) or retracted
    (its last supporting evidence was deleted)."""

    accepted = "accepted"
    superseded = "superseded"
    retracted = "retracted"


class EvidenceRelation(StrEnum):
    """How evidence bears on a claim: it supports it or contradicts it."""

    supports = "supports"
    contradicts = "contradicts"


class ProfileStability(StrEnum):
    """How lasting a profile entry is: stable (rarely changes) or current (the present state)."""

    stable = "stable"
    current = "current"


class VectorNormalization(StrEnum):
    """How a stored vector was normalized: not at all, or to unit length (l2)."""

    none = "none"
    l2 = "l2"


class VectorDistance(StrEnum):
    """The distance a vector lane compares with: cosine, dot product or euclidean."""

    cosine = "cosine"
    dot = "dot"
    euclidean = "euclidean"


class TargetKind(StrEnum):
    """What can be embedded or fetched with ``get``: a source, an evidence quote or a claim."""

    source = "source"
    evidence = "evidence"
    claim = "claim"


class MemoryKind(StrEnum):
    """What a retrieval item or a deletion record can point at."""

    source = "source"
    evidence = "evidence"
    claim = "claim"
    profile_entry = "profile_entry"
    daily_review = "daily_review"


class ProjectionState(StrEnum):
    """Why a vector needs (re)computing: it is missing, or stale (its target changed)."""

    missing = "missing"
    stale = "stale"


class Ranking(StrEnum):
    """How a search orders what it finds."""

    #: zkr 0.2.3's ranking, byte for byte (``"ranking": "contract"`` or ``ZKR_RANKING=contract``).
    contract = "contract"
    #: Built for recall: stemmed words, claim statements, neighbouring captures, weighted fusion
    #: (the default: :data:`zkr.settings.RANKING`).
    recall = "recall"


class CorrectionMode(StrEnum):
    """What a correction says about the old value."""

    #: The old value was wrong: it is no longer believed, for any time (zkr 0.2.3's ``correct``).
    mistake = "mistake"
    #: The value changed at ``valid_at``: the old value stays believed for the time it was true.
    change = "change"
