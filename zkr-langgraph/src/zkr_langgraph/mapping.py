"""LangGraph's store shapes <-> zkr's records: the only place this mapping lives.

A LangGraph item is ``(namespace, key) -> value`` with ``value`` a JSON object. A store is bound to
one zkr tenant; the namespace's first label is the person and the rest (the *path*) names the
item's collection inside that person's memory. Each item is one zkr claim:

* scope ``(tenant_id, namespace[0])``;
* subject ``langgraph:`` followed by the path's labels joined with ``/`` (``%`` and ``/`` inside a
  label written ``%25`` and ``%2F``), e.g. ``("ana", "memories", "food")`` -> person ``ana``,
  subject ``langgraph:memories/food``; a namespace of the person alone -> ``langgraph:``;
* predicate: the key, e.g. ``"lunch"``;
* value: the value as compact JSON (``{"likes": "ramen"}``), so its words are searchable (a value
  someone else corrected to plain text reads back as ``{"text": ...}``);
* the first capture of a key carries the ingestion key ``langgraph:["memories","food","lunch"]#1``
  (the path and key as a JSON array, then ``#`` and the incarnation: a deleted key can never be
  reused in zkr, so the key put again after a delete is incarnation 2, and so on).

Pure functions over plain data: no database, no I/O.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

__all__ = [
    "SUBJECT_PREFIX",
    "ingestion_key",
    "key_prefix",
    "matches_filter",
    "matches_namespace",
    "path_of",
    "split_namespace",
    "subject_of",
    "value_json",
    "value_of",
]

#: Every subject this store writes starts with it; other claims of the person are not items.
SUBJECT_PREFIX = "langgraph:"


def split_namespace(namespace: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """``(person_id, path)`` of a namespace: ``("ana", "memories")`` -> ``("ana", ("memories",))``.

    :raises ValueError: an empty namespace (there is no person to read or write).
    """
    if not namespace:
        raise ValueError("zkr-langgraph: a namespace starts with the person it belongs to")
    return namespace[0], tuple(namespace[1:])


def _escape(label: str) -> str:
    return label.replace("%", "%25").replace("/", "%2F")


def _unescape(label: str) -> str:
    return label.replace("%2F", "/").replace("%25", "%")


def subject_of(path: tuple[str, ...]) -> str:
    """The claim subject of a path: ``("memories", "a/b")`` -> ``langgraph:memories/a%2Fb``."""
    return SUBJECT_PREFIX + "/".join(_escape(label) for label in path)


def path_of(subject: str) -> tuple[str, ...] | None:
    """The path a subject written by :func:`subject_of` names; ``None`` for any other subject."""
    if not subject.startswith(SUBJECT_PREFIX):
        return None
    rest = subject[len(SUBJECT_PREFIX) :]
    if not rest:
        return ()
    labels = tuple(_unescape(label) for label in rest.split("/"))
    if any(not label or subject_of(labels) != subject for label in labels):
        return None
    return labels


def key_prefix(path: tuple[str, ...], key: str) -> str:
    """What every incarnation's ingestion key of ``(path, key)`` starts with (and no other's)."""
    return SUBJECT_PREFIX + json.dumps([*path, key], ensure_ascii=False) + "#"


def ingestion_key(path: tuple[str, ...], key: str, incarnation: int) -> str:
    """The ingestion key of the *incarnation*-th life of ``(path, key)`` (1 for the first)."""
    return f"{key_prefix(path, key)}{incarnation}"


def _check_json(value: Any, where: str) -> None:
    """Refuse what JSON would not give back as it was: non-string keys, NaN and infinities."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"zkr-langgraph: {where} is {value!r}, which JSON cannot hold")
    if isinstance(value, Mapping):
        for name, item in value.items():
            if not isinstance(name, str):
                raise ValueError(f"zkr-langgraph: {where} has a key {name!r} that is not a string")
            _check_json(item, f"{where}.{name}")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _check_json(item, f"{where}[{index}]")


def value_json(value: Mapping[str, Any]) -> str:
    """The stored text of a value: compact JSON, key order kept, non-ASCII kept as written.

    Tuples are stored as arrays (read back as lists), as every LangGraph store over JSON does.

    :raises ValueError: not a JSON object of strings, numbers, booleans, null, arrays and objects.
    """
    if not isinstance(value, Mapping):
        raise ValueError(f"zkr-langgraph: a value is a JSON object, not {type(value).__name__}")
    _check_json(value, "value")
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except TypeError as exc:
        raise ValueError(f"zkr-langgraph: the value is not JSON: {exc}") from None


def value_of(text: str) -> dict[str, Any]:
    """The value a stored text holds.

    The store writes JSON objects only; a claim value that is not one was written by someone else:
    a person who corrected the item in zkr-web or with ``zkr correct`` and typed, say, ``Porto``.
    The item stays readable as ``{"text": "Porto"}`` (an empty value, erased by ``forget``, too).
    """
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {"text": text}


def matches_namespace(
    namespace: tuple[str, ...], match_type: str, pattern: tuple[str, ...]
) -> bool:
    """LangGraph's namespace conditions: a ``prefix`` or ``suffix`` pattern, ``*`` any one label."""
    if len(pattern) > len(namespace):
        return False
    labels = namespace[: len(pattern)] if match_type == "prefix" else namespace[-len(pattern) :]
    return all(want in ("*", have) for want, have in zip(pattern, labels, strict=True))


def _compare(have: Any, operator: str, want: Any) -> bool:
    if operator == "$eq":
        return bool(have == want)
    if operator == "$ne":
        return bool(have != want)
    try:
        if operator == "$gt":
            return bool(have > want)
        if operator == "$gte":
            return bool(have >= want)
        if operator == "$lt":
            return bool(have < want)
        if operator == "$lte":
            return bool(have <= want)
    except TypeError:
        return False  # a comparison across types matches nothing, as in LangGraph's stores
    raise ValueError(f"zkr-langgraph: unknown filter operator {operator!r}")


def _matches(have: Any, want: Any) -> bool:
    if isinstance(want, Mapping):
        if any(str(name).startswith("$") for name in want):
            return all(_compare(have, str(op), operand) for op, operand in want.items())
        return isinstance(have, Mapping) and all(
            _matches(have.get(name), item) for name, item in want.items()
        )
    return bool(have == want)


def matches_filter(value: Mapping[str, Any], conditions: Mapping[str, Any] | None) -> bool:
    """LangGraph's search filter: every field equal, or passing its ``$eq``/``$ne``/``$gt``/
    ``$gte``/``$lt``/``$lte`` operators; a nested object matches field by field."""
    if not conditions:
        return True
    return all(_matches(value.get(name), want) for name, want in conditions.items())
