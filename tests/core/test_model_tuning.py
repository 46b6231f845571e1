"""The hybrid fusion is calibrated per embedding model (issue 27.3): a lane of all-MiniLM-L6-v2
fuses with its own lexical share, every other model (e5 included) with the shipped defaults, and a
tuning a caller chose is never replaced."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import pytest

import zkr.retrieval._recall as recall
from tests.core.test_recall import SCOPE, LetterEmbedder, remember, search
from zkr import hookimpl
from zkr import models as m
from zkr.db import MemoryDb
from zkr.plugins import Embedder
from zkr.retrieval._recall_tuning import (
    DEFAULT_TUNING,
    MODEL_TUNING,
    RecallTuning,
    model_tuning,
)
from zkr.retrieval.fusion import LEXICAL_SHARE, fuse_scores

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
E5 = "intfloat/multilingual-e5-small"


def test_minilm_fuses_with_a_larger_dense_part_and_nothing_else_changes() -> None:
    tuned = model_tuning(MINILM)
    assert tuned.lexical_share == 0.5 < LEXICAL_SHARE
    assert tuned._replace(lexical_share=LEXICAL_SHARE) == DEFAULT_TUNING


@pytest.mark.parametrize("model", [E5, "test/letters", ""])
def test_other_models_keep_the_shipped_tuning(model: str) -> None:
    assert model not in MODEL_TUNING
    assert model_tuning(model) is DEFAULT_TUNING


def test_a_tuning_the_caller_chose_is_kept() -> None:
    chosen = RecallTuning(lexical_share=0.7)
    assert model_tuning(MINILM, chosen) is chosen
    # Equal to the default but not the shipped object: a caller's choice all the same.
    assert model_tuning(MINILM, RecallTuning()) == DEFAULT_TUNING


class _MiniLMNamed(LetterEmbedder):
    """A fake lane that carries MiniLM's model name (no model is loaded)."""

    model: ClassVar[str] = MINILM
    version: ClassVar[str] = "test"


class _Plugin:
    @hookimpl
    def zkr_register_embedders(self, register: Callable[[Embedder], None]) -> None:
        register(LetterEmbedder())
        register(_MiniLMNamed())


def test_a_search_fuses_with_its_lane_models_calibration(
    db: MemoryDb, registered_plugin: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    registered_plugin(_Plugin(), name="letters-and-minilm")
    for index, text in enumerate(["aaaa bbbb", "zzzz yyyy", "aaab qqqq"]):
        remember(db, text, at=index * 100_000)
    for model, version in (("test/letters", "1"), (MINILM, "test")):
        db.rebuild(m.RebuildRequest(**SCOPE, model=model, version=version))
    shares: list[float] = []

    def recording(*args: Any, **kwargs: Any) -> list[tuple[Any, int]]:
        shares.append(kwargs["lexical_share"])
        return fuse_scores(*args, **kwargs)

    monkeypatch.setattr(recall, "fuse_scores", recording)
    search(db, "qqqq", query_embedding={"model": MINILM, "version": "test"})
    search(db, "qqqq", query_embedding={"model": "test/letters", "version": "1"})
    search(db, "qqqq")  # lexical only: the whole share is the keywords'
    assert shares == [0.5, LEXICAL_SHARE, 1.0]
