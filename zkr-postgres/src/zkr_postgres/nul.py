"""U+0000 (NUL): zkr accepts it in any text, PostgreSQL ``text`` cannot hold it.

What the replica does (``docs/zkr-postgres.md``, "NUL"):

- the text it serves — a capture's ``content`` and ``ingestion_key``, an evidence's ``quote``, a
  claim's ``subject``, ``predicate`` and ``value`` — is stored with each NUL read as a space (a
  word separator for search, as it is for zkr's tokenizer, so search finds the same words), and
  the exact original values of the fields that held a NUL go, as JSON, into the row's ``exact``
  (``bytea``) column; every read gives the exact text back (:func:`restored`);
- other text it keeps but never serves (transcript locators, profile entries, review summaries)
  has each NUL replaced by U+FFFD;
- a scope or record id holding NUL is refused (zkr's own ids never do; only a caller's tenant or
  person id can): :func:`check_ids`;
- a request whose scope, id or embedding lane name holds NUL cannot name anything stored: it finds
  nothing (``record not found``, an empty page or pack), never a database error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from zkr.errors import ExportError

__all__ = ["NUL", "check_ids", "has_nul", "kept", "restored", "stored"]

NUL = "\x00"


def has_nul(*texts: str | None) -> bool:
    return any(text is not None and NUL in text for text in texts)


def stored(values: Mapping[str, str | None]) -> tuple[dict[str, str | None], bytes | None]:
    """Served text as stored (NUL read as a space) and the ``exact`` column (None: nothing held
    a NUL)."""
    exact = {name: text for name, text in values.items() if text is not None and NUL in text}
    clean = {
        name: None if text is None else text.replace(NUL, " ") for name, text in values.items()
    }
    blob = json.dumps(exact, ensure_ascii=True).encode("ascii") if exact else None
    return clean, blob


def restored(values: Mapping[str, Any], exact: bytes | memoryview | None) -> dict[str, Any]:
    """The served text of a row as zkr holds it: *values* with the ``exact`` originals put back."""
    if exact is None:
        return dict(values)
    originals = json.loads(bytes(exact))
    return {name: originals.get(name, value) for name, value in values.items()}


def kept(text: str | None) -> str | None:
    """Text the replica keeps but never serves: NUL replaced by U+FFFD."""
    return None if text is None else text.replace(NUL, "\ufffd")


#: A transcript locator's fields are free text that ends in ``_id``: kept with U+FFFD, not keys.
_LOCATOR = frozenset({"device_id", "stream_id", "segment_id"})


def check_ids(raw: Any) -> None:
    """Refuse a record whose scope or any id holds NUL (PostgreSQL could not key it).

    :raises ExportError: naming the field.
    """
    if isinstance(raw, dict):
        for name, value in raw.items():
            is_id = name not in _LOCATOR and (name == "id" or name.endswith(("_id", "_ids")))
            if is_id and _holds_nul(value):
                raise ExportError(
                    f"export record field {name} holds U+0000 (NUL), which PostgreSQL text"
                    " cannot store"
                )
            check_ids(value)
    elif isinstance(raw, list):
        for value in raw:
            check_ids(value)


def _holds_nul(value: Any) -> bool:
    if isinstance(value, str):
        return NUL in value
    if isinstance(value, list):
        return any(_holds_nul(v) for v in value)
    return False
