"""The contract's requests (§4-§7): remember, search, get, correct, link, delete, profiles,
reviews, projections, embed, rebuild, export.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict, Field

from zkr.enums import (
    ClaimKind,
    CorrectionMode,
    EvidenceRelation,
    ProfileStability,
    Ranking,
    VectorDistance,
    VectorNormalization,
)
from zkr.models._base import (
    I64,
    U16,
    U32,
    U64,
    CaptureKind,
    LaneModel,
    LaneVersion,
    Limit,
    PageLimit,
    ScopedRequest,
    TargetRef,
    Text,
    Timestamp,
    VectorElement,
    _at,
    _Request,
)
from zkr.settings import RANKING, default_ranking

__all__ = [
    "AsOf",
    "ClaimInput",
    "CorrectRequest",
    "DeleteRequest",
    "EmbedRequest",
    "EmbeddingInput",
    "ExportRequest",
    "GetRequest",
    "LinkRequest",
    "LocatorInput",
    "LocatorRequest",
    "ProfileRequest",
    "ProfilesRequest",
    "ProjectionsRequest",
    "QueryEmbedding",
    "RebuildRequest",
    "RememberRequest",
    "ReviewRequest",
    "ReviewsRequest",
    "SearchRequest",
]


class ClaimInput(_Request):
    """A typed temporal assertion to record together with a capture, cited by it."""

    subject: Text = Field(description="Who or what the claim is about, e.g. `me` or `Sam`.")
    predicate: Text = Field(description="The property or relation, e.g. `employer`, `prefers`.")
    value: Text = Field(description="The asserted value, e.g. `Acme`.")
    kind: ClaimKind = Field(description="What kind of assertion this is.")
    valid_from: Timestamp = Field(description=_at("When the claim became true in the world"))


class LocatorInput(_Request):
    """Where in a transcript stream the evidence came from (Omi-style device captures)."""

    device_id: Text = Field(description="The capturing device.")
    provider: Text = Field(description="The transcription provider.")
    stream_id: Text = Field(description="The transcript stream on that device.")
    segment_id: Text = Field(description="The segment of the stream.")
    start_ms: U64 = Field(description="Start of the quote in the stream, in milliseconds.")
    end_ms: U64 = Field(
        description="End of the quote in the stream, in milliseconds (at least start_ms)."
    )


class RememberRequest(ScopedRequest):
    """Store a capture verbatim as a cited source, and optionally a claim citing it."""

    kind: CaptureKind
    text: Text = Field(description="The captured text, stored verbatim (not blank).")
    captured_at: Timestamp = Field(description=_at("When it was observed"))
    recorded_at: Timestamp = Field(description=_at("When it is recorded in memory"))
    ingestion_key: Text | None = Field(
        default=None,
        description="An idempotency key: a second request with the same key replays the first "
        "result instead of storing a duplicate.",
    )
    claim: ClaimInput | None = Field(
        default=None, description="A claim to record, cited by this capture (omit for none)."
    )
    locator: LocatorInput | None = Field(
        default=None, description="Where the text sits in a transcript stream (omit for none)."
    )


class LocatorRequest(ScopedRequest):
    """Read the transcript locator of an evidence quote."""

    evidence_id: Text = Field(description="The evidence whose locator to read.")


class QueryEmbedding(_Request):
    """A query vector in a model/version lane.

    Addition: ``vector`` may be omitted when an installed embedder serves that model and version;
    zkr then embeds the query itself.
    """

    model: LaneModel
    version: LaneVersion
    vector: list[VectorElement] | None = Field(
        default=None,
        description="The query vector; omit it to let an installed embedder embed the query.",
    )


class AsOf(_Request):
    """A point in bitemporal history: what was true at ``valid_at`` as believed at
    ``recorded_at``."""

    valid_at: Timestamp = Field(description=_at("The moment in the world to ask about"))
    recorded_at: Timestamp = Field(
        description=_at("The moment of belief: what memory held at that time")
    )


class SearchRequest(ScopedRequest):
    """Retrieve a bounded pack of cited memories matching a query."""

    query: Text = Field(description="What to look for, in words.")
    limit: PageLimit = 10
    query_embedding: QueryEmbedding | None = Field(
        default=None,
        description="Also search a vector lane with this query embedding (omit: words only).",
    )
    as_of: AsOf | None = Field(
        default=None, description="Search history as it was at a past time (omit: the present)."
    )
    ranking: Ranking = Field(
        # Left out: the process's setting ($ZKR_RANKING, else recall), read when validated.
        default_factory=default_ranking,
        json_schema_extra={"default": RANKING.default},
        description="How to rank: 'recall' (stemmed words, claim statements, neighbouring "
        "captures, weighted fusion: finds more) or 'contract' (zkr 0.2.3's order, byte for "
        "byte). Left out: $ZKR_RANKING, else 'recall'.",
    )


class GetRequest(ScopedRequest):
    """Read one live memory by reference."""

    target: TargetRef = Field(description="The record to read.")
    as_of: AsOf | None = Field(
        default=None,
        description="Read it as it was at a past time (omit: the present): a claim visible then,"
        " a capture or quote already captured and recorded then.",
    )


class CorrectRequest(ScopedRequest):
    """Supersede a claim with a new value, cited by the correction text."""

    claim_id: Text = Field(description="The live claim to supersede.")
    text: Text = Field(description="The correction as the person said it; stored as evidence.")
    value: Text = Field(description="The new value of the claim.")
    valid_at: Timestamp = Field(
        description=_at("When the new value became true; after the old claim's valid start")
    )
    recorded_at: Timestamp = Field(
        description=_at("When the correction is recorded; after the old claim was recorded")
    )
    mode: CorrectionMode = Field(
        CorrectionMode.mistake,
        description="'mistake' (the default, zkr 0.2.3's correct): the old value was wrong and is"
        " no longer believed. 'change': the value changed at valid_at (\"I moved to Porto in"
        ' April"); the old value stays believed for the time it was true, so questions about'
        " that time still answer it.",
    )


class LinkRequest(ScopedRequest):
    """Attach an evidence quote to a claim as supporting or contradicting it."""

    claim_id: Text = Field(description="The claim to link.")
    evidence_id: Text = Field(description="The evidence to link to it.")
    relation: EvidenceRelation = Field(description="Whether the evidence supports or contradicts.")
    confidence_basis_points: U16 = Field(
        description="Confidence in the link, 0..10000 (10000 = certain)."
    )


class DeleteRequest(ScopedRequest):
    """Tombstone a source; what loses its last support is retracted."""

    source_id: Text = Field(description="The source to delete.")
    deleted_at: Timestamp = Field(description=_at("When it is deleted; not before it was recorded"))


class ProfileRequest(ScopedRequest):
    """Make a live profile_fact claim the profile entry of its key (its predicate).

    The only request that rejects unknown fields: key and value are derived, never supplied.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    stability: ProfileStability = Field(description="How lasting the entry is.")
    claim_id: Text = Field(description="The live profile_fact claim backing the entry.")
    recorded_at: Timestamp = Field(
        description=_at("When the entry is recorded; not before its claim was recorded")
    )


