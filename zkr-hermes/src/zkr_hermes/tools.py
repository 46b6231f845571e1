"""The tools the provider shows the model: static schemas and argument checking.

The schemas are plain data, valid before ``initialize`` (Hermes asks for them first and drops a
provider whose schemas raise). Arguments are checked here and turned into zkr requests; the scope
is never taken from the model: the provider sets ``tenant_id``/``person_id`` itself.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from zkr.models import ClaimKind, SourceKind

__all__ = [
    "TOOL_NAMES",
    "ToolArgumentError",
    "correct_request",
    "delete_request",
    "reflect_request",
    "search_request",
    "store_request",
    "suggest_turns",
    "tool_schemas",
]

SEARCH, STORE, CORRECT, DELETE, REFLECT, SUGGEST = (
    "zkr_search",
    "zkr_store",
    "zkr_correct",
    "zkr_delete",
    "zkr_reflect",
    "zkr_suggest",
)
TOOL_NAMES = (SEARCH, STORE, CORRECT, DELETE, REFLECT, SUGGEST)

MAX_SEARCH_LIMIT = 50
MAX_SUGGEST_TURNS = 10

_TIME = {"type": "integer", "description": "Unix seconds."}


def _time(description: str) -> dict[str, Any]:
    return {"type": "integer", "description": f"{description} Unix seconds."}


_SCHEMAS: list[dict[str, Any]] = [
    {
        "name": SEARCH,
        "description": (
            "Search the user's long-term zkr memory. Returns cited items: each has an excerpt and "
            "the evidence ids that support it. Use it before answering questions about the user."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for."},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_LIMIT},
                "as_of": {
                    "type": "object",
                    "description": "Search history: what was true at valid_at, as known at "
                    "recorded_at.",
                    "properties": {"valid_at": _TIME, "recorded_at": _TIME},
                    "required": ["valid_at", "recorded_at"],
                    "additionalProperties": False,
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    },
    {
        "name": STORE,
        "description": (
            "Store a durable fact, preference, decision or event as cited memory. Give subject, "
            "predicate and value to record a typed claim that can later be corrected; without "
            "them only the capture itself is stored. Times are kept apart: captured_at (when it "
            "was observed), valid_from (when it became true), recorded_at (when it is recorded)."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "content": {"type": "string", "description": "The text to remember, verbatim."},
                "subject": {"type": "string", "description": "Claim subject (default 'user')."},
                "predicate": {"type": "string", "description": "Claim predicate, e.g. 'employer'."},
                "value": {"type": "string", "description": "Claim value (default: content)."},
                "claim_kind": {"type": "string", "enum": [k.value for k in ClaimKind]},
                "source_kind": {"type": "string", "enum": [k.value for k in SourceKind]},
                "captured_at": _time("When the content was observed (default now)."),
                "valid_from": _time("When the claim became true (default captured_at)."),
                "recorded_at": _time("When this is recorded (default now)."),
            },
            "required": ["content"],
            "additionalProperties": False,
        },
    },
    {
        "name": CORRECT,
        "description": (
            "Correct a stored claim: the old value is kept as history and a new value supersedes "
            "it, cited by the correction text. Use this instead of storing a contradicting fact."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "claim_id": {"type": "string", "description": "The claim to supersede."},
                "content": {"type": "string", "description": "Why: the correction as evidence."},
                "value": {"type": "string", "description": "The new value."},
                "valid_at": _time("When the new value became true (default now)."),
                "recorded_at": _time("When the correction is recorded (default now)."),
            },
            "required": ["claim_id", "content", "value"],
            "additionalProperties": False,
        },
    },
    {
        "name": DELETE,
        "description": (
            "Delete a stored source (for example at the user's request). Its evidence is "
            "tombstoned and claims that lose their last support are retracted."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "source_id": {"type": "string"},
                "deleted_at": _time("Deletion time (default now)."),
            },
            "required": ["source_id"],
            "additionalProperties": False,
        },
    },
    {
        "name": REFLECT,
        "description": (
            "Store your cited review of a day: a short summary that cites the evidence ids it "
            "rests on (ids come from zkr_search results)."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "day": {"type": "string", "description": "The day reviewed, e.g. 2026-05-01."},
                "summary": {"type": "string"},
                "evidence_ids": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "recorded_at": _time("When the review is recorded (default now)."),
            },
            "required": ["day", "summary", "evidence_ids"],
            "additionalProperties": False,
        },
    },
    {
        "name": SUGGEST,
        "description": (
            "Propose claims found in the most recent conversation turns, each with the evidence "
            "id of the turn it comes from. Nothing is stored: keep a suggestion by calling "
            "zkr_store (or zkr_correct for a changed value)."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "turns": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_SUGGEST_TURNS,
                    "description": "How many recent turns to read (default 3).",
                }
            },
            "additionalProperties": False,
        },
    },
]


def tool_schemas() -> list[dict[str, Any]]:
    """Fresh copies of the six OpenAI function schemas (callers may mutate them)."""
    return copy.deepcopy(_SCHEMAS)


class ToolArgumentError(ValueError):
    """The model's arguments do not fit the tool; the message is shown to the model."""


