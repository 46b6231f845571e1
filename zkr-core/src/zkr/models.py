"""Every request, response and export record of the contract, defined once (pydantic v2).

These models check *shape* only: JSON types, integer ranges, enum spellings, unknown fields. The
contract's semantic rules (blank text, interval order, limits) run inside the operations, in the
order the contract gives, so that the first broken rule is the one reported.

The CLI, ``serve``, the Hermes provider and the OpenClaw bridge all validate through these classes.
Every model and field carries a description: help, ``docs/cli.md`` and every host's tool schema are
generated from them, never described a second time. Every timestamp is an integer count of seconds
since the Unix epoch (1970-01-01T00:00:00Z).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool

from zkr.enums import (
    I64_MAX,
    I64_MIN,
    ClaimKind,
    ClaimStatus,
    CorrectionMode,
    EvidenceRelation,
    MemoryKind,
    ProfileStability,
    ProjectionState,
    Ranking,
    SourceKind,
    TargetKind,
    VectorDistance,
    VectorNormalization,
    bounded_limit,
)
from zkr.settings import RANKING, default_ranking

__all__ = [
    "I64_MAX",
    "I64_MIN",
    "ApplyRequest",
    "ApplyResult",
    "AsOf",
    "Capture",
    "CapturesRequest",
    "ClaimEvidenceRecord",
    "ClaimHistory",
    "ClaimInput",
    "ClaimKind",
    "ClaimRecord",
    "ClaimStatus",
    "ClaimVersion",
    "ClaimsRequest",
    "CorrectRequest",
    "CorrectResult",
    "CorrectionMode",
    "CorrectionRecord",
    "DailyReviewRecord",
    "DeleteRequest",
    "DeleteResult",
    "DeletionRecord",
    "EmbedRequest",
    "EmbedResult",
    "EmbeddingInput",
    "ErasureRecord",
    "EvidenceBody",
    "EvidenceRecord",
    "EvidenceRelation",
    "ExportCommit",
    "ExportPage",
    "ExportRequest",
    "ForgetRequest",
    "ForgetResult",
    "GetRequest",
    "HistoryCorrection",
    "HistoryEvent",
    "HistoryEvidence",
    "HistoryRequest",
    "Limit",
    "LinkRequest",
    "ListedCapture",
    "ListedClaim",
    "LiveClaim",
    "LocatorInput",
    "LocatorRequest",
    "MemoriesPage",
    "MemoriesRequest",
    "MemoryKind",
    "MemoryListItem",
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
    "Ranking",
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
    "ScopeEntry",
    "ScopedRequest",
    "ScopesPage",
    "ScopesRequest",
    "SearchRequest",
    "SequenceRequest",
    "SequenceResult",
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


# Integer fields refuse floats (even 10.0), booleans, strings and null, and out-of-range values.
Timestamp = Annotated[int, Field(strict=True, ge=I64_MIN, le=I64_MAX)]
I64 = Timestamp
U16 = Annotated[int, Field(strict=True, ge=0, le=2**16 - 1)]
U32 = Annotated[int, Field(strict=True, ge=0, le=2**32 - 1)]
U64 = Annotated[int, Field(strict=True, ge=0, le=2**64 - 1)]
Limit = U32
# Export feed positions (an upstream's numbers, checked before ``apply`` stages anything).
FeedSequence = Annotated[int, Field(strict=True, ge=1, le=I64_MAX)]
Count = Annotated[int, Field(strict=True, ge=1, le=I64_MAX)]
Index = Annotated[int, Field(strict=True, ge=0, le=I64_MAX)]
Text = Annotated[str, Field(strict=True)]
# Vector elements accept JSON integers and decimals (rounded to float32 by the operations).
VectorElement = Annotated[float, Field(strict=True, allow_inf_nan=True)]


# ----------------------------------------------------------------------------------------------
# Shared pieces
# ----------------------------------------------------------------------------------------------

# Descriptions that many fields share (one wording everywhere).
_TENANT = "The tenant (an installation or account) the memory belongs to."
_PERSON = "The person, inside the tenant, whose memory this is."
_EPOCH = "seconds since the Unix epoch"
_LIMIT = "How many items to return: 0 means the default 10, more than 100 means 100."


def _at(what: str) -> str:
    """The description of a timestamp field: what it marks, and its unit."""
    return f"{what} ({_EPOCH})."


# ``defer_build``: a model's validator is built the first time it is used, not at import, so a
# one-shot command pays only for the few models it touches (start-up time, issue 14).
class _Request(BaseModel):
    """Requests ignore unknown fields (the contract's rule for every command but ``profile``)."""

    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True, defer_build=True)


