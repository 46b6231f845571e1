"""Strict JSON in, canonical JSON out.

The contract's parser (serde_json) is stricter than Python's ``json``: it refuses duplicate keys,
the ``NaN``/``Infinity`` literals and lone UTF-16 surrogates. Output is compact UTF-8 with keys
sorted at every depth, so two equal answers are equal byte strings.
"""

from __future__ import annotations

import json
from typing import Any

from zkr.errors import RequestParseError

__all__ = ["canonical_dumps", "compact_len", "ordered_dumps", "parse_request"]


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


def parse_request(raw: bytes | str) -> Any:
    """Parse exactly one JSON value with the contract's strictness.

    :raises RequestParseError: empty input, malformed JSON, trailing data, duplicate keys,
        NaN/Infinity, invalid UTF-8 or lone surrogate escapes.
    """
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
    if may_hold_surrogates and _has_lone_surrogate(value):
        raise RequestParseError("lone leading surrogate in hex escape")
    return value


def canonical_dumps(value: Any) -> str:
    """Compact JSON with keys sorted at every depth and raw UTF-8: the CLI's output form."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def ordered_dumps(value: Any) -> str:
    """Compact JSON keeping declaration order: the stored export payload form."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def compact_len(value: Any) -> int:
    """UTF-8 byte length of the compact form, which every byte budget of the contract measures."""
    return len(ordered_dumps(value).encode("utf-8"))
