"""The contract's responses: results, retrieval packs, profile entries, reviews, projection
issues, embedding results.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from zkr.enums import (
    ProfileStability,
    ProjectionState,
)
from zkr.models._base import (
    I64,
    LaneModel,
    LaneVersion,
    MemoryRef,
    PersonId,
    ReviewEvidence,
    ReviewId,
    TenantId,
    Text,
    _at,
    _Record,
)

__all__ = [
    "CorrectResult",
    "DeleteResult",
    "EmbedResult",
    "OkResult",
    "ProfileEntry",
    "ProjectionInput",
    "ProjectionIssue",
    "RebuildResult",
    "RememberResult",
    "RetrievalItem",
    "RetrievalPack",
    "ReviewItem",
    "ReviewResult",
]


class RememberResult(_Record):
    """What ``remember`` stored (or, for a replayed ingestion key, had stored)."""

    claim_id: str | None = Field(description="The claim recorded, or null when none was given.")
    evidence_id: str = Field(description="The evidence quoting the capture.")
    source_id: str = Field(description="The stored source.")


class RetrievalItem(_Record):
    """One cited memory: what it is, an excerpt, how relevant, and the evidence it rests on."""

    memory: MemoryRef = Field(description="The record this item shows.")
    excerpt: str = Field(description="Its text, at most 4096 UTF-8 bytes.")
    relevance_basis_points: int = Field(description="Relevance, 0..10000 (10000 = best).")
    evidence_ids: list[str] = Field(description="The live evidence the item cites (exactly one).")


class RetrievalPack(_Record):
    """A bounded, cited answer to a search."""

    query: str = Field(description="The query, unmodified.")
    items: list[RetrievalItem] = Field(description="The cited items, most relevant first.")
    gaps: list[str] = Field(
        description="What could not be answered: `no cited memory matched` when items is empty."
    )


class CorrectResult(_Record):
    """What a correction created and what it superseded."""

    claim_id: str = Field(description="The new claim.")
    evidence_id: str = Field(description="The evidence quoting the correction.")
    source_id: str = Field(description="The source holding the correction text.")
    superseded_claim_id: str = Field(description="The claim it superseded.")


class OkResult(_Record):
    """The operation succeeded."""

    ok: Literal[True] = Field(default=True, description="Always true.")


class DeleteResult(_Record):
    """What a deletion tombstoned and retracted."""

    source_id: str = Field(description="The deleted source.")
    evidence_count: int = Field(description="How many evidence quotes were tombstoned.")
    claim_count: int = Field(
        description="How many claims lost their last support and were retracted."
    )


class ProfileEntry(_Record):
    """A profile entry: the current value of one key, backed by a profile_fact claim."""

    id: Text = Field(description="The entry's id (stable per key: replacing a key keeps it).")
    tenant_id: TenantId
    person_id: PersonId
    key: Text = Field(description="The key: the backing claim's predicate.")
    value: Text = Field(description="The value: the backing claim's value.")
    stability: ProfileStability = Field(description="How lasting the entry is.")
    claim_id: Text = Field(description="The backing claim.")
    recorded_at: I64 = Field(description=_at("When the entry was recorded"))


class ReviewResult(_Record):
    """The stored review."""

    id: ReviewId


class ReviewItem(_Record):
    """A stored daily review."""

    id: ReviewId
    day: str = Field(description="The day reviewed.")
    summary: str = Field(description="The review's text.")
    evidence_ids: ReviewEvidence
    recorded_at: int = Field(description=_at("When it was recorded"))


class ProjectionInput(_Record):
    """What to embed for one memory: its text and the revision and hash to store with it."""

    target: MemoryRef = Field(description="The memory to embed.")
    text: str = Field(description="The exact text to embed.")
    target_revision: int = Field(description="The memory's current revision.")
    input_hash: str = Field(description="`sha256:<hex>` of the text; give it back to `embed`.")


class ProjectionIssue(_Record):
    """A memory whose vector in the lane is missing or stale, with what is stored today."""

    state: ProjectionState = Field(description="Missing or stale.")
    input: ProjectionInput = Field(description="What to embed now.")
    stored_target_revision: int | None = Field(
        description="The revision the stored vector embeds (null when missing)."
    )
    stored_input_hash: str | None = Field(
        description="The hash the stored vector embeds (null when missing)."
    )
    stored_created_at: int | None = Field(
        description=_at("When the stored vector was written; null when missing")
    )


class EmbedResult(_Record):
    """The stored vector."""

    target: MemoryRef = Field(description="The memory embedded.")
    dimension: int = Field(description="The vector's length.")
    target_revision: int = Field(description="The memory's revision the vector embeds.")
    input_hash: str = Field(description="`sha256:<hex>` of the embedded text.")
    created_at: int = Field(description=_at("When the vector was stored (database clock)"))


class RebuildResult(_Record):
    """What a ``rebuild`` run did. ``complete`` is true when no stale or missing work was left
    behind by this run (``max_items`` not reached); ``skipped`` counts targets that changed or
    disappeared while they were being embedded (a rerun picks them up)."""

    model: LaneModel
    version: LaneVersion
    embedded: int = Field(description="How many vectors were stored.")
    skipped: int = Field(description="How many memories changed or vanished while being embedded.")
    batches: int = Field(description="How many embedder calls were made.")
    complete: bool = Field(description="True when no missing or stale work is left.")
