"""Every request, response and export record of the contract, defined once (pydantic v2).

These models check *shape* only: JSON types, integer ranges, enum spellings, unknown fields. The
contract's semantic rules (blank text, interval order, limits) run inside the operations, in the
order the contract gives, so that the first broken rule is the one reported.

The CLI, ``serve``, the Hermes provider and the OpenClaw bridge all validate through these classes.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "I64_MAX",
    "I64_MIN",
    "ApplyRequest",
    "ApplyResult",
    "AsOf",
    "ClaimEvidenceRecord",
    "ClaimInput",
    "ClaimKind",
    "ClaimRecord",
    "ClaimStatus",
    "CorrectRequest",
    "CorrectResult",
    "CorrectionRecord",
    "DailyReviewRecord",
    "DeleteRequest",
    "DeleteResult",
    "DeletionRecord",
    "EmbedRequest",
    "EmbedResult",
    "EmbeddingInput",
    "EvidenceBody",
    "EvidenceRecord",
    "EvidenceRelation",
    "ExportCommit",
    "ExportPage",
    "ExportRequest",
    "GetRequest",
    "Limit",
    "LinkRequest",
    "LocatorInput",
    "LocatorRequest",
    "MemoryKind",
    "MemoryRef",
    "OkResult",
    "ProfileEntry",
    "ProfileRecord",
    "ProfileRequest",
    "ProfileStability",
    "ProfilesRequest",
    "ProjectionInput",
    "ProjectionIssue",
    "ProjectionState",
    "ProjectionsRequest",
    "QueryEmbedding",
    "RebuildRequest",
    "RebuildResult",
    "RememberRequest",
    "RememberResult",
    "RetrievalItem",
    "RetrievalPack",
    "ReviewItem",
    "ReviewRequest",
    "ReviewResult",
    "ReviewsRequest",
    "ScopedRequest",
    "SearchRequest",
    "SourceBody",
    "SourceKind",
    "SourceRecord",
    "TargetKind",
    "TargetRef",
    "TimeRange",
    "Timestamp",
    "VectorDistance",
    "VectorNormalization",
    "bounded_limit",
]

I64_MIN = -(2**63)
I64_MAX = 2**63 - 1

# Integer fields refuse floats (even 10.0), booleans, strings and null, and out-of-range values.
Timestamp = Annotated[int, Field(strict=True, ge=I64_MIN, le=I64_MAX)]
I64 = Timestamp
U16 = Annotated[int, Field(strict=True, ge=0, le=2**16 - 1)]
U32 = Annotated[int, Field(strict=True, ge=0, le=2**32 - 1)]
U64 = Annotated[int, Field(strict=True, ge=0, le=2**64 - 1)]
Limit = U32
Text = Annotated[str, Field(strict=True)]
# Vector elements accept JSON integers and decimals (rounded to float32 by the operations).
VectorElement = Annotated[float, Field(strict=True, allow_inf_nan=True)]


def bounded_limit(limit: int) -> int:
    """The contract's limit rule: 0 means the default 10, anything over 100 is 100."""
    if limit == 0:
        return 10
    return min(limit, 100)


# ----------------------------------------------------------------------------------------------
# Enumerations (JSON spellings are the contract's)
# ----------------------------------------------------------------------------------------------


class SourceKind(StrEnum):
    conversation = "conversation"
    screen = "screen"
    audio = "audio"
    document = "document"
    integration = "integration"
    user_correction = "user_correction"


class ClaimKind(StrEnum):
    fact = "fact"
    profile_fact = "profile_fact"
    preference = "preference"
    task = "task"
    skill = "skill"
    recommendation = "recommendation"


class ClaimStatus(StrEnum):
    accepted = "accepted"
    superseded = "superseded"
    retracted = "retracted"


class EvidenceRelation(StrEnum):
    supports = "supports"
    contradicts = "contradicts"


class ProfileStability(StrEnum):
    stable = "stable"
    current = "current"


class VectorNormalization(StrEnum):
    none = "none"
    l2 = "l2"


class VectorDistance(StrEnum):
    cosine = "cosine"
    dot = "dot"
    euclidean = "euclidean"


class TargetKind(StrEnum):
    """What can be embedded or fetched with ``get``."""

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
    missing = "missing"
    stale = "stale"


# ----------------------------------------------------------------------------------------------
# Shared pieces
# ----------------------------------------------------------------------------------------------


