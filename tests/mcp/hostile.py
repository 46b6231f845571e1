"""A generator of bad tool calls, from nothing but a tool's input schema and some foreign ids.

Every call it makes is invalid by construction, whatever the rest of the arguments hold: a value
of a type the schema does not allow, a required field left out, the scope smuggled in as an
argument, a field the tool does not have, a string past the contract's request size, an integer
out of its range, or an id that is unknown or belongs to another scope (on an otherwise valid
call). Lone surrogates and NaN cannot pass through the SDK's client; ``test_raw_stdio`` sends them
as raw JSON-RPC.
"""

from __future__ import annotations

import copy
import random
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from zkr.models import MemoryKind

__all__ = ["BadCall", "bad_calls", "valid_arguments"]

RECORD_KINDS = frozenset(kind.value for kind in MemoryKind)
HUGE = 1_100_000  # over the contract's 1 MiB request limit
JSON_TYPES = ("string", "integer", "number", "boolean", "null", "array", "object")
SAMPLES: dict[str, list[Any]] = {
    "string": ["x", "", "\u00e9t\u00e9", "0" * 64],
    "integer": [0, 1, -1, 2**40],
    # No NaN or Infinity: JSON cannot carry them, and the SDK's client sends them as null.
    "number": [1.5, -0.25, 1e300],
    "boolean": [True, False],
    "null": [None],
    "array": [[], ["x"], [1, 2]],
    "object": [{}, {"k": "v"}],
}


@dataclass(frozen=True)
class BadCall:
    kind: str
    arguments: dict[str, Any]


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        schema = root["$defs"][name]
    return schema


def _options(schema: dict[str, Any], root: dict[str, Any]) -> list[dict[str, Any]]:
    schema = _resolve(schema, root)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return [opt for sub in schema[key] for opt in _options(sub, root)]
    return [schema]


def _allowed_types(schema: dict[str, Any], root: dict[str, Any]) -> set[str]:
    allowed: set[str] = set()
    for option in _options(schema, root):
        kind = option.get("type")
        if isinstance(kind, list):
            allowed.update(kind)
        elif kind is not None:
            allowed.add(kind)
        elif "enum" in option or "const" in option:
            values = option.get("enum", [option.get("const")])
            allowed.update(_json_type(value) for value in values)
        else:
            allowed.update(JSON_TYPES)  # unconstrained: no wrong type exists
    if "number" in allowed:
        allowed.add("integer")
    return allowed


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def valid_arguments(schema: dict[str, Any], root: dict[str, Any] | None = None) -> Any:
    """A type-correct instance with every required property (values are not meaningful)."""
    root = schema if root is None else root
    option = next(
        (o for o in _options(schema, root) if o.get("type") != "null"), _options(schema, root)[0]
    )
    if "enum" in option:
        return option["enum"][0]
    if "const" in option:
        return option["const"]
    if "default" in option and option.get("type") != "object":
        return option["default"]
    kind = option.get("type")
    if kind == "object":
        properties = option.get("properties", {})
        return {
            name: valid_arguments(properties[name], root)
            for name in option.get("required", [])
            if name in properties
        }
    if kind == "array":
        return []
    if kind == "integer":
        return max(int(option.get("minimum", 1)), 1)
    if kind == "number":
        return 1.0
    if kind == "boolean":
        return True
    return "x"


def _paths(
    schema: dict[str, Any], root: dict[str, Any], prefix: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], dict[str, Any], bool]]:
    """Every property path with its schema and whether it is required (objects recursed)."""
    for option in _options(schema, root):
        if option.get("type") != "object":
            continue
        required = set(option.get("required", []))
        for name, sub in option.get("properties", {}).items():
            path = (*prefix, name)
            yield path, sub, name in required
            yield from _paths(sub, root, path)


