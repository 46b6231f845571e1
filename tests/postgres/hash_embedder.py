"""A small deterministic embedder for tests: hashed bag of words, L2-normalised (not a model)."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence


class HashEmbedder:
    model = "hash-words"
    version = "1"
    dimension = 32
    normalization = "l2"
    distance = "cosine"
    batch_size = 16

    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.embed(text) for text in texts]

    def embed(self, text: str) -> list[float]:
        vector = [0.0] * self.dimension
        for word in re.findall(r"\w+", text.lower()):
            digest = hashlib.sha256(word.encode()).digest()
            vector[digest[0] % self.dimension] += 1.0 if digest[1] % 2 else -1.0
        norm = math.sqrt(sum(v * v for v in vector)) or 1.0
        if norm == 1.0 and not any(vector):
            vector[0] = 1.0
        return [v / norm for v in vector]