class _Request(BaseModel):
    """Requests ignore unknown fields (the contract's rule for every command but ``profile``)."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


class ScopedRequest(_Request):
    tenant_id: Text
    person_id: Text


class TargetRef(_Request):
    """``{"kind": "source"|"evidence"|"claim", "id": ...}``."""

    kind: TargetKind
    id: Text


class MemoryRef(_Record):
    kind: MemoryKind
    id: str


class TimeRange(_Record):
    """Half-open ``[from, until)``; ``until`` null means still open."""

    from_: int = Field(alias="from")
    until: int | None


# ----------------------------------------------------------------------------------------------
# Requests
# ----------------------------------------------------------------------------------------------


class ClaimInput(_Request):
    subject: Text
    predicate: Text
    value: Text
    kind: ClaimKind
    valid_from: Timestamp


class LocatorInput(_Request):
    """Where in a transcript stream the evidence came from (Omi-style device captures)."""

    device_id: Text
    provider: Text
    stream_id: Text
    segment_id: Text
    start_ms: U64
    end_ms: U64


class RememberRequest(ScopedRequest):
    kind: SourceKind
    text: Text
    captured_at: Timestamp
    recorded_at: Timestamp
    ingestion_key: Text | None = None
    claim: ClaimInput | None = None
    locator: LocatorInput | None = None


class LocatorRequest(ScopedRequest):
    evidence_id: Text


class QueryEmbedding(_Request):
    """A query vector in a model/version lane.

    Addition: ``vector`` may be omitted when an installed embedder serves that model and version;
    zkr then embeds the query itself.
    """

    model: Text
    version: Text
    vector: list[VectorElement] | None = None


class AsOf(_Request):
    valid_at: Timestamp
    recorded_at: Timestamp


class SearchRequest(ScopedRequest):
    query: Text
    limit: Limit = 10
    query_embedding: QueryEmbedding | None = None
    as_of: AsOf | None = None


class GetRequest(ScopedRequest):
    target: TargetRef


class CorrectRequest(ScopedRequest):
    claim_id: Text
    text: Text
    value: Text
    valid_at: Timestamp
    recorded_at: Timestamp


class LinkRequest(ScopedRequest):
    claim_id: Text
    evidence_id: Text
    relation: EvidenceRelation
    confidence_basis_points: U16


class DeleteRequest(ScopedRequest):
    source_id: Text
    deleted_at: Timestamp


class ProfileRequest(ScopedRequest):
    """The only request that rejects unknown fields: key and value are derived, never supplied."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    stability: ProfileStability
    claim_id: Text
    recorded_at: Timestamp


class ProfilesRequest(ScopedRequest):
    limit: Limit = 10


class ReviewRequest(ScopedRequest):
    day: Text
    summary: Text
    evidence_ids: list[Text]
    recorded_at: Timestamp


class ReviewsRequest(ScopedRequest):
    limit: Limit = 10


class ProjectionsRequest(ScopedRequest):
    model: Text
    version: Text
    limit: Limit = 10


class EmbeddingInput(_Request):
    vector: list[VectorElement]
    model: Text
    version: Text
    input_hash: Text
    normalization: VectorNormalization
    distance: VectorDistance


class EmbedRequest(ScopedRequest):
    target: TargetRef
    embedding: EmbeddingInput


class RebuildRequest(ScopedRequest):
    """Addition: embed the scope's stale or missing projections with an installed embedder.

    ``max_items`` bounds one run (omitted or null: all the work); ``batch_size`` overrides the
    embedder's own (omitted or null: the embedder's).
    """

    model: Text
    version: Text
    max_items: U32 | None = None
    batch_size: Annotated[int, Field(strict=True, ge=1, le=4096)] | None = None


class ExportRequest(ScopedRequest):
    export_format: U32
    after_commit: I64 = 0
    after_event_index: I64 = -1
    high_water_mark: I64 | None = None
    limit: Limit = 10


# ----------------------------------------------------------------------------------------------
# Responses
# ----------------------------------------------------------------------------------------------


class RememberResult(_Record):
    claim_id: str | None
    evidence_id: str
    source_id: str


class RetrievalItem(_Record):
    memory: MemoryRef
    excerpt: str
    relevance_basis_points: int
    evidence_ids: list[str]


class RetrievalPack(_Record):
    query: str
    items: list[RetrievalItem]
    gaps: list[str]


