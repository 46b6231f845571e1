"""The record model of each export record ``kind``, by name (importable without pydantic).

``apply`` reads a record body with its kind's model (:func:`zkr.feed.pages.parse_record`); the
known-fields check (:mod:`zkr.store.known_fields`) and the one-shot fast path's description
(:mod:`zkr.fastpath.generate`) read the same table, so the three can never disagree.
"""

from __future__ import annotations

__all__ = ["RECORD_MODEL_NAMES"]

#: Export record kind -> the name of its model in :mod:`zkr.models`.
RECORD_MODEL_NAMES: dict[str, str] = {
    "source": "SourceRecord",
    "evidence": "EvidenceRecord",
    "claim": "ClaimRecord",
    "claim_evidence": "ClaimEvidenceRecord",
    "correction": "CorrectionRecord",
    "deletion": "DeletionRecord",
    "profile": "ProfileRecord",
    "daily_review": "DailyReviewRecord",
    "erasure": "ErasureRecord",
}
