"""A person's view of their memory (additions): memories, a claim's history, forget and its
erasure record.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from zkr.enums import (
    ClaimKind,
    ClaimStatus,
    EvidenceRelation,
    SourceKind,
)
from zkr.models._base import (
    _EPOCH,
    CaptureKind,
    MemoryRef,
    NextCursor,
    PageLimit,
    ScopedRecord,
    ScopedRequest,
    Text,
    TimeRange,
    Timestamp,
    _at,
    _Record,
)
from zkr.models.export import (
    ClaimRecord,
)
from zkr.models.requests import (
    AsOf,
)

__all__ = [
    "ClaimHistory",
    "ClaimVersion",
    "ErasureRecord",
    "ForgetRequest",
    "ForgetResult",
    "HistoryCorrection",
    "HistoryEvent",
    "HistoryEvidence",
    "HistoryRequest",
    "ListedCapture",
    "ListedClaim",
    "MemoriesPage",
    "MemoriesRequest",
    "MemoryListItem",
]


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
    limit: PageLimit = 10
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
    kind: CaptureKind
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
    next_cursor: NextCursor


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


class ErasureRecord(ScopedRecord):
    """The export feed's ``erasure`` record (an addition): what a replica must erase too.

    Each list names rows the replica holds from earlier records; it blanks their text exactly as
    the upstream did (see docs/erasure.md) and rewrites its own earlier feed records the same way.
    """

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
