"""``embed``'s vector without numpy (issue 27.4): the same float32 values and stored bytes as the
numpy codec (:mod:`zkr.embeddings.vectors`), and the same unit-magnitude verdict away from the
tolerance's edge."""

from __future__ import annotations

import math
import struct

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from zkr.embeddings.float32 import L2_TOLERANCE, encode_f32, is_unit_f32, to_f32
from zkr.embeddings.vectors import encode, is_unit, to_float32

FLT_MAX = float(np.finfo(np.float32).max)
# Doubles around float32's edges: its largest value and the halfway point above it (which rounds
# to an infinity), its smallest subnormal and half of it (which rounds to zero), signed zeros.
EDGES = [
    FLT_MAX,
    math.nextafter(FLT_MAX, math.inf),
    FLT_MAX * (1 + 2**-24),
    math.nextafter(FLT_MAX * (1 + 2**-24), 0.0),
    -FLT_MAX * (1 + 2**-24),
    1e39,
    -1e300,
    2**-149,
    2**-150,
    math.nextafter(2**-150, 1.0),
    -0.0,
    0.0,
    1 / 3,
    0.1,
    math.inf,
    -math.inf,
]


@given(st.lists(st.floats(allow_nan=False) | st.sampled_from(EDGES), max_size=64))
def test_values_and_bytes_are_the_numpy_codecs(values: list[float]) -> None:
    ours = to_f32(values)
    reference = to_float32(values)
    assert encode_f32(ours) == encode(reference)
    assert list(ours) == [float(v) for v in reference]


def test_bytes_are_little_endian_float32() -> None:
    assert encode_f32(to_f32([1.0, -2.5])) == struct.pack("<2f", 1.0, -2.5)


@given(
    st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=64),
    st.sampled_from([1.0, 1 + L2_TOLERANCE / 2, 1 - L2_TOLERANCE / 2, 1 + 2 * L2_TOLERANCE, 0.5]),
)
def test_unit_magnitude_verdicts_are_the_numpy_ones(values: list[float], scale: float) -> None:
    norm = math.sqrt(math.fsum(v * v for v in values))
    if norm == 0.0:
        return
    vector = to_f32([v / norm * scale for v in values])
    magnitude = math.sqrt(math.fsum(v * v for v in vector))
    if abs(abs(magnitude - 1.0) - L2_TOLERANCE) < 1e-9:
        return  # at the tolerance's edge the two summation orders may differ in the last bit
    assert is_unit_f32(vector) == is_unit(to_float32(list(vector)))