class ScopedRequest(_Request):
    """A request inside one (tenant, person) scope; another scope's records look missing."""

    tenant_id: Text = Field(description=_TENANT)
    person_id: Text = Field(description=_PERSON)


class TargetRef(_Request):
    """A reference to one record: ``{"kind": "source"|"evidence"|"claim", "id": ...}``."""

    kind: TargetKind = Field(description="The kind of record.")
    id: Text = Field(description="The record's id.")


class MemoryRef(_Record):
    """A reference to one record of memory: its kind and id."""

    kind: MemoryKind = Field(description="The kind of record.")
    id: Text = Field(description="The record's id.")


class TimeRange(_Record):
    """A half-open interval ``[from, until)``; ``until`` null means still open."""

    from_: I64 = Field(alias="from", description=_at("Start, included"))
    until: I64 | None = Field(description=_at("End, excluded; null while the interval is open"))


# ----------------------------------------------------------------------------------------------
# Requests
# ----------------------------------------------------------------------------------------------


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

    kind: SourceKind = Field(description="Where the capture came from.")
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

    model: Text = Field(description="The embedding model of the lane.")
    version: Text = Field(description="The model version of the lane.")
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
    limit: Limit = Field(default=10, description=_LIMIT)
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

    limit: Limit = Field(default=10, description=_LIMIT)
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

    limit: Limit = Field(default=10, description=_LIMIT)
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

    model: Text = Field(description="The embedding model of the lane.")
    version: Text = Field(description="The model version of the lane.")
    limit: Limit = Field(default=10, description=_LIMIT)


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
    version: Text = Field(description="The model version of the lane.")
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


# ----------------------------------------------------------------------------------------------
# Responses
# ----------------------------------------------------------------------------------------------


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
    tenant_id: Text = Field(description=_TENANT)
    person_id: Text = Field(description=_PERSON)
    key: Text = Field(description="The key: the backing claim's predicate.")
    value: Text = Field(description="The value: the backing claim's value.")
    stability: ProfileStability = Field(description="How lasting the entry is.")
    claim_id: Text = Field(description="The backing claim.")
    recorded_at: I64 = Field(description=_at("When the entry was recorded"))


class ReviewResult(_Record):
    """The stored review."""

    id: str = Field(description="The review's id.")


class ReviewItem(_Record):
    """A stored daily review."""

    id: str = Field(description="The review's id.")
    day: str = Field(description="The day reviewed.")
    summary: str = Field(description="The review's text.")
    evidence_ids: list[str] = Field(description="The evidence it cites.")
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

    model: str = Field(description="The embedding model of the lane.")
    version: str = Field(description="The model version of the lane.")
    embedded: int = Field(description="How many vectors were stored.")
    skipped: int = Field(description="How many memories changed or vanished while being embedded.")
    batches: int = Field(description="How many embedder calls were made.")
    complete: bool = Field(description="True when no missing or stale work is left.")


# ----------------------------------------------------------------------------------------------
# Export records (§7.3): field order here is the stored payload's key order
# ----------------------------------------------------------------------------------------------


class SourceBody(_Record):
    """A source: a raw observation, stored verbatim."""

    id: Text = Field(description="The source's id.")
    tenant_id: Text = Field(description=_TENANT)
    person_id: Text = Field(description=_PERSON)
    revision: I64 = Field(description="1, or 2 once deleted.")
    kind: SourceKind = Field(description="Where the capture came from.")
    content: Text = Field(description="The captured text.")
    captured_at: I64 = Field(description=_at("When it was observed"))
    recorded_at: I64 = Field(description=_at("When it was recorded"))
    deleted_at: I64 | None = Field(description=_at("When it was deleted; null while live"))


class SourceRecord(_Record):
    """A source as the commit feed carries it, with its creation links."""

    source: SourceBody = Field(description="The source.")
    ingestion_key: Text | None = Field(description="Its idempotency key, or null.")
    origin_evidence_id: Text | None = Field(description="The evidence created with it, or null.")
    origin_claim_id: Text | None = Field(description="The claim created with it, or null.")


