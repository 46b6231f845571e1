"""Recall hybrid answers past-time questions (issue 24): the dense lane works under ``as_of``.

A real embedder (MiniLM, its weights shipped with the plugin) embeds the memories; the question
shares no word with the answer ("Which city was I based in back in March?" / "I live in Lisbon."),
so only the dense lane can find it. Asked with today's knowledge about March, after the person
said they moved to Porto in April (stored as a change), hybrid recall answers Lisbon. Before
issue 24 the dense lane was off under ``as_of`` and the same search found nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from zkr import hookimpl
from zkr import models as m
from zkr.db import MemoryDb
from zkr_embed_minilm import MiniLMEmbedder

SCOPE = {"tenant_id": "t", "person_id": "p"}
JAN_1 = 1_767_225_600  # 2026-01-01
MAR_15 = 1_773_532_800  # 2026-03-15
APR_1 = 1_775_001_600  # 2026-04-01
APR_10 = 1_775_779_200  # 2026-04-10
NOW = 1_780_272_000  # 2026-06-01
LISBON = "me lives in Lisbon"
PORTO = "me lives in Porto"
QUESTION = "Which city was I based in back in March?"

_EMBEDDER = MiniLMEmbedder()  # one model load for the module


@pytest.fixture
def minilm(registered_plugin: Any) -> MiniLMEmbedder:
    class Plugin:
        @hookimpl
        def zkr_register_embedders(self, register: Any) -> None:
            register(_EMBEDDER)

    registered_plugin(Plugin(), name="minilm-for-this-test")
    return _EMBEDDER


def remember(db: MemoryDb, text: str, at: int, claim: dict[str, Any] | None = None) -> str | None:
    payload: dict[str, Any] = {
        **SCOPE,
        "kind": "conversation",
        "text": text,
        "captured_at": at,
        "recorded_at": at,
    }
    if claim is not None:
        payload["claim"] = {**claim, "kind": "fact", "valid_from": at}
    return db.remember(m.RememberRequest.model_validate(payload)).claim_id


@pytest.fixture
def db(tmp_path: Path, minilm: MiniLMEmbedder) -> MemoryDb:
    db = MemoryDb(tmp_path / "memory.db")
    lisbon = remember(
        db,
        "I live in Lisbon.",
        JAN_1,
        {"subject": "me", "predicate": "lives in", "value": "Lisbon"},
    )
    assert lisbon is not None
    for offset, text in enumerate(
        [
            "My dentist appointment with Dr. Silva is on Thursday.",
            "I prefer green tea to coffee in the morning.",
            "Biscuit the dog needs his vaccination in May.",
            "The quarterly report is due at the end of the month.",
        ]
    ):
        remember(db, text, JAN_1 + 86_400 * (offset + 1))
    db.correct(
        m.CorrectRequest.model_validate(
            {
                **SCOPE,
                "claim_id": lisbon,
                "text": "I moved to Porto in April.",
                "value": "Porto",
                "valid_at": APR_1,
                "recorded_at": APR_10,
                "mode": "change",
            }
        )
    )
    db.rebuild(m.RebuildRequest(**SCOPE, model=minilm.model, version=minilm.version))
    return db


def search(db: MemoryDb, as_of: dict[str, int] | None, hybrid: bool) -> list[str]:
    request: dict[str, Any] = {**SCOPE, "query": QUESTION, "ranking": "recall", "as_of": as_of}
    if hybrid:
        request["query_embedding"] = {"model": _EMBEDDER.model, "version": _EMBEDDER.version}
    pack = db.search(m.SearchRequest.model_validate(request))
    return [item.excerpt for item in pack.items]


def test_hybrid_recall_answers_march_with_todays_knowledge(db: MemoryDb) -> None:
    march_now = {"valid_at": MAR_15, "recorded_at": NOW}
    assert LISBON not in search(db, march_now, hybrid=False)  # no shared word: lexical cannot
    found = search(db, march_now, hybrid=True)
    assert found[0] == LISBON
    assert PORTO not in found  # not true in March
    # The same question about today answers Porto.
    assert search(db, None, hybrid=True)[0] == PORTO


def test_dense_under_as_of_returns_only_what_was_visible_then(db: MemoryDb) -> None:
    # Before anything was recorded, nothing; in February (known then), Lisbon and no correction.
    assert search(db, {"valid_at": JAN_1 - 1, "recorded_at": NOW}, hybrid=True) == []
    february = search(
        db, {"valid_at": JAN_1 + 86_400 * 40, "recorded_at": JAN_1 + 86_400 * 40}, True
    )
    assert february[0] == LISBON
    assert not any("Porto" in excerpt for excerpt in february)
