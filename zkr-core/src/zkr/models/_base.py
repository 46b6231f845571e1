"""The pieces every model shares: strict integer and text types, shared field descriptions,
the request and record bases, scope and references.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from zkr.enums import (
    I64_MAX,
    I64_MIN,
    ClaimKind,
    MemoryKind,
    SourceKind,
    TargetKind,
)

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


#: The ``limit`` of a listing request (each one's default is 10).
PageLimit = Annotated[Limit, Field(description=_LIMIT)]


def _at(what: str) -> str:
    """The description of a timestamp field: what it marks, and its unit."""
    return f"{what} ({_EPOCH})."


# Fields that many models share, typed and described once. A field keeps its place in its own
# model (unlike a base class's fields, which pydantic puts first), so every record's JSON key
# order stays the contract's.
TenantId = Annotated[Text, Field(description=_TENANT)]
PersonId = Annotated[Text, Field(description=_PERSON)]
#: An embedding lane: the model and its version.
LaneModel = Annotated[Text, Field(description="The embedding model of the lane.")]
LaneVersion = Annotated[Text, Field(description="The model version of the lane.")]
#: A record's id in a reference (:class:`TargetRef`, :class:`MemoryRef`).
RecordId = Annotated[Text, Field(description="The record's id.")]
#: A claim's statement, as stored and as listed live.
StatementSubject = Annotated[Text, Field(description="Who or what it is about.")]
StatementPredicate = Annotated[Text, Field(description="The property or relation.")]
StatementValue = Annotated[Text, Field(description="The asserted value.")]
StatementKind = Annotated[ClaimKind, Field(description="What kind of assertion.")]
#: A capture (source): where it came from and its text.
CaptureKind = Annotated[SourceKind, Field(description="Where the capture came from.")]
CapturedText = Annotated[Text, Field(description="The captured text.")]
#: A daily review's id and the evidence it cites.
ReviewId = Annotated[Text, Field(description="The review's id.")]
ReviewEvidence = Annotated[list[Text], Field(description="The evidence it cites.")]
#: A page's cursor for the next one (``scopes``, ``memories``).
NextCursor = Annotated[
    str | None,
    Field(description="Pass as cursor to read the next page; null when this page is the last."),
]


# ``defer_build``: a model's validator is built the first time it is used, not at import, so a
# one-shot command pays only for the few models it touches (start-up time, issue 14).
class _Request(BaseModel):
    """Requests ignore unknown fields (the contract's rule for every command but ``profile``)."""

    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True, defer_build=True)


class ScopedRequest(_Request):
    """A request inside one (tenant, person) scope; another scope's records look missing."""

    tenant_id: TenantId
    person_id: PersonId


class ScopedRecord(_Record):
    """A record of one (tenant, person) scope that opens with its scope (the export payload's key
    order: pydantic puts a base's fields first)."""

    tenant_id: TenantId
    person_id: PersonId


class TargetRef(_Request):
    """A reference to one record: ``{"kind": "source"|"evidence"|"claim", "id": ...}``."""

    kind: TargetKind = Field(description="The kind of record.")
    id: RecordId


class MemoryRef(_Record):
    """A reference to one record of memory: its kind and id."""

    kind: MemoryKind = Field(description="The kind of record.")
    id: RecordId


class TimeRange(_Record):
    """A half-open interval ``[from, until)``; ``until`` null means still open."""

    from_: I64 = Field(alias="from", description=_at("Start, included"))
    until: I64 | None = Field(description=_at("End, excluded; null while the interval is open"))