class EvidenceBody(_Record):
    """An evidence quote: a citation of a source."""

    id: Text = Field(description="The evidence's id.")
    tenant_id: Text = Field(description=_TENANT)
    person_id: Text = Field(description=_PERSON)
    source_id: Text = Field(description="The source it quotes.")
    source_revision: I64 = Field(description="The source revision quoted (always 1).")
    quote: Text = Field(description="The quoted text (the whole source text).")
    byte_range: dict[str, I64] | None = Field(
        default=None, description="The quoted span `{start, end}` (always null: never recorded)."
    )
    recorded_at: I64 = Field(description=_at("When it was recorded"))


class EvidenceRecord(_Record):
    """An evidence quote as the commit feed carries it."""

    evidence: EvidenceBody = Field(description="The evidence.")
    locator: LocatorInput | None = Field(description="Its transcript locator, or null.")
    deleted_at: I64 | None = Field(description=_at("When it was deleted; null while live"))


class ClaimRecord(_Record):
    """A claim: a typed assertion with valid time and recorded time."""

    id: Text = Field(description="The claim's id.")
    tenant_id: Text = Field(description=_TENANT)
    person_id: Text = Field(description=_PERSON)
    subject: Text = Field(description="Who or what it is about.")
    predicate: Text = Field(description="The property or relation.")
    value: Text = Field(description="The asserted value.")
    kind: ClaimKind = Field(description="What kind of assertion.")
    valid_time: TimeRange = Field(description="When it was true in the world.")
    recorded_time: TimeRange = Field(description="When memory believed it.")
    status: ClaimStatus = Field(description="Accepted, superseded or retracted.")


class ClaimEvidenceRecord(_Record):
    """A link between a claim and an evidence quote."""

    tenant_id: Text = Field(description=_TENANT)
    person_id: Text = Field(description=_PERSON)
    claim_id: Text = Field(description="The claim.")
    evidence_id: Text = Field(description="The evidence.")
    relation: EvidenceRelation = Field(description="Supports or contradicts.")
    confidence_basis_points: U16 = Field(description="Confidence, 0..10000.")


class CorrectionRecord(_Record):
    """A correction: which claim replaced which, and the capture that said so."""

    tenant_id: Text = Field(description=_TENANT)
    person_id: Text = Field(description=_PERSON)
    superseded_claim_id: Text = Field(description="The claim replaced.")
    claim_id: Text = Field(description="The replacement claim.")
    source_id: Text = Field(description="The source holding the correction text.")
    evidence_id: Text = Field(description="The evidence quoting it.")
    valid_at: I64 = Field(description=_at("When the new value became true"))
    recorded_at: I64 = Field(description=_at("When the correction was recorded"))


class DeletionRecord(_Record):
    """A removal: a tombstoned source or evidence, or a dropped profile entry or review."""

    tenant_id: Text = Field(description=_TENANT)
    person_id: Text = Field(description=_PERSON)
    target: MemoryRef = Field(description="What was removed.")
    deleted_at: I64 = Field(description=_at("When it was removed"))


class ProfileRecord(ProfileEntry):
    """A profile entry as the commit feed carries it."""


class DailyReviewRecord(_Record):
    """A daily review as the commit feed carries it."""

    id: Text = Field(description="The review's id.")
    tenant_id: Text = Field(description=_TENANT)
    person_id: Text = Field(description=_PERSON)
    day: Text = Field(description="The day reviewed.")
    summary: Text = Field(description="The review's text.")
    evidence_ids: list[Text] = Field(description="The evidence it cites.")
    recorded_at: I64 = Field(description=_at("When it was recorded"))


class ExportCommit(_Record):
    """One commit of the feed (or the part of it on this page)."""

    sequence: FeedSequence = Field(
        description="The commit's sequence number (this database's own, never reused)."
    )
    recorded_at: I64 = Field(description=_at("The commit's caller-given time"))
    event_count: Count = Field(description="How many events the whole commit holds.")
    first_event_index: Index = Field(description="The index of the first event on this page.")
    records: list[dict[str, Any]] = Field(
        description="The events: `{kind, record}` export records, in order."
    )


class ExportPage(_Record):
    """One page of the commit feed and the cursor to continue from."""

    export_format: U32 = Field(description="The feed format (1).")
    database_schema_version: U32 = Field(description="The exporting database's schema version.")
    high_water_mark: I64 = Field(description="The newest commit this paging includes.")
    next_after_commit: I64 = Field(description="Cursor for the next page: after_commit.")
    next_after_event_index: I64 = Field(description="Cursor for the next page: after_event_index.")
    complete: StrictBool = Field(description="True when nothing is left up to high_water_mark.")
    commits: list[ExportCommit] = Field(description="The commits, in sequence order.")


