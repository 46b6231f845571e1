"""The hybrid fusion's trust in the keyword list (issue 29.2): a keyword list in another language
than the question's ranks nothing — neither through its share nor through the session term —
while a question in the memories' language is fused exactly as before."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from zkr import models as m
from zkr.db import MemoryDb
from zkr.plugins import Embedder, hookimpl
from zkr.retrieval.fusion import LEXICAL_SHARE, fuse_scores
from zkr.retrieval.keyword_trust import (
    FOREIGN_SHARE,
    FOREIGN_TRUST,
    keyword_trust,
    lexical_share,
)

SCOPE = {"tenant_id": "a", "person_id": "sam"}
DAY = 86_400
GERMAN = ["Die Verteidigung der Panthers hat nur 308 Punkte abgegeben."] * 3
ENGLISH = ["The Panthers defense gave up just 308 points."] * 3
QUESTION = "How many points did the Panthers give up?"


def test_a_question_over_hits_in_another_language_trusts_them_not() -> None:
    assert keyword_trust(QUESTION, GERMAN) == FOREIGN_TRUST == 0.0
    assert keyword_trust(QUESTION, ENGLISH) == 1.0
    # At least half of the hits in the question's language: trusted.
    assert keyword_trust(QUESTION, [GERMAN[0], ENGLISH[0]]) == 1.0
    assert keyword_trust(QUESTION, [GERMAN[0], GERMAN[0], ENGLISH[0]]) == FOREIGN_TRUST
    # Hits whose language cannot be told (names, numbers) decide nothing.
    assert keyword_trust(QUESTION, ["Panthers 308", "Denver Broncos"]) == 1.0
    assert keyword_trust(QUESTION, []) == 1.0
    # Scripts decide alone.
    assert keyword_trust("Сколько очков пропустили Пантеры?", GERMAN) == FOREIGN_TRUST
    assert keyword_trust("黑豹队的防守丢了多少分", ["黑豹队的防守只丢了308分。"]) == 1.0
    # The share alone, as before.
    assert lexical_share(LEXICAL_SHARE, QUESTION, GERMAN) == FOREIGN_SHARE
    assert lexical_share(LEXICAL_SHARE, QUESTION, ENGLISH) == LEXICAL_SHARE


def test_trust_scales_the_share_and_the_session_term() -> None:
    """A keyword hit alone in its session (its session term is its own lexical score) against a
    memory the dense lane prefers: trusted, the keyword hit wins; at trust 0 the dense order
    stands — today's rule lowered the share only, and the session term (half the best keyword
    score) still put the keyword hit first."""
    lexical = [(("source", "kw"), 3.0, "kw")]
    dense = [("source", "meaning"), ("source", "kw")]
    dense_z = {("source", "meaning"): 2.4, ("source", "kw"): 1.0}
    times = {"kw": ("document", 0), "meaning": ("document", 10 * DAY)}

    def first(**extra: Any) -> str:
        fused = fuse_scores(lexical, dense, dense_z, {}, 10, times=times, **extra)
        return fused[0][0][1]

    assert first() == "kw"
    assert first(keyword_trust=0.0) == "meaning"
    # The share lowered alone leaves the session term: the keyword hit still first.
    assert first(lexical_share=0.0) == "kw"
    # Trust 1 is the plain fusion, score for score.
    plain = fuse_scores(lexical, dense, dense_z, {}, 10, times=times)
    assert fuse_scores(lexical, dense, dense_z, {}, 10, times=times, keyword_trust=1.0) == plain


# ----------------------------------------------------------------------------------------------
# Through a search: an English question over German memories
# ----------------------------------------------------------------------------------------------


class TopicEmbedder(Embedder):
    """Two dimensions: a query points along the first; a memory about defence ("Verteidigung")
    is closest to it, one naming the Panthers next, the rest further (what a multilingual model
    does for an English question about the Panthers' defence over German paragraphs)."""

    model: ClassVar[str] = "test/topics"
    version: ClassVar[str] = "1"
    dimension: ClassVar[int] = 2
    roles: ClassVar[tuple[str, ...]] = ("query", "passage")

    def embed_batch(self, texts: Sequence[str], role: str | None = None) -> list[list[float]]:
        return [self._vector(text, role) for text in texts]

    @staticmethod
    def _vector(text: str, role: str | None) -> list[float]:
        if role == "query":
            return [1.0, 0.0]
        near = 0.8 if "Verteidigung" in text else 0.7 if "Panthers" in text else 0.6
        return [near, (1.0 - near * near) ** 0.5]


class TopicPlugin:
    @hookimpl
    def zkr_register_embedders(self, register: Callable[[Embedder], None]) -> None:
        register(TopicEmbedder())


GERMAN_NOTES = [
    "Die Panthers spielten 2015 im Stadion von Santa Clara vor vielen Zuschauern.",
    "Die Verteidigung der Mannschaft ließ nur wenige Punkte zu und war die beste der Liga.",
    *(
        f"Der Bericht Nummer {index} handelt von dem Wetter und den Straßen der Stadt."
        for index in range(8)
    ),
]


def _search(db: MemoryDb, query: str) -> list[str]:
    request = {
        **SCOPE,
        "query": query,
        "ranking": "recall",
        "query_embedding": {"model": "test/topics", "version": "1"},
    }
    return [item.excerpt for item in db.search(m.SearchRequest.model_validate(request)).items]


def test_an_english_question_over_german_memories_ranks_by_meaning(
    db: MemoryDb, registered_plugin: Callable[..., str]
) -> None:
    """The English question shares one keyword with the German notes, "2015" (their words are
    stemmed as German, its as English); the dense lane prefers the note about the defence. The
    keyword list is German, the question English: the dense lane's note comes first. (Under the
    rule of main at 31f973f — share 0, session term kept — the "2015" note did.)"""
    registered_plugin(TopicPlugin(), name="topics")
    for index, text in enumerate(GERMAN_NOTES):
        payload = {**SCOPE, "kind": "document", "text": text}
        db.remember(
            m.RememberRequest.model_validate(
                {**payload, "captured_at": index * DAY, "recorded_at": index * DAY}
            )
        )
    db.rebuild(m.RebuildRequest.model_validate({**SCOPE, "model": "test/topics", "version": "1"}))
    ranked = _search(db, "How good was the defense of the Panthers in 2015?")
    assert ranked[0] == GERMAN_NOTES[1]
    assert ranked[1] == GERMAN_NOTES[0]
    # A German question over the same notes trusts its keywords: the Panthers note first.
    assert _search(db, "Wie spielten die Panthers 2015 im Stadion?")[0] == GERMAN_NOTES[0]
