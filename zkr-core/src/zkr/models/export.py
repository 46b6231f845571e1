"""Export records (§7.3; field order here is the stored payload's key order), export pages, and
applying them to another database (an addition).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, StrictBool

from zkr.enums import (
    ClaimStatus,
    EvidenceRelation,
)
from zkr.models._base import (
    I64,
    U16,
    U32,
    CapturedText,
    CaptureKind,
    Count,
    FeedSequence,
    Index,
    MemoryRef,
    PersonId,
    ReviewEvidence,
    ReviewId,
    ScopedRecord,
    ScopedRequest,
    StatementKind,
    StatementPredicate,
    StatementSubject,
    StatementValue,
    TenantId,
    Text,
    TimeRange,
    _at,
    _Record,
)
from zkr.models.requests import (
    LocatorInput,
)
from zkr.models.responses import (
    ProfileEntry,
)

__all__ = [
    "ApplyRequest",
    "ApplyResult",
    "ClaimEvidenceRecord",
    "ClaimRecord",
    "CorrectionRecord",
    "DailyReviewRecord",
    "DeletionRecord",
    "EvidenceBody",
    "EvidenceRecord",
    "ExportCommit",
    "ExportPage",
    "ProfileRecord",
    "SourceBody",
    "SourceRecord",
]


class SourceBody(_Record):
    """A source: a raw observation, stored verbatim."""

    id: Text = Field(description="The source's id.")
    tenant_id: TenantId
    person_id: PersonId
    revision: I64 = Field(description="1, or 2 once deleted.")
    kind: CaptureKind
    content: CapturedText
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
    tenant_id: TenantId
    person_id: PersonId
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
    tenant_id: TenantId
    person_id: PersonId
    subject: StatementSubject
    predicate: StatementPredicate
    value: StatementValue
    kind: StatementKind
    valid_time: TimeRange = Field(description="When it was true in the world.")
    recorded_time: TimeRange = Field(description="When memory believed it.")
    status: ClaimStatus = Field(description="Accepted, superseded or retracted.")


class ClaimEvidenceRecord(ScopedRecord):
    """A link between a claim and an evidence quote."""

    claim_id: Text = Field(description="The claim.")
    evidence_id: Text = Field(description="The evidence.")
    relation: EvidenceRelation = Field(description="Supports or contradicts.")
    confidence_basis_points: U16 = Field(description="Confidence, 0..10000.")


class CorrectionRecord(ScopedRecord):
    """A correction: which claim replaced which, and the capture that said so."""

    superseded_claim_id: Text = Field(description="The claim replaced.")
    claim_id: Text = Field(description="The replacement claim.")
    source_id: Text = Field(description="The source holding the correction text.")
    evidence_id: Text = Field(description="The evidence quoting it.")
    valid_at: I64 = Field(description=_at("When the new value became true"))
    recorded_at: I64 = Field(description=_at("When the correction was recorded"))


class DeletionRecord(ScopedRecord):
    """A removal: a tombstoned source or evidence, or a dropped profile entry or review."""

    target: MemoryRef = Field(description="What was removed.")
    deleted_at: I64 = Field(description=_at("When it was removed"))


class ProfileRecord(ProfileEntry):
    """A profile entry as the commit feed carries it."""


class DailyReviewRecord(_Record):
    """A daily review as the commit feed carries it."""

    id: ReviewId
    tenant_id: TenantId
    person_id: PersonId
    day: Text = Field(description="The day reviewed.")
    summary: Text = Field(description="The review's text.")
    evidence_ids: ReviewEvidence
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