# ----------------------------------------------------------------------------------------------
# Replication (addition): applying exported pages to another database
# ----------------------------------------------------------------------------------------------


class ApplyRequest(ScopedRequest):
    """Apply one export page of *upstream* to this database (or, without a page, read the cursor).

    ``after_commit``/``after_event_index`` are the cursor the page was exported with: they let
    ``apply`` prove that no event between what it already holds and the page was skipped.
    """

    upstream: Text = Field(default="", description="A name for the exporting database.")
    after_commit: I64 | None = Field(
        default=None, description="The after_commit cursor the page was exported with."
    )
    after_event_index: I64 | None = Field(
        default=None, description="The after_event_index cursor the page was exported with."
    )
    page: ExportPage | None = Field(
        default=None, description="The page to apply (omit: only read where to resume)."
    )


class ApplyResult(_Record):
    """What ``apply`` did, and where to resume the upstream export."""

    applied_commits: int = Field(description="How many commits were applied now.")
    received_events: int = Field(description="How many events the page held.")
    dropped_events: int = Field(
        default=0,
        description="How many of them copied content an erasure held here names: their text"
        " was dropped (not stored, not indexed, not embedded).",
    )
    pending_events: int = Field(description="Events held back until their commit is complete.")
    applied_commit: int = Field(description="The newest upstream commit applied so far.")
    next_after_commit: int = Field(description="Export from here next: after_commit.")
    next_after_event_index: int = Field(description="Export from here next: after_event_index.")


# ----------------------------------------------------------------------------------------------
# Host look-ups (addition): what a host needs to know about a scope without touching the schema
# ----------------------------------------------------------------------------------------------


class SequenceRequest(ScopedRequest):
    """Read the scope's newest commit sequence."""


class SequenceResult(_Record):
    """The scope's newest commit: every write to the scope appends one, so an unchanged number
    means nothing in the scope changed."""

    sequence: int = Field(description="The newest commit sequence of the scope (0: none yet).")


class ClaimsRequest(ScopedRequest):
    """Find live claims by subject, predicate and a fragment of their value."""

    subject: Text | None = Field(
        default=None, description="Only claims about this subject (exactly)."
    )
    predicate: Text | None = Field(
        default=None, description="Only claims with this predicate (exactly)."
    )
    contains: Text | None = Field(
        default=None, description="Only claims whose value contains this text (case-sensitive)."
    )
    limit: Limit = Field(default=10, description=_LIMIT)


class LiveClaim(_Record):
    """A live claim and the live sources whose evidence supports it."""

    id: str = Field(description="The claim's id.")
    subject: str = Field(description="Who or what it is about.")
    predicate: str = Field(description="The property or relation.")
    value: str = Field(description="The asserted value.")
    kind: ClaimKind = Field(description="What kind of assertion.")
    valid_from: int = Field(description=_at("When it became true"))
    recorded_from: int = Field(description=_at("When it was recorded"))
    source_ids: list[str] = Field(
        description="The live sources whose evidence supports it (deleting them all retracts it)."
    )


class CapturesRequest(ScopedRequest):
    """List live captures (sources), newest recorded first."""

    key_prefix: Text | None = Field(
        default=None, description="Only captures whose ingestion key starts with this text."
    )
    limit: Limit = Field(default=10, description=_LIMIT)


class Capture(_Record):
    """A live capture: the source and the evidence that quotes it."""

    source_id: str = Field(description="The source's id.")
    evidence_id: str = Field(description="The evidence quoting it (cite this).")
    kind: SourceKind = Field(description="Where the capture came from.")
    text: str = Field(description="The captured text.")
    captured_at: int = Field(description=_at("When it was observed"))
    recorded_at: int = Field(description=_at("When it was recorded"))


class ScopesRequest(_Request):
    """List the persons of one tenant (the scopes that hold or held memory), one page."""

    tenant_id: Text = Field(description=_TENANT)
    limit: Limit = Field(default=10, description=_LIMIT)
    cursor: Text | None = Field(
        default=None,
        description="The next_cursor of the previous page (opaque); omitted or null for the first"
        " page.",
    )


class ScopeEntry(_Record):
    """One scope of the tenant."""

    person_id: str = Field(description=_PERSON)


