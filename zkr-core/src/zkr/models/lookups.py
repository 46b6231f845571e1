"""Host look-ups (an addition): what a host needs to know about a scope without touching the
schema: sequence, live claims, captures, scopes.
"""

from __future__ import annotations

from pydantic import Field

from zkr.models._base import (
    CapturedText,
    CaptureKind,
    NextCursor,
    PageLimit,
    PersonId,
    ScopedRequest,
    StatementKind,
    StatementPredicate,
    StatementSubject,
    StatementValue,
    TenantId,
    Text,
    _at,
    _Record,
    _Request,
)

__all__ = [
    "Capture",
    "CapturesRequest",
    "ClaimsRequest",
    "LiveClaim",
    "ScopeEntry",
    "ScopesPage",
    "ScopesRequest",
    "SequenceRequest",
    "SequenceResult",
]


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
    limit: PageLimit = 10


class LiveClaim(_Record):
    """A live claim and the live sources whose evidence supports it."""

    id: str = Field(description="The claim's id.")
    subject: StatementSubject
    predicate: StatementPredicate
    value: StatementValue
    kind: StatementKind
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
    limit: PageLimit = 10


class Capture(_Record):
    """A live capture: the source and the evidence that quotes it."""

    source_id: str = Field(description="The source's id.")
    evidence_id: str = Field(description="The evidence quoting it (cite this).")
    kind: CaptureKind
    text: CapturedText
    captured_at: int = Field(description=_at("When it was observed"))
    recorded_at: int = Field(description=_at("When it was recorded"))


class ScopesRequest(_Request):
    """List the persons of one tenant (the scopes that hold or held memory), one page."""

    tenant_id: TenantId
    limit: PageLimit = 10
    cursor: Text | None = Field(
        default=None,
        description="The next_cursor of the previous page (opaque); omitted or null for the first"
        " page.",
    )


class ScopeEntry(_Record):
    """One scope of the tenant."""

    person_id: PersonId


class ScopesPage(_Record):
    """One page of ``scopes``."""

    items: list[ScopeEntry] = Field(description="The persons, in ascending order of person_id.")
    next_cursor: NextCursor
