"""An example zkr embedder plugin: words -> concepts -> an L2-normalised concept histogram.

Registered through the ``zkr`` entry-point group (see ``pyproject.toml``); zkr finds it with
``zkr plugins``, fills projections with ``zkr rebuild`` and embeds queries with it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from zkr import hookimpl
from zkr.plugins import Embedder

CONCEPTS: dict[str, tuple[str, ...]] = {
    "animal": ("dog", "dogs", "puppy", "pet", "pets", "canine", "cat", "kitten", "biscuit"),
    "money": ("bill", "bills", "pay", "paid", "invoice", "bank", "money", "electricity", "rent"),
    "food": ("lunch", "dinner", "pizza", "restaurant", "cook", "ate", "eat", "hungry", "recipe"),
    "travel": ("flight", "trip", "holiday", "vacation", "lisbon", "airport", "hotel", "travel"),
    "work": ("job", "office", "meeting", "employer", "acme", "boss", "colleague", "work"),
    "health": ("doctor", "dentist", "appointment", "sick", "medicine", "gym", "run", "running"),
}
_INDEX = {word: i for i, words in enumerate(CONCEPTS.values()) for word in words}


class ConceptEmbedder(Embedder):
    model = "example/concepts"
    version = "1"
    dimension = len(CONCEPTS) + 1  # the last axis collects words of no known concept
    normalization = "l2"
    distance = "cosine"
    batch_size = 8

    def vector(self, text: str) -> list[float]:
        counts = [0.0] * self.dimension
        for word in re.findall(r"[a-z]+", text.lower()):
            counts[_INDEX.get(word, self.dimension - 1)] += 1.0 if word in _INDEX else 0.1
        if not any(counts):
            counts[-1] = 1.0
        norm = math.sqrt(sum(c * c for c in counts))
        return [c / norm for c in counts]

    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.vector(text) for text in texts]


@hookimpl
def zkr_register_embedders(register: Any) -> None:
    register(ConceptEmbedder())