def _absent(args: dict[str, Any], key: str) -> bool:
    return args.get(key) is None


def _text(args: dict[str, Any], key: str, *, required: bool = False) -> str | None:
    value = args.get(key)
    if value is None:
        if required:
            raise ToolArgumentError(f"{key} is required")
        return None
    if not isinstance(value, str):
        raise ToolArgumentError(f"{key} must be a string")
    return value


def _integer(args: dict[str, Any], key: str) -> int | None:
    value = args.get(key)
    if value is None:
        return None
    # Models sometimes send numbers as strings or as 1.7e9; accept exact integers only.
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise ToolArgumentError(f"{key} must be an integer")


def search_request(args: dict[str, Any]) -> dict[str, Any]:
    request: dict[str, Any] = {"query": _text(args, "query", required=True)}
    limit = _integer(args, "limit")
    if limit is not None:
        if not 1 <= limit <= MAX_SEARCH_LIMIT:
            raise ToolArgumentError(f"limit must be between 1 and {MAX_SEARCH_LIMIT}")
        request["limit"] = limit
    as_of = args.get("as_of")
    if as_of is not None:
        if not isinstance(as_of, dict):
            raise ToolArgumentError("as_of must be an object with valid_at and recorded_at")
        valid_at, recorded_at = _integer(as_of, "valid_at"), _integer(as_of, "recorded_at")
        if valid_at is None or recorded_at is None:
            raise ToolArgumentError("as_of needs both valid_at and recorded_at")
        request["as_of"] = {"valid_at": valid_at, "recorded_at": recorded_at}
    return request


_CLAIM_KEYS = ("subject", "predicate", "value", "claim_kind", "valid_from")


def store_request(args: dict[str, Any], now: int) -> dict[str, Any]:
    """A ``remember`` request; a claim only when a claim field was given."""
    content = _text(args, "content", required=True)
    captured_at = _integer(args, "captured_at")
    captured_at = now if captured_at is None else captured_at
    recorded_at = _integer(args, "recorded_at")
    request: dict[str, Any] = {
        "kind": _text(args, "source_kind") or SourceKind.conversation.value,
        "text": content,
        "captured_at": captured_at,
        "recorded_at": now if recorded_at is None else recorded_at,
        "claim": None,
    }
    if any(not _absent(args, key) for key in _CLAIM_KEYS):
        valid_from = _integer(args, "valid_from")
        request["claim"] = {
            "subject": _text(args, "subject") or "user",
            "predicate": _text(args, "predicate") or "remembers",
            "value": _text(args, "value") or content,
            "kind": _text(args, "claim_kind") or ClaimKind.fact.value,
            "valid_from": captured_at if valid_from is None else valid_from,
        }
    return request


def correct_request(args: dict[str, Any], valid_at: int, recorded_at: int) -> dict[str, Any]:
    """A ``correct`` request; *valid_at*/*recorded_at* are the defaults for absent times."""
    explicit_valid, explicit_recorded = _integer(args, "valid_at"), _integer(args, "recorded_at")
    return {
        "claim_id": _text(args, "claim_id", required=True),
        "text": _text(args, "content", required=True),
        "value": _text(args, "value", required=True),
        "valid_at": valid_at if explicit_valid is None else explicit_valid,
        "recorded_at": recorded_at if explicit_recorded is None else explicit_recorded,
    }


def delete_request(args: dict[str, Any], deleted_at: int) -> dict[str, Any]:
    explicit = _integer(args, "deleted_at")
    return {
        "source_id": _text(args, "source_id", required=True),
        "deleted_at": deleted_at if explicit is None else explicit,
    }


def reflect_request(args: dict[str, Any], now: int) -> dict[str, Any]:
    """A ``review`` request: the agent's cited review of a day."""
    evidence_ids = args.get("evidence_ids")
    if evidence_ids is None:
        raise ToolArgumentError("evidence_ids is required")
    if not isinstance(evidence_ids, list) or not all(isinstance(i, str) for i in evidence_ids):
        raise ToolArgumentError("evidence_ids must be an array of strings")
    recorded_at = _integer(args, "recorded_at")
    return {
        "day": _text(args, "day", required=True),
        "summary": _text(args, "summary", required=True),
        "evidence_ids": list(evidence_ids),
        "recorded_at": now if recorded_at is None else recorded_at,
    }


def suggest_turns(args: dict[str, Any]) -> int:
    turns = _integer(args, "turns")
    if turns is None:
        return 3
    if not 1 <= turns <= MAX_SUGGEST_TURNS:
        raise ToolArgumentError(f"turns must be between 1 and {MAX_SUGGEST_TURNS}")
    return turns


def needs_time(args: dict[str, Any], *keys: str) -> bool:
    """True when one of *keys* was left to its default."""
    return any(_absent(args, key) for key in keys)
