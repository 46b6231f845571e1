"""The few ONNX protobuf messages the e5 graph needs, encoded by hand.

Writing them here (about fifty lines) instead of importing ``onnx`` keeps the engine's load fast
(``import onnx`` alone costs about 0.7 s of CPU) and its dependencies small. Field numbers are
those of ``onnx.proto`` (proto2; repeated scalars are written unpacked, which every parser reads).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

#: TensorProto.DataType codes for the numpy types the graph uses.
DATA_TYPES = {
    np.dtype(np.float32): 1,
    np.dtype(np.uint8): 2,
    np.dtype(np.int8): 3,
    np.dtype(np.int64): 7,
}
FLOAT, INT8, UINT8, INT64 = 1, 3, 2, 7


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int64s as two's complement, as protobuf does
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _int(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value)


def _bytes(field: int, value: bytes | str) -> bytes:
    raw = value.encode() if isinstance(value, str) else value
    return _varint(field << 3 | 2) + _varint(len(raw)) + raw


def tensor(name: str, array: NDArray[Any]) -> bytes:
    """A TensorProto holding *array* as raw little-endian data."""
    array = np.ascontiguousarray(array)
    dims = b"".join(_int(1, d) for d in array.shape)
    raw = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
    return dims + _int(2, DATA_TYPES[array.dtype]) + _bytes(8, name) + _bytes(9, raw)


def node(op: str, inputs: Sequence[str], outputs: Sequence[str], **attributes: Any) -> bytes:
    """A NodeProto of the default domain; attributes are ints, floats or lists of ints."""
    out = b"".join(_bytes(1, name) for name in inputs)
    out += b"".join(_bytes(2, name) for name in outputs) + _bytes(4, op)
    for key, value in sorted(attributes.items()):
        if isinstance(value, float):
            body = _bytes(1, key) + _varint(2 << 3 | 5) + struct.pack("<f", value) + _int(20, 1)
        elif isinstance(value, int):
            body = _bytes(1, key) + _int(3, value) + _int(20, 2)
        else:
            body = _bytes(1, key) + b"".join(_int(8, v) for v in value) + _int(20, 7)
        out += _bytes(5, body)
    return out


def value_info(name: str, elem_type: int, shape: Sequence[int | str]) -> bytes:
    """A ValueInfoProto: a tensor input or output with fixed or named dimensions."""
    dims = b"".join(_bytes(1, _int(1, d) if isinstance(d, int) else _bytes(2, d)) for d in shape)
    tensor_type = _int(1, elem_type) + _bytes(2, dims)
    return _bytes(1, name) + _bytes(2, _bytes(1, tensor_type))


def model(
    name: str,
    nodes: Sequence[bytes],
    initializers: Sequence[bytes],
    inputs: Sequence[bytes],
    outputs: Sequence[bytes],
    *,
    opset: int,
    ir_version: int = 8,
) -> bytes:
    """A ModelProto of one graph, importing the default domain at *opset*."""
    graph = b"".join(_bytes(1, n) for n in nodes) + _bytes(2, name)
    graph += b"".join(_bytes(5, t) for t in initializers)
    graph += b"".join(_bytes(11, v) for v in inputs) + b"".join(_bytes(12, v) for v in outputs)
    return _int(1, ir_version) + _bytes(7, graph) + _bytes(8, _bytes(1, "") + _int(2, opset))