class CorrectResult(_Record):
    claim_id: str
    evidence_id: str
    source_id: str
    superseded_claim_id: str


class OkResult(_Record):
    ok: Literal[True] = True


class DeleteResult(_Record):
    source_id: str
    evidence_count: int
    claim_count: int


class ProfileEntry(_Record):
    id: str
    tenant_id: str
    person_id: str
    key: str
    value: str
    stability: ProfileStability
    claim_id: str
    recorded_at: int


class ReviewResult(_Record):
    id: str


class ReviewItem(_Record):
    id: str
    day: str
    summary: str
    evidence_ids: list[str]
    recorded_at: int


class ProjectionInput(_Record):
    target: MemoryRef
    text: str
    target_revision: int
    input_hash: str


class ProjectionIssue(_Record):
    state: ProjectionState
    input: ProjectionInput
    stored_target_revision: int | None
    stored_input_hash: str | None
    stored_created_at: int | None


class EmbedResult(_Record):
    target: MemoryRef
    dimension: int
    target_revision: int
    input_hash: str
    created_at: int


class RebuildResult(_Record):
    """What a ``rebuild`` run did. ``complete`` is true when no stale or missing work was left
    behind by this run (``max_items`` not reached); ``skipped`` counts targets that changed or
    disappeared while they were being embedded (a rerun picks them up)."""

    model: str
    version: str
    embedded: int
    skipped: int
    batches: int
    complete: bool


# ----------------------------------------------------------------------------------------------
# Export records (§7.3): field order here is the stored payload's key order
# ----------------------------------------------------------------------------------------------


class SourceBody(_Record):
    id: str
    tenant_id: str
    person_id: str
    revision: int
    kind: SourceKind
    content: str
    captured_at: int
    recorded_at: int
    deleted_at: int | None


class SourceRecord(_Record):
    source: SourceBody
    ingestion_key: str | None
    origin_evidence_id: str | None
    origin_claim_id: str | None


class EvidenceBody(_Record):
    id: str
    tenant_id: str
    person_id: str
    source_id: str
    source_revision: int
    quote: str
    byte_range: dict[str, int] | None = None
    recorded_at: int


class EvidenceRecord(_Record):
    evidence: EvidenceBody
    locator: LocatorInput | None
    deleted_at: int | None


class ClaimRecord(_Record):
    id: str
    tenant_id: str
    person_id: str
    subject: str
    predicate: str
    value: str
    kind: ClaimKind
    valid_time: TimeRange
    recorded_time: TimeRange
    status: ClaimStatus


class ClaimEvidenceRecord(_Record):
    tenant_id: str
    person_id: str
    claim_id: str
    evidence_id: str
    relation: EvidenceRelation
    confidence_basis_points: int


class CorrectionRecord(_Record):
    tenant_id: str
    person_id: str
    superseded_claim_id: str
    claim_id: str
    source_id: str
    evidence_id: str
    valid_at: int
    recorded_at: int


class DeletionRecord(_Record):
    tenant_id: str
    person_id: str
    target: MemoryRef
    deleted_at: int


class ProfileRecord(ProfileEntry):
    pass


class DailyReviewRecord(_Record):
    id: str
    tenant_id: str
    person_id: str
    day: str
    summary: str
    evidence_ids: list[str]
    recorded_at: int


class ExportCommit(_Record):
    sequence: int
    recorded_at: int
    event_count: int
    first_event_index: int
    records: list[dict[str, Any]]


class ExportPage(_Record):
    export_format: int
    database_schema_version: int
    high_water_mark: int
    next_after_commit: int
    next_after_event_index: int
    complete: bool
    commits: list[ExportCommit]


# ----------------------------------------------------------------------------------------------
# Replication (addition): applying exported pages to another database
# ----------------------------------------------------------------------------------------------


class ApplyRequest(ScopedRequest):
    """Apply one export page of *upstream* to this database (or, without a page, read the cursor).

    ``after_commit``/``after_event_index`` are the cursor the page was exported with: they let
    ``apply`` prove that no event between what it already holds and the page was skipped.
    """

    upstream: Text = ""
    after_commit: I64 | None = None
    after_event_index: I64 | None = None
    page: ExportPage | None = None


class ApplyResult(_Record):
    """What ``apply`` did, and where to resume the upstream export."""

    applied_commits: int
    received_events: int
    pending_events: int
    applied_commit: int
    next_after_commit: int
    next_after_event_index: int
