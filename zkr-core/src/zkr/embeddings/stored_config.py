"""A stored vector's configuration — dimension, normalization, distance — read from its row's
columns (contract §6.2), without numpy.

:mod:`zkr.embeddings.vectors` (the float32 codec, which needs numpy) re-exports these; they live
here so that what only reads a lane's configuration (a one-shot ``projections``, issue 27.4) does
not import numpy.
"""

from __future__ import annotations

import json
from enum import StrEnum

from zkr.enums import VectorDistance, VectorNormalization

__all__ = ["parse_distance", "parse_normalization", "stored_config"]


def _parse_quoted(stored: object, allowed: type[StrEnum]) -> str | None:
    """The member of *allowed* (the contract's enumeration, its one definition) the JSON-quoted
    column value names, else ``None``."""
    if not isinstance(stored, str):
        return None
    try:
        return allowed(json.loads(stored)).value
    except (ValueError, TypeError):
        return None


def parse_normalization(stored: object) -> str | None:
    """``none``/``l2`` from the JSON-quoted column value (``'"l2"'``), else ``None``."""
    return _parse_quoted(stored, VectorNormalization)


def parse_distance(stored: object) -> str | None:
    """``cosine``/``dot``/``euclidean`` from the JSON-quoted column value, else ``None``."""
    return _parse_quoted(stored, VectorDistance)


def stored_config(
    dimension: object, normalization: object, distance: object
) -> tuple[int, str, str] | None:
    """A row's (dimension, normalization, distance) when its columns are well-formed."""
    norm = parse_normalization(normalization)
    dist = parse_distance(distance)
    if norm is None or dist is None or not isinstance(dimension, int) or dimension <= 0:
        return None
    return dimension, norm, dist