def _set(arguments: dict[str, Any], path: tuple[str, ...], value: Any, root: dict[str, Any],
         schema: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    """A copy of *arguments* with *path* set, creating parent objects as valid instances."""
    result = copy.deepcopy(arguments)
    node = result
    node_schema = schema
    for name in path[:-1]:
        sub = next(
            o["properties"][name]
            for o in _options(node_schema, root)
            if o.get("type") == "object" and name in o.get("properties", {})
        )
        if not isinstance(node.get(name), dict):
            node[name] = valid_arguments(sub, root)
        node = node[name]
        node_schema = sub
    node[path[-1]] = value
    return result


def _drop(arguments: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any] | None:
    result = copy.deepcopy(arguments)
    node = result
    for name in path[:-1]:
        if not isinstance(node.get(name), dict):
            return None
        node = node[name]
    if path[-1] not in node:
        return None
    del node[path[-1]]
    return result


def bad_calls(
    schema: dict[str, Any],
    foreign_ids: list[str],
    count: int,
    seed: int,
    host_filled: frozenset[tuple[str, ...]] = frozenset(),
) -> list[BadCall]:
    """*count* invalid calls for a tool with input *schema*.

    :param foreign_ids: ids of records in another scope of the same database.
    :param host_filled: paths the host fills when left out, where null also means "left out".
    """
    rng = random.Random(seed)
    base: dict[str, Any] = valid_arguments(schema)
    paths = list(_paths(schema, schema))
    strings = [(p, s) for p, s, _ in paths if "string" in _allowed_types(s, schema)]
    integers = [(p, s) for p, s, _ in paths if "integer" in _allowed_types(s, schema)]
    required = [p for p, _, req in paths if req]
    # References to records (claim_id, source_id, target.id), not names that merely end in
    # "_id" (a transcript locator's device_id).
    ids = [p for p, _ in strings if p[-1] == "id" or p[-1].removesuffix("_id") in RECORD_KINDS]

    def wrong_type() -> BadCall | None:
        path, sub, _ = rng.choice(paths)
        allowed = _allowed_types(sub, schema) | ({"null"} if path in host_filled else set())
        wrong = [t for t in JSON_TYPES if t not in allowed]
        if not wrong:
            return None
        value = rng.choice(SAMPLES[rng.choice(wrong)])
        return BadCall("wrong_type", _set(base, path, value, schema, schema))

    def missing() -> BadCall | None:
        if not required:
            return None
        dropped = _drop(base, rng.choice(required))
        return None if dropped is None else BadCall("missing", dropped)

    def scope() -> BadCall:
        field = rng.choice(["tenant_id", "person_id"])
        return BadCall("scope", {**base, field: rng.choice(["other", "", "tenant-b"])})

    def unknown_field() -> BadCall:
        name = rng.choice(["zz_extra", "tenant", "scope", "__proto__", "limit_"])
        return BadCall("unknown_field", {**base, name: rng.choice(SAMPLES["string"])})

    def huge() -> BadCall:
        text = rng.choice(["a", "\u00e9", "\U0001f600", " "]) * HUGE
        if strings:
            path, _ = rng.choice(strings)
            return BadCall("huge", _set(base, path, text, schema, schema))
        return BadCall("huge", {**base, "padding": text})

    def out_of_range() -> BadCall | None:
        if not integers:
            return None
        path, sub = rng.choice(integers)
        options = [o for o in _options(sub, schema) if o.get("type") == "integer"]
        low = min((o.get("minimum", -(2**63)) for o in options), default=-(2**63))
        high = max((o.get("maximum", 2**63 - 1) for o in options), default=2**63 - 1)
        value = rng.choice([low - 1, high + 1, high * 4 + 7, low - 2**70])
        return BadCall("out_of_range", _set(base, path, value, schema, schema))

    def unknown_id() -> BadCall | None:
        if not ids:
            return None
        args = base
        for path in ids:  # every id unknown, so no valid id can make the call succeed
            args = _set(args, path, uuid.UUID(int=rng.getrandbits(128)).hex, schema, schema)
        return BadCall("unknown_id", args)

    def foreign_id() -> BadCall | None:
        if not ids or not foreign_ids:
            return None
        args = base
        for path in ids:
            args = _set(args, path, rng.choice(foreign_ids), schema, schema)
        return BadCall("foreign_id", args)

    makers: list[Callable[[], BadCall | None]] = [
        wrong_type, missing, scope, unknown_field, huge, out_of_range, unknown_id, foreign_id,
    ]  # fmt: skip
    # Huge strings cost a megabyte each: keep them to about one call in sixteen.
    weights = [4, 2, 2, 1, 1, 2, 2, 2]
    calls: list[BadCall] = []
    attempts = 0
    while len(calls) < count:
        attempts += 1
        assert attempts < count * 50, "the schema leaves too few ways to be wrong"
        made = rng.choices(makers, weights)[0]()
        if made is not None:
            calls.append(made)
    return calls
