"""The operation table: the one definition of every operation zkr offers.

Each row names an operation, its handler (a function ``handler(db, request) -> response``), its
request and response models, a one-line summary and the description a host shows a model, what
the operation does to memory (``effect``) and, when hosts offer it to a model as a tool, how the
tool projects the request (:class:`ToolProjection`). Everything else is generated from this table:
:class:`~zkr.db.MemoryDb`'s operations, the CLI's dispatch and help, ``serve``, the reference part
of ``docs/cli.md`` and the tool lists of every host (:mod:`zkr.tools`).

Adding an operation is one row here, one handler module and its models.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from zkr import models as m
from zkr.embeddings.backlog import projections
from zkr.embeddings.rebuild import rebuild
from zkr.embeddings.storing import embed
from zkr.errors import LimitExceeded, RequestParseError
from zkr.feed.apply import apply
from zkr.feed.export import export
from zkr.jsonio import parse_request
from zkr.retrieval import get, lookups, search
from zkr.retrieval.chains import history
from zkr.retrieval.listing import memories
from zkr.retrieval.scopes import scopes
from zkr.store.database import Database
from zkr.store.known_fields import check_known_fields
from zkr.writes.capture import locator, remember
from zkr.writes.correction import correct
from zkr.writes.deletion import delete
from zkr.writes.forgetting import forget
from zkr.writes.linking import link
from zkr.writes.now_floors import correction_now_floor, deletion_now_floor, erasure_now_floor
from zkr.writes.profiles import profile, profiles, review, reviews

__all__ = [
    "MAX_REQUEST_BYTES",
    "OPERATIONS",
    "Effect",
    "Operation",
    "ToolProjection",
    "describe_validation_error",
    "parse",
    "run",
    "to_json",
    "validate",
]

#: The contract's request size limit (stdin of one command, one line of ``serve``).
MAX_REQUEST_BYTES = 1_048_576

#: What an operation does to memory: reads it, adds to it (nothing is lost), or takes something
#: away (a tombstone, a retraction, an erasure). Hosts map it to their hints (MCP's read-only and
#: destructive annotations, OpenClaw's read-only calls).
Effect = Literal["read", "write", "destructive"]

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class ToolProjection:
    """How hosts offer an operation to a model as a tool.

    The host always fills ``tenant_id`` and ``person_id`` (a model never chooses the scope); the
    other fields of the request are the tool's arguments, except that:

    * ``now_fields`` (dotted paths into the request) are optional for the model and filled with
      the host's "now" (seconds since the epoch) when it leaves them out;
    * ``defaults`` are optional for the model and filled with these values when left out;
    * ``limits`` cap integer arguments lower than the request model does (models ask for a lot);
    * ``now_floor(db, payload)``, when given, returns for some ``now_fields`` the earliest value
      that still lands after what is stored (a correction "now" in the same second as the claim it
      corrects must still advance its intervals); the host's "now" is raised to it.
    """

    name: str
    now_fields: tuple[str, ...] = ()
    defaults: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    limits: Mapping[str, int] = field(default_factory=lambda: _EMPTY)
    now_floor: Callable[[Database, dict[str, Any]], Mapping[str, int]] | None = None


@dataclass(frozen=True)
class Operation:
    """One operation: its name, handler, request and response shapes and how hosts offer it."""

    name: str
    handler: Callable[[Database, Any], Any]
    request: type[BaseModel]
    response: Any
    summary: str
    description: str
    effect: Effect
    #: Running the same request twice leaves memory as running it once.
    idempotent: bool = False
    tool: ToolProjection | None = None

    def call(self, db: Database, request: BaseModel) -> Any:
        """Run the handler on an already validated request."""
        return self.handler(db, request)


_TABLE = (
    Operation(
        "remember",
        remember,
        m.RememberRequest,
        m.RememberResult,
        "store a cited capture, optional claim",
        "Remember something the person said, showed or did: the text is stored verbatim as a "
        "cited capture. Give a claim (subject, predicate, value, kind) to also record a typed "
        "fact, preference, task or skill that can later be corrected; an ingestion_key makes a "
        "retry a replay instead of a duplicate.",
        "write",
        tool=ToolProjection(
            "zkr_store",
            now_fields=("captured_at", "recorded_at", "claim.valid_from"),
            defaults={"kind": "conversation"},
        ),
    ),
    Operation(
        "locator",
        locator,
        m.LocatorRequest,
        m.LocatorInput | None,
        "read an evidence transcript locator",
        "Read where an evidence quote sits in a transcript (device, stream, segment, "
        "milliseconds), or null when it has none.",
        "read",
        idempotent=True,
    ),
    Operation(
        "search",
        search,
        m.SearchRequest,
        m.RetrievalPack,
        "retrieve a bounded cited memory pack",
        "Search the person's long-term memory. Returns a bounded pack of items, each with an "
        "excerpt and the evidence ids it rests on. Use it before answering anything about the "
        "person; as_of asks what was believed at a past valid time and recorded time.",
        "read",
        idempotent=True,
        tool=ToolProjection("zkr_search", limits={"limit": 50}),
    ),
    Operation(
        "get",
        get,
        m.GetRequest,
        m.RetrievalItem,
        "read one live cited memory",
        "Read one memory (a claim, a source or an evidence quote) by its id, with the evidence "
        "it cites.",
        "read",
        idempotent=True,
        tool=ToolProjection("zkr_get"),
    ),
    Operation(
        "correct",
        correct,
        m.CorrectRequest,
        m.CorrectResult,
        "supersede a claim with cited evidence",
        "Correct a stored claim: the old value is kept as history and a new value supersedes "
        "it, cited by the correction text. Use this instead of storing a contradicting fact. "
        'When the person says something changed ("I moved to Porto in April", "I started at '
        'Globex last week") rather than that it was wrong, pass mode "change" with valid_at at '
        "the change: the old value stays true for the time before it.",
        "write",
        tool=ToolProjection(
            "zkr_correct",
            now_fields=("valid_at", "recorded_at"),
            now_floor=correction_now_floor,
        ),
    ),
    Operation(
        "link",
        link,
        m.LinkRequest,
        m.OkResult,
        "attach supporting or contradicting evidence",
        "Attach an evidence quote to a claim as supporting or contradicting it.",
        "write",
        idempotent=True,
    ),
    Operation(
        "delete",
        delete,
        m.DeleteRequest,
        m.DeleteResult,
        "tombstone a source and propagate",
        "Delete a stored source (for example at the person's request). Its evidence is "
        "tombstoned and claims that lose their last support are retracted; the history of what "
        "was believed is kept.",
        "destructive",
        idempotent=True,
        tool=ToolProjection("zkr_delete", now_fields=("deleted_at",), now_floor=deletion_now_floor),
    ),
    Operation(
        "profile",
        profile,
        m.ProfileRequest,
        m.ProfileEntry,
        "project a live profile_fact claim",
        "Make a live profile_fact claim the current profile entry of its key.",
        "write",
    ),
    Operation(
        "profiles",
        profiles,
        m.ProfilesRequest,
        list[m.ProfileEntry],
        "list current profile entries",
        "List the person's current profile entries, newest first.",
        "read",
        idempotent=True,
    ),
    Operation(
        "review",
        review,
        m.ReviewRequest,
        m.ReviewResult,
        "store a cited daily review",
        "Store a cited review of a day: a short summary citing the evidence ids it rests on "
        "(ids come from search results).",
        "write",
        tool=ToolProjection("zkr_reflect", now_fields=("recorded_at",)),
    ),
    Operation(
        "reviews",
        reviews,
        m.ReviewsRequest,
        list[m.ReviewItem],
        "list daily reviews",
        "List the daily reviews, latest day first.",
        "read",
        idempotent=True,
    ),
    Operation(
        "projections",
        projections,
        m.ProjectionsRequest,
        list[m.ProjectionIssue],
        "list stale or missing vectors",
        "List memories whose vector in an embedding lane is missing or stale.",
        "read",
        idempotent=True,
    ),
    Operation(
        "embed",
        embed,
        m.EmbedRequest,
        m.EmbedResult,
        "store a validated embedding",
        "Store one vector for a live memory after checking its input hash and lane.",
        "write",
        idempotent=True,
    ),
    Operation(
        "export",
        export,
        m.ExportRequest,
        m.ExportPage,
        "read a frozen scoped commit page",
        "Read one bounded page of the scope's commit feed, for replication.",
        "read",
        idempotent=True,
    ),
    Operation(
        "memories",
        memories,
        m.MemoriesRequest,
        m.MemoriesPage,
        "list live claims and captures, paged",
        "List what the memory holds about the person, newest first: live claims (statement, "
        "validity, cited evidence) and captured sources, optionally only some claim kinds or "
        "source kinds. Pass next_cursor back as cursor for the next page; as_of lists what was "
        "held at a past valid time and recorded time.",
        "read",
        idempotent=True,
        tool=ToolProjection("zkr_memories", limits={"limit": 50}),
    ),
    Operation(
        "history",
        history,
        m.HistoryRequest,
        m.ClaimHistory,
        "show a claim's whole correction chain",
        "Show the whole history of a claim from any of its ids: every version with when it was "
        "true and when it was believed, the evidence it cited, the corrections that superseded "
        "it, and the deletions and erasures that retracted it, in time order.",
        "read",
        idempotent=True,
        tool=ToolProjection("zkr_history"),
    ),
    Operation(
        "forget",
        forget,
        m.ForgetRequest,
        m.ForgetResult,
        "irreversibly erase a source and what derives only from it",
        "Forget a stored source for good, when the person asks that something be erased: its "
        "text, its evidence quotes and locators, and the statements of claims that rested only "
        "on it are erased everywhere, keeping only ids, times and the fact of the erasure. This "
        "cannot be undone; use delete to merely retract.",
        "destructive",
        idempotent=True,
        tool=ToolProjection("zkr_forget", now_fields=("erased_at",), now_floor=erasure_now_floor),
    ),
    Operation(
        "apply",
        apply,
        m.ApplyRequest,
        m.ApplyResult,
        "apply an exported page from another database",
        "Apply a page exported by another database, commit by commit, once each.",
        "write",
        idempotent=True,
    ),
    Operation(
        "rebuild",
        rebuild,
        m.RebuildRequest,
        m.RebuildResult,
        "embed stale or missing work with a plugin",
        "Embed the missing or stale memories of a lane with an installed embedder plugin.",
        "write",
        idempotent=True,
    ),
    Operation(
        "sequence",
        lookups.sequence,
        m.SequenceRequest,
        m.SequenceResult,
        "read the scope's newest commit sequence",
        "Read the scope's newest commit sequence: every write appends one, so an unchanged "
        "number means a result read earlier is still current.",
        "read",
        idempotent=True,
    ),
    Operation(
        "claims",
        lookups.claims,
        m.ClaimsRequest,
        list[m.LiveClaim],
        "find live claims by subject, predicate, value",
        "Find live claims by subject, predicate and a fragment of their value, newest first, "
        "each with the live sources supporting it. A page holds at most 1,000,000 bytes of JSON "
        "(fewer claims when their values are large; always at least one).",
        "read",
        idempotent=True,
    ),
    Operation(
        "captures",
        lookups.captures,
        m.CapturesRequest,
        list[m.Capture],
        "list the newest live captures",
        "List the newest live captures (optionally only those whose ingestion key starts with a "
        "prefix), each with the evidence id to cite. A page holds at most 1,000,000 bytes of JSON "
        "(fewer captures when their texts are large; always at least one).",
        "read",
        idempotent=True,
    ),
    # No tool projection: a host serves one person, and a model must never see who else is there.
    Operation(
        "scopes",
        scopes,
        m.ScopesRequest,
        m.ScopesPage,
        "list a tenant's persons, paged",
        "List the persons of one tenant that hold or held memory, in ascending order of person id"
        ", never another tenant's. Pass next_cursor back as cursor for the next page. A page "
        "holds at most 1,000,000 bytes of JSON (always at least one person).",
        "read",
        idempotent=True,
    ),
)

#: Every operation, in help order. (A dict so that a test can add a throwaway operation and see it
#: reach every surface; nothing else mutates it.)
OPERATIONS: dict[str, Operation] = {op.name: op for op in _TABLE}


def describe_validation_error(exc: ValidationError) -> str:
    """Render pydantic's first error in the spirit of the contract's (serde's) messages."""
    error = exc.errors(include_url=False)[0]
    location = ".".join(str(part) for part in error["loc"])
    kind = error["type"]
    if kind == "missing":
        return f"missing field `{location}`"
    if kind == "extra_forbidden":
        return f"unknown field `{location}`"
    if kind == "int_type" and isinstance(error["input"], float):
        # serde_json's wording: a number with a fraction, an exponent, or written -0 is a float.
        return f"invalid type: floating point `{error['input']!r}`, expected an integer" + (
            f" (field `{location}`)"
        )
    if kind in ("enum", "literal_error"):
        expected = error.get("ctx", {}).get("expected", "")
        return f"unknown variant `{error['input']}`, expected {expected} (field `{location}`)"
    return f"invalid value for `{location}`: {error['msg']}"


def validate(operation: Operation, payload: Any) -> BaseModel:
    """Check a decoded request against the operation's model.

    :raises RequestParseError: not an object of that shape.
    """
    if isinstance(payload, operation.request):
        return payload
    if not isinstance(payload, dict):
        raise RequestParseError(
            f"invalid type: expected a JSON object for `{operation.name}` request"
        )
    # The strict JSON rules where the request has fields (a lenient parse left them to us).
    check_known_fields(payload, operation.request)
    try:
        return operation.request.model_validate(payload)
    except ValidationError as exc:
        raise RequestParseError(describe_validation_error(exc)) from None


def parse(operation: Operation, raw: bytes | str) -> BaseModel:
    """Size-check, decode and validate one raw request (contract §2.2 order)."""
    size = len(raw.encode("utf-8")) if isinstance(raw, str) else len(raw)
    if size > MAX_REQUEST_BYTES:
        raise LimitExceeded(f"request exceeds {MAX_REQUEST_BYTES} bytes")
    return validate(operation, parse_request(raw, lenient=True))


def to_json(result: Any) -> Any:
    """A result (model, list of models or None) as plain JSON data."""
    if isinstance(result, BaseModel):
        return result.model_dump(mode="json", by_alias=True)
    if isinstance(result, list):
        return [to_json(item) for item in result]
    return result


def run(db: Database, name: str, payload: Any) -> Any:
    """Validate *payload* (decoded JSON) for operation *name*, run it, return plain JSON data.

    :raises KeyError: no such operation (callers render the contract's ``unknown command``).
    """
    operation = OPERATIONS[name]
    return to_json(operation.call(db, validate(operation, payload)))
