"""Strict JSON in, canonical JSON out.

The contract's parser (serde_json) is stricter than Python's ``json``: it refuses duplicate keys,
the ``NaN``/``Infinity`` literals and lone UTF-16 surrogates. Output is compact UTF-8 with keys
sorted at every depth, so two equal answers are equal byte strings.

serde_json is strict only where a request has a field: the value of an ignored (unknown) field is
skipped unread, so duplicate keys, lone surrogates, numbers out of any range and any nesting depth
inside it are accepted. ``parse_request(raw, lenient=True)`` parses that way: it refuses only what
is not JSON at all (and NaN/Infinity), remembers the duplicate keys of each object
(:class:`JsonObject`), keeps lone surrogates, and gives integers written ``-0`` as the float
``-0.0`` (serde_json's reading, so an integer field refuses it as a float).
:func:`zkr.store.known_fields.check_known_fields` then applies the strict rules to the fields a
request model knows.
"""

from __future__ import annotations

import json
import re

from zkr.errors import RequestParseError

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    _JsonDict = dict[str, Any]
else:
    _JsonDict = dict

__all__ = [
    "JsonObject",
    "canonical_dumps",
    "check_envelope_id",
    "compact_len",
    "ordered_dumps",
    "parse_request",
    "salvage_envelope_id",
]


def _reject_constant(name: str) -> Any:
    raise RequestParseError(f"invalid number `{name}` (NaN and Infinity are not JSON)")


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise RequestParseError(f"duplicate field `{key}`")
        obj[key] = value
    return obj


def _has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any(0xD800 <= ord(ch) <= 0xDFFF for ch in value) if not value.isascii() else False
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False


class JsonObject(_JsonDict):
    """A parsed object that remembers which of its keys were given more than once (lenient mode;
    the last value is kept, as nothing reads an ignored field's value)."""

    duplicates: tuple[str, ...] = ()


def _lenient_object(pairs: list[tuple[str, Any]]) -> JsonObject:
    obj = JsonObject()
    duplicates: list[str] = []
    for key, value in pairs:
        if key in obj:
            duplicates.append(key)
        obj[key] = value
    if duplicates:
        obj.duplicates = tuple(duplicates)
    return obj


def _lenient_int(text: str) -> Any:
    # serde_json reads -0 as the float -0.0; a number too long for Python's int() (4300 digits)
    # is out of every integer range anyway, and is read as the float it would round to.
    if text == "-0":
        return -0.0
    if len(text) > 40:
        return float(text)
    return int(text)


#: Containers nested deeper than this inside a request are never a field of any request model.
MAX_KNOWN_DEPTH = 64
_STRUCTURE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)


def _flatten_deep(text: str) -> str:
    """*text* with every container nested deeper than :data:`MAX_KNOWN_DEPTH` replaced by null.

    Python's parser recurses (and gives up near depth 1000); serde_json skips an ignored value
    whatever its depth. No field of a request lies that deep, so what is replaced could only be
    read as an ignored value - or it sits inside a known field whose value stays a container of the
    wrong type, so the refusal is the same.
    """
    parts: list[str] = []
    depth = 0
    cut_from = 0
    deep_start = -1
    for token in _STRUCTURE.finditer(text):
        char = token.group()[0]
        if char == '"':
            continue
        if char in "[{":
            depth += 1
            if depth == MAX_KNOWN_DEPTH + 1:
                deep_start = token.start()
        else:
            if depth == MAX_KNOWN_DEPTH + 1 and deep_start >= 0:
                parts.append(text[cut_from:deep_start])
                parts.append("null")
                cut_from = token.end()
                deep_start = -1
            depth -= 1
    parts.append(text[cut_from:])
    return "".join(parts)


