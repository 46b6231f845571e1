"""The plugin's own suite: zkr's embedder contract, plus a check that it captures meaning."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from zkr.testing import EmbedderContract
from zkr_embed_minilm import MiniLMEmbedder

_EMBEDDER = MiniLMEmbedder()  # one model load for the whole module


class TestMiniLMContract(EmbedderContract):
    batch_tolerance = 1e-4  # padding to the longest text in a batch moves the last digits

    def make_embedder(self) -> Any:
        return _EMBEDDER


@pytest.mark.parametrize(
    ("memory", "question"),
    [
        ("The user's dog is called Biscuit.", "What is the name of my pet?"),
        ("Sam works at Acme as an engineer.", "Where is Sam employed?"),
    ],
)
def test_related_texts_are_closer_than_unrelated_ones(memory: str, question: str) -> None:
    unrelated = "Paid the electricity bill on Monday."
    m, q, u = np.asarray(_EMBEDDER.embed_batch([memory, question, unrelated]))
    assert float(m @ q) > float(u @ q) + 0.1