class ScopesPage(_Record):
    """One page of ``scopes``."""

    items: list[ScopeEntry] = Field(description="The persons, in ascending order of person_id.")
    next_cursor: str | None = Field(
        description="Pass as cursor to read the next page; null when this page is the last."
    )


# ----------------------------------------------------------------------------------------------
# A person's view of their memory (additions): memories, history, forget
# ----------------------------------------------------------------------------------------------


class MemoriesRequest(ScopedRequest):
    """List what a scope holds: live claims and captures, newest recorded first, one page."""

    claim_kinds: list[ClaimKind] = Field(
        default_factory=list,
        description="List claims of these kinds only. When only source_kinds is given, no claims"
        " are listed; when neither is given, everything is.",
    )
    source_kinds: list[SourceKind] = Field(
        default_factory=list,
        description="List captures of these kinds only. When only claim_kinds is given, no"
        " captures are listed; when neither is given, everything is.",
    )
    limit: Limit = Field(10, description=_LIMIT)
    cursor: Text | None = Field(
        None,
        description="The next_cursor of the previous page (opaque); omitted or null for the first"
        " page. Use it with the same filters and as_of.",
    )
    as_of: AsOf | None = Field(
        None,
        description="List what was held at this valid and recorded time instead of now"
        f" ({_EPOCH}).",
    )


class ListedClaim(_Record):
    """A claim as ``memories`` lists it."""

    id: str = Field(description="The claim id.")
    kind: ClaimKind = Field(description="What sort of claim it is.")
    subject: str = Field(description="The statement's subject.")
    predicate: str = Field(description="The statement's predicate.")
    value: str = Field(description="The statement's value.")
    valid_time: TimeRange = Field(
        description=f"When the statement is true: half-open [from, until), {_EPOCH}."
    )
    recorded_time: TimeRange = Field(
        description=f"When the memory believed it: half-open [from, until), {_EPOCH}."
    )
    status: ClaimStatus = Field(description="accepted, superseded (by a correction) or retracted.")


class ListedCapture(_Record):
    """A capture (source) as ``memories`` lists it."""

    id: str = Field(description="The source id.")
    kind: SourceKind = Field(description="Where the capture came from.")
    text: str = Field(description="The captured text, cut to at most 4096 UTF-8 bytes.")
    captured_at: int = Field(description=f"When it was captured ({_EPOCH}).")
    recorded_at: int = Field(description=f"When it was stored ({_EPOCH}).")
    ingestion_key: str | None = Field(description="The caller's idempotency key, if any.")


class MemoryListItem(_Record):
    """One listed memory: exactly one of ``claim`` and ``capture`` is set."""

    memory: MemoryRef = Field(description="What it is (claim or source) and its id.")
    recorded_at: int = Field(
        description=f"When it was recorded ({_EPOCH}); the list is newest first."
    )
    claim: ListedClaim | None = Field(description="The claim, when memory.kind is claim.")
    capture: ListedCapture | None = Field(description="The capture, when memory.kind is source.")
    evidence_ids: list[str] = Field(
        description="The live evidence it cites (for a claim: its supporting evidence)."
    )


class MemoriesPage(_Record):
    """One page of ``memories``."""

    items: list[MemoryListItem] = Field(description="Newest recorded first, then by id.")
    next_cursor: str | None = Field(
        description="Pass as cursor to read the next page; null when this page is the last."
    )


class HistoryRequest(ScopedRequest):
    """The whole supersession chain of a claim."""

    claim_id: Text = Field(
        description="Any claim id of the chain: the first version, a correction, the current one."
    )
    as_of: AsOf | None = Field(
        default=None,
        description="The chain as it was known at recorded_at (omit: the present): the versions"
        " recorded by then, each as then believed; valid_at is not used (a chain spans every"
        " valid time).",
    )


class HistoryEvidence(_Record):
    """Evidence a claim version cites, with where it came from."""

    evidence_id: str = Field(description="The evidence id.")
    source_id: str = Field(description="The capture the evidence quotes.")
    source_kind: SourceKind = Field(description="Where that capture came from.")
    relation: EvidenceRelation = Field(description="Whether it supports or contradicts the claim.")
    confidence_basis_points: int = Field(description="Confidence of the link, 10000 = certain.")
    quote: str = Field(
        description="The quoted text, cut to 4096 UTF-8 bytes; empty once the capture was"
        " deleted or erased."
    )
    recorded_at: int = Field(description=f"When the evidence was stored ({_EPOCH}).")
    deleted_at: int | None = Field(
        description=f"When its capture was deleted or forgotten ({_EPOCH}), else null."
    )
    erased_at: int | None = Field(
        description=f"When its capture was erased by forget ({_EPOCH}), else null."
    )