class ProfilesRequest(ScopedRequest):
    """List the current profile entries, newest first."""

    limit: PageLimit = 10
    as_of: AsOf | None = Field(
        default=None,
        description="The entries as they were at recorded_at (omit: the present); valid_at is not"
        " used.",
    )


class ReviewRequest(ScopedRequest):
    """Store a cited review of a day."""

    day: Text = Field(description="The day reviewed, free-form, e.g. `2026-05-01`.")
    summary: Text = Field(description="The review's text.")
    evidence_ids: list[Text] = Field(
        description="The live evidence the review cites (at least one; ids from search results)."
    )
    recorded_at: Timestamp = Field(description=_at("When the review is recorded"))


class ReviewsRequest(ScopedRequest):
    """List the daily reviews, latest first."""

    limit: PageLimit = 10
    day: Text | None = Field(
        default=None,
        description="Only the reviews of this day, exactly as it was stored (an addition).",
    )
    as_of: AsOf | None = Field(
        default=None,
        description="Only the reviews recorded by recorded_at (omit: all); valid_at is not used.",
    )


class ProjectionsRequest(ScopedRequest):
    """List memories whose vector in a lane is missing or stale."""

    model: LaneModel
    version: LaneVersion
    limit: PageLimit = 10


class EmbeddingInput(_Request):
    """One vector with the lane it belongs to and the hash of the text it embeds."""

    vector: list[VectorElement] = Field(description="The vector (stored as 32-bit floats).")
    model: Text = Field(description="The embedding model.")
    version: Text = Field(description="The model version.")
    input_hash: Text = Field(
        description="`sha256:<hex>` of the embedded text, as `projections` reported it."
    )
    normalization: VectorNormalization = Field(description="How the vector is normalized.")
    distance: VectorDistance = Field(description="The distance the lane compares with.")


class EmbedRequest(ScopedRequest):
    """Store a vector for a live memory after checking its input hash."""

    target: TargetRef = Field(description="The memory the vector embeds.")
    embedding: EmbeddingInput = Field(description="The vector and its lane.")


class RebuildRequest(ScopedRequest):
    """Addition: embed the scope's stale or missing projections with an installed embedder.

    ``max_items`` bounds one run (omitted or null: all the work); ``batch_size`` overrides the
    embedder's own (omitted or null: the embedder's).
    """

    model: Text = Field(description="The embedding model of the lane (an installed embedder's).")
    version: LaneVersion
    max_items: U32 | None = Field(
        default=None, description="At most this many memories in this run (omit: all the work)."
    )
    batch_size: Annotated[int, Field(strict=True, ge=1, le=4096)] | None = Field(
        default=None, description="Memories per embedder call, 1..4096 (omit: the embedder's own)."
    )


class ExportRequest(ScopedRequest):
    """Read one bounded page of the scope's commit feed after a cursor."""

    export_format: U32 = Field(description="The feed format; only 1 exists.")
    after_commit: I64 = Field(
        default=0, description="Cursor: the commit sequence already read (0: from the start)."
    )
    after_event_index: I64 = Field(
        default=-1, description="Cursor: the last event index read in after_commit (-1: none)."
    )
    high_water_mark: I64 | None = Field(
        default=None,
        description="The newest commit to include; freeze the first page's value for later pages "
        "(omit: the scope's newest).",
    )
    limit: Limit = Field(
        default=10, description="How many events: 0 means 10, more than 100 means 100."
    )
