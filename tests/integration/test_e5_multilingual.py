"""A memory captured in Portuguese or German is found by an English question through hybrid recall
search with the real e5 embedder: ``rebuild`` fills the lane, then ``search`` names the embedder
(no vector), so zkr embeds the question in e5's query role and the memories in its passage role."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from zkr import models as m
from zkr.db import MemoryDb

zkr_embed_e5 = pytest.importorskip("zkr_embed_e5")

TENANT, PERSON = "t", "p"
MODEL, VERSION = zkr_embed_e5.E5Embedder.model, zkr_embed_e5.E5Embedder.version

# Everyday captures, in English and in the other languages, none about where the sister lives or
# what the son plays. One shares a word with a question ("lives"), so the lexical lane has an
# answer of its own; the foreign-language memories share no word with their questions.
DISTRACTORS = [
    "I bought a new bicycle last week.",
    "The dentist appointment moved to Friday.",
    "My brother lives in Berlin and works at a bank.",
    "We watched a football match on Sunday.",
    "The train to Porto was late again.",
    "The food at the new Thai place was great.",
    "Meine Katze schläft gern auf dem Sofa.",
    "Eu gosto de café sem açúcar.",
    "Remind me to call the plumber about the kitchen sink.",
    "The new phone arrived this morning.",
    "Wir haben am Samstag einen langen Spaziergang gemacht.",
    "O meu carro precisa de pneus novos.",
]


DAY = 86_400


def _remember(db: MemoryDb, text: str, day: int) -> m.RememberResult:
    # One capture a day: no two are in one conversation, so none lends its words to another
    # through the recall index's neighbour context.
    at = day * DAY
    stored: m.RememberResult = db.remember(
        m.RememberRequest(
            tenant_id=TENANT,
            person_id=PERSON,
            kind=m.SourceKind.conversation,
            text=text,
            captured_at=at,
            recorded_at=at,
        )
    )
    return stored


def _search(db: MemoryDb, query: str, *, dense: bool) -> list[str]:
    """The ids of a recall search's items (sources or evidence), best first."""
    request = m.SearchRequest(
        tenant_id=TENANT,
        person_id=PERSON,
        query=query,
        limit=3,
        ranking=m.Ranking.recall,
        query_embedding=m.QueryEmbedding(model=MODEL, version=VERSION) if dense else None,
    )
    pack = db.search(request)
    return [item.memory.id for item in pack.items]


@pytest.mark.parametrize(
    ("memory", "question"),
    [
        ("A minha irmã mudou-se para Lisboa no ano passado.", "where does my sister live now"),
        ("Mein Sohn spielt jeden Dienstag Fußball.", "which sport does my son play"),
    ],
)
def test_a_foreign_language_memory_is_found_by_an_english_question(
    db: MemoryDb, registered_plugin: Callable[..., Any], memory: str, question: str
) -> None:
    registered_plugin(zkr_embed_e5, name="e5")
    for day, text in enumerate(DISTRACTORS[:6], start=1):
        _remember(db, text, day)
    stored = _remember(db, memory, 10)
    wanted = {stored.source_id, stored.evidence_id}
    for day, text in enumerate(DISTRACTORS[6:], start=20):
        _remember(db, text, day)

    result = db.rebuild(
        m.RebuildRequest(tenant_id=TENANT, person_id=PERSON, model=MODEL, version=VERSION)
    )
    assert result.embedded == 2 * (len(DISTRACTORS) + 1)  # each capture's source and evidence

    # Lexical recall alone cannot find it: the memory shares no word with the question.
    assert not wanted & set(_search(db, question, dense=False))
    # Hybrid recall with e5 finds it among the three best of thirteen memories.
    found = _search(db, question, dense=True)
    assert wanted & set(found), found
