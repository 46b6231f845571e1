"""A vector of an ``embed`` request as float32, checked and encoded without numpy.

A one-shot ``zkr embed`` stores one vector; importing numpy for it was most of its start-up
(about 20 times ``python -c pass``, issue 27.4). :class:`array.array` of type ``"f"`` rounds each
double to float32 with the same C conversion numpy's ``astype(float32)`` uses (round to nearest,
a finite double beyond float32 range becoming an infinity), so the stored bytes are the ones
:func:`zkr.embeddings.vectors.encode` would write; ``tests/core/test_float32.py`` compares them.
``embed`` and ``rebuild`` check every request vector here, in every process.
"""

from __future__ import annotations

import array
import math
import sys

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["L2_TOLERANCE", "encode_f32", "is_unit_f32", "to_f32"]

#: An ``l2`` vector's Euclidean magnitude (computed in float64) must be within this of 1.
L2_TOLERANCE = 1e-4


def to_f32(values: Iterable[float]) -> array.array[float]:
    """*values* rounded to float32 (beyond its range: an infinity, as the reference's parser)."""
    return array.array("f", values)


def is_unit_f32(vector: array.array[float]) -> bool:
    """True when the Euclidean magnitude, computed in float64, is within 1e-4 of 1.

    The sum is exact (:func:`math.fsum`) where numpy's dot product (what a stored row is checked
    with) sums in its own order; the two can differ only in the last bits of a magnitude, which
    matters only for a vector within about 1e-16 of the tolerance's edge.
    """
    magnitude = math.sqrt(math.fsum(value * value for value in vector))
    return abs(magnitude - 1.0) <= L2_TOLERANCE


def encode_f32(vector: array.array[float]) -> bytes:
    """The stored BLOB: little-endian float32, whatever the machine's byte order."""
    if sys.byteorder == "big":
        vector = array.array("f", vector)
        vector.byteswap()
    return vector.tobytes()