def parse_request(raw: bytes | str, *, lenient: bool = False) -> Any:
    """Parse exactly one JSON value with the contract's strictness.

    With *lenient*, only what is not JSON is refused (see the module docstring); the caller then
    checks the fields it knows with :func:`zkr.store.known_fields.check_known_fields`.

    :raises RequestParseError: empty input, malformed JSON, trailing data, duplicate keys,
        NaN/Infinity, invalid UTF-8, lone surrogate escapes or (strict mode) nesting too deep
        to parse.
    """
    if lenient:
        return _parse_lenient(raw)
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RequestParseError(f"invalid UTF-8 at byte {exc.start}") from None
        # Strict decoding refused raw surrogates: only ``\u`` escapes can still produce one.
        may_hold_surrogates = "\\u" in text
    else:
        text = raw
        may_hold_surrogates = "\\u" in text or not text.isascii()
    if not text.strip():
        raise RequestParseError("EOF while parsing a value at line 1 column 0")
    try:
        value = json.loads(text, object_pairs_hook=_unique_object, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise RequestParseError(f"{exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:  # nesting deeper than Python's parser goes: a refusal, not a crash
        raise RequestParseError("recursion limit exceeded") from None
    if may_hold_surrogates and _has_lone_surrogate(value):
        raise RequestParseError("lone leading surrogate in hex escape")
    return value


def _parse_lenient(raw: bytes | str) -> Any:
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RequestParseError(f"invalid UTF-8 at byte {exc.start}") from None
    else:
        text = raw
    if not text.strip():
        raise RequestParseError("EOF while parsing a value at line 1 column 0")

    def load(source: str) -> Any:
        return json.loads(
            source,
            object_pairs_hook=_lenient_object,
            parse_constant=_reject_constant,
            parse_int=_lenient_int,
        )

    try:
        try:
            return load(text)
        except RecursionError:
            return load(_flatten_deep(text))
    except json.JSONDecodeError as exc:
        raise RequestParseError(f"{exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise RequestParseError("recursion limit exceeded") from None


def has_lone_surrogate(text: str) -> bool:
    """Whether *text* holds a UTF-16 surrogate code point (a lone surrogate escape was parsed)."""
    return not text.isascii() and any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)


def canonical_dumps(value: Any) -> str:
    """Compact JSON with keys sorted at every depth and raw UTF-8: the CLI's output form.

    NaN and infinities are refused (ValueError): they are not JSON, and no line may carry them.
    """
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def ordered_dumps(value: Any) -> str:
    """Compact JSON keeping declaration order: the stored export payload form."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def compact_len(value: Any) -> int:
    """UTF-8 byte length of the compact form, which every byte budget of the contract measures."""
    return len(ordered_dumps(value).encode("utf-8"))


def check_envelope_id(value: Any) -> None:
    """A line-protocol envelope's ``id`` is echoed back, so it must be writable as strict JSON.

    :raises RequestParseError: ``invalid envelope id: ...`` (``1e999`` reads as infinity; a lone
        surrogate has no UTF-8 form).
    """
    try:
        canonical_dumps(value).encode("utf-8")
    except (ValueError, UnicodeError) as exc:
        reason = "a lone surrogate" if isinstance(exc, UnicodeError) else "a number out of range"
        raise RequestParseError(f"invalid envelope id: it holds {reason}") from None


class _NoId(Exception):
    """The line holds no id that can be trusted (absent, duplicated, or not strict JSON)."""


def _one_id(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if keys.count("id") > 1:
        raise _NoId
    return dict(pairs)


def salvage_envelope_id(raw: bytes | str) -> tuple[bool, Any]:
    """``(True, id)`` when a line that is not acceptable JSON still holds a usable envelope id.

    For the line protocols (``zkr serve``, ``zkr-postgres serve``): a request holding ``NaN`` or
    invalid UTF-8 somewhere is refused, but its answer carries the id when the id itself is fine,
    so a pipelining client can match it (issue 26, D11). Invalid bytes are read as lone
    surrogates and ``NaN``/``Infinity`` as themselves; an id holding any, or given twice, is not
    used.
    """
    text = raw.decode("utf-8", "surrogateescape") if isinstance(raw, bytes) else raw
    try:
        envelope = json.loads(text, object_pairs_hook=_one_id, parse_constant=float)
    except (ValueError, RecursionError, _NoId):
        return False, None
    if not isinstance(envelope, dict) or "id" not in envelope:
        return False, None
    try:
        check_envelope_id(envelope["id"])
    except RequestParseError:
        return False, None
    return True, envelope["id"]