class HistoryCorrection(_Record):
    """The correction that superseded one version with the next."""

    superseded_claim_id: str = Field(description="The version that was corrected.")
    claim_id: str = Field(description="The version the correction created.")
    source_id: str = Field(description="The correction's capture (kind user_correction).")
    evidence_id: str = Field(description="The correction's evidence.")
    valid_at: int = Field(description=f"When the new value became true ({_EPOCH}).")
    recorded_at: int = Field(description=f"When the correction was recorded ({_EPOCH}).")


class ClaimVersion(_Record):
    """One version of a claim in its chain."""

    claim: ClaimRecord = Field(description="The version with its valid and recorded intervals.")
    erased_at: int | None = Field(
        description="When forget erased its statement (subject, predicate and value are then"
        f" empty) ({_EPOCH}), else null."
    )
    evidence: list[HistoryEvidence] = Field(
        description="Every evidence linked to it, supporting or contradicting, oldest first."
    )
    corrected_by: HistoryCorrection | None = Field(
        description="The correction that superseded it, if any."
    )


class HistoryEvent(_Record):
    """One dated event of a chain."""

    at: int = Field(description=f"When it was recorded ({_EPOCH}).")
    event: Literal["recorded", "linked", "corrected", "deleted", "retracted", "erased"] = Field(
        description="recorded: a version was stored; linked: evidence was linked to it;"
        " corrected: it was superseded by the next version; deleted: a capture it cites was"
        " deleted; retracted: it lost its last support; erased: forget erased a capture it cites"
        " (and its statement, when nothing else supported it)."
    )
    claim_id: str = Field(description="The version the event concerns.")
    evidence_id: str | None = Field(description="The evidence involved, if any.")
    source_id: str | None = Field(description="The capture involved, if any.")


class ClaimHistory(_Record):
    """A claim's chain, oldest version first, and its events in time order."""

    claim_id: str = Field(description="The id that was asked about.")
    current_claim_id: str | None = Field(
        description="The chain's current (accepted, open) version, or null when none is."
    )
    versions: list[ClaimVersion] = Field(description="Every version, oldest first.")
    events: list[HistoryEvent] = Field(description="What happened to the chain, in time order.")


class ForgetRequest(ScopedRequest):
    """Irreversibly erase a capture and everything derived only from it."""

    source_id: Text = Field(description="The capture (source) to forget; live or deleted.")
    erased_at: Timestamp = Field(
        description="When it is forgotten; also its deletion time when it is still live"
        f" ({_EPOCH})."
    )


class ForgetResult(_Record):
    """What ``forget`` erased (a repeated forget answers the first one's result)."""

    source_id: str = Field(description="The forgotten capture.")
    erased_at: int = Field(description=f"When it was erased ({_EPOCH}).")
    evidence_ids: list[str] = Field(description="Evidence whose quote and locator were erased.")
    claim_ids: list[str] = Field(
        description="Claims that lost all support and whose statements were erased."
    )
    profile_entry_ids: list[str] = Field(
        description="Profile entries of those claims: removed, their past values erased."
    )
    daily_review_ids: list[str] = Field(
        description="Daily reviews that cited only erased evidence: their text erased."
    )


class ErasureRecord(_Record):
    """The export feed's ``erasure`` record (an addition): what a replica must erase too.

    Each list names rows the replica holds from earlier records; it blanks their text exactly as
    the upstream did (see docs/erasure.md) and rewrites its own earlier feed records the same way.
    """

    tenant_id: str = Field(description=_TENANT)
    person_id: str = Field(description=_PERSON)
    source_id: str = Field(description="The forgotten source: its content is erased.")
    erased_at: int = Field(description=_at("When it was forgotten"))
    evidence_ids: list[str] = Field(description="Evidence whose quote and locator are erased.")
    claim_ids: list[str] = Field(
        description="Claims whose subject, predicate and value are erased."
    )
    profile_entry_ids: list[str] = Field(
        description="Profile entries removed, their key and value erased from past records."
    )
    daily_review_ids: list[str] = Field(
        description="Daily reviews removed, their summary erased from past records."
    )
