"""The vector codec: little-endian float32 BLOBs, and the checks a vector must pass (contract §6.2).

zkr 0.2.3 stored vectors as JSON text; zkr stores the same float32 values as raw little-endian bytes
(4 bytes per value, llm's format), which a numpy scan reads without parsing. Values arrive as JSON
numbers and are rounded to float32 exactly like the reference's parser rounds them: a number beyond
float32 range becomes an infinity and then fails the finiteness check.

numpy is imported lazily by the callers that need it (a lexical search must not import numpy);
this module is only imported by the embedding and dense paths.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from zkr.embeddings.float32 import L2_TOLERANCE
from zkr.embeddings.stored_config import parse_distance, parse_normalization, stored_config

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "F32",
    "L2_TOLERANCE",
    "decode",
    "decode_stored",
    "encode",
    "is_unit",
    "parse_distance",
    "parse_normalization",
    "row_vector",
    "stored_config",
    "to_float32",
]

#: Little-endian float32: the stored element type, whatever the machine's byte order.
F32 = np.dtype("<f4")


def to_float32(values: Sequence[float] | NDArray[Any]) -> NDArray[np.float32]:
    """Round *values* to float32 the way the reference's JSON parser does.

    Finite doubles beyond float32 range become infinities (numpy would warn; that rounding is the
    documented behaviour here, so the warning is silenced).
    """
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(values, dtype=np.float64).astype(F32)


def encode(values: NDArray[np.float32]) -> bytes:
    """The stored BLOB of a float32 vector."""
    return np.ascontiguousarray(values, dtype=F32).tobytes()


def decode(blob: bytes) -> NDArray[np.float32] | None:
    """A float32 vector from its BLOB, or ``None`` when the bytes are not whole float32 values."""
    if len(blob) % F32.itemsize:
        return None
    return np.frombuffer(blob, dtype=F32)


def decode_stored(stored: object) -> NDArray[np.float32] | None:
    """Decode a stored ``embeddings.vector`` value, whatever its SQLite storage class.

    A BLOB is the current form. JSON text (a row written by zkr 0.2.x that a migration did not
    convert, or raw SQL) is still read as the reference would read it. Anything else is ``None``.
    """
    if isinstance(stored, bytes):
        return decode(stored)
    if isinstance(stored, str):
        try:
            values = json.loads(stored)
        except ValueError:
            return None
        if not isinstance(values, list) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in values
        ):
            return None
        return to_float32(values)
    return None


def is_unit(vector: NDArray[np.float32]) -> bool:
    """True when the Euclidean magnitude, computed in float64, is within 1e-4 of 1."""
    magnitude = math.sqrt(float(np.dot(vector.astype(np.float64), vector.astype(np.float64))))
    return abs(magnitude - 1.0) <= L2_TOLERANCE


def row_vector(
    dimension: object, normalization: object, distance: object, stored: object
) -> NDArray[np.float32] | None:
    """The stored vector of a row that is valid by contract §6.2, else ``None``.

    Valid: normalization and distance parse, the vector decodes to exactly ``dimension`` (> 0)
    finite values and, for ``l2``, has unit magnitude.
    """
    config = stored_config(dimension, normalization, distance)
    if config is None:
        return None
    vector = decode_stored(stored)
    if vector is None or len(vector) != config[0] or not bool(np.isfinite(vector).all()):
        return None
    if config[1] == "l2" and not is_unit(vector):
        return None
    return vector
