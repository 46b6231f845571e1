"""The operation table: command name -> request model -> ``MemoryDb`` method -> JSON result.

Defined once and used by the CLI, ``serve``, the Hermes provider and the OpenClaw bridge, so that a
request shape, its validation and its error messages exist in exactly one place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from zkr import models as m
from zkr.db import MemoryDb
from zkr.errors import RequestParseError
from zkr.jsonio import parse_request

__all__ = ["OPERATIONS", "Operation", "describe_validation_error", "parse", "run", "to_json"]

#: The contract's request size limit (stdin of one command, one line of ``serve``).
MAX_REQUEST_BYTES = 1_048_576


@dataclass(frozen=True)
class Operation:
    """One command of the contract."""

    name: str
    request: type[BaseModel]
    method: str
    summary: str

    def call(self, db: MemoryDb, request: BaseModel) -> Any:
        bound: Callable[[BaseModel], Any] = getattr(db, self.method)
        return bound(request)


_TABLE = (
    Operation("remember", m.RememberRequest, "remember", "store a cited capture, optional claim"),
    Operation("locator", m.LocatorRequest, "locator", "read an evidence transcript locator"),
    Operation("search", m.SearchRequest, "search", "retrieve a bounded cited memory pack"),
    Operation("get", m.GetRequest, "get", "read one live cited memory"),
    Operation("correct", m.CorrectRequest, "correct", "supersede a claim with cited evidence"),
    Operation("link", m.LinkRequest, "link", "attach supporting or contradicting evidence"),
    Operation("delete", m.DeleteRequest, "delete", "tombstone a source and propagate"),
    Operation("profile", m.ProfileRequest, "profile", "project a live profile_fact claim"),
    Operation("profiles", m.ProfilesRequest, "profiles", "list current profile entries"),
    Operation("review", m.ReviewRequest, "review", "store a cited daily review"),
    Operation("reviews", m.ReviewsRequest, "reviews", "list daily reviews"),
    Operation("projections", m.ProjectionsRequest, "projections", "list stale or missing vectors"),
    Operation("embed", m.EmbedRequest, "embed", "store a validated embedding"),
    Operation("export", m.ExportRequest, "export", "read a frozen scoped commit page"),
    Operation("apply", m.ApplyRequest, "apply", "apply an exported page from another database"),
    Operation("rebuild", m.RebuildRequest, "rebuild", "embed stale or missing work with a plugin"),
)

#: Contract commands in help order.
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
    if kind in ("enum", "literal_error"):
        expected = error.get("ctx", {}).get("expected", "")
        return f"unknown variant `{error['input']}`, expected {expected} (field `{location}`)"
    return f"invalid value for `{location}`: {error['msg']}"


def validate(operation: Operation, payload: Any) -> BaseModel:
    """Check a decoded request against the operation's model.

    :raises RequestParseError: not an object of that shape.
    """
    if not isinstance(payload, dict):
        raise RequestParseError(
            f"invalid type: expected a JSON object for `{operation.name}` request"
        )
    try:
        return operation.request.model_validate(payload)
    except ValidationError as exc:
        raise RequestParseError(describe_validation_error(exc)) from None


def parse(operation: Operation, raw: bytes | str) -> BaseModel:
    """Size-check, decode and validate one raw request (contract §2.2 order)."""
    size = len(raw.encode("utf-8")) if isinstance(raw, str) else len(raw)
    if size > MAX_REQUEST_BYTES:
        from zkr.errors import LimitExceeded

        raise LimitExceeded(f"request exceeds {MAX_REQUEST_BYTES} bytes")
    return validate(operation, parse_request(raw))


def to_json(result: Any) -> Any:
    """A result (model, list of models or None) as plain JSON data."""
    if isinstance(result, BaseModel):
        return result.model_dump(mode="json", by_alias=True)
    if isinstance(result, list):
        return [to_json(item) for item in result]
    return result


def run(db: MemoryDb, name: str, payload: Any) -> Any:
    """Validate *payload* (decoded JSON) for command *name*, run it, return plain JSON data.

    :raises KeyError: no such command (callers render the contract's ``unknown command``).
    """
    operation = OPERATIONS[name]
    return to_json(operation.call(db, validate(operation, payload)))
