"""The replica ranks as zkr's recall ranking does, in every language (issues 29.4 and 30.3).

One person's memories in seven languages (an English conversation whose turns are neighbours,
German, Russian, Chinese, Arabic and Hindi notes days apart) are stored in a real SQLite file,
synced into a real PostgreSQL replica, and asked the same questions on both sides: the items come
back in the same order, lexical and hybrid (the same hash embedder fills both lanes). Before
schema 5 the replica indexed English-stemmed words and fused with weighted reciprocal ranks:
the Chinese question found nothing there, and the orders differed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.postgres.hash_embedder import HashEmbedder
from zkr import MemoryDb, hookimpl
from zkr import models as m
from zkr_postgres._db import connect
from zkr_postgres.api import Replica
from zkr_postgres.rebuild import rebuild
from zkr_postgres.sync import sync_database

SCOPE = {"tenant_id": "t", "person_id": "polyglot"}
DAY = 86_400
#: (text, captured_at): an English conversation (one session), then one note a day.
MEMORIES = [
    ("I adopted a kitten named Miso last spring", 1_000),
    ("She sleeps on the piano all afternoon", 1_060),
    ("The vet said Miso is healthy and a little heavy", 1_120),
    ("Die Häuser in unserer Straße wurden im Sommer neu gestrichen.", 2 * DAY),
    ("Mein Bruder arbeitet als Lehrer in Hamburg.", 3 * DAY),
    ("Зимой мы читали книги у камина.", 4 * DAY),
    ("Бабушка печёт пироги по воскресеньям.", 5 * DAY),
    ("黑豹队的防守只丢了十六分。", 6 * DAY),
    ("我们周末去北京看长城。", 7 * DAY),
    ("ذهبنا إلى السوق لشراء الخضار والفواكه.", 8 * DAY),
    ("मेरी बहन दिल्ली में डॉक्टर है।", 9 * DAY),
    ("The piano tuner comes on Tuesday", 10 * DAY),
]
QUESTIONS = [
    "Where does Miso sleep?",
    "what did the vet say about the kitten",
    "piano",
    "Welche Häuser wurden gestrichen?",
    "Wo arbeitet mein Bruder als Lehrer?",
    "Что мы читали зимой?",
    "Что печёт бабушка?",
    "黑豹队的防守丢了多少分",
    "周末去哪里看长城",
    "ماذا اشترينا من السوق",
    "बहन दिल्ली में क्या है",
]
LANE = {"model": HashEmbedder.model, "version": HashEmbedder.version}


class _HashPlugin:
    @hookimpl
    def zkr_register_embedders(self, register: Callable[[object], None]) -> None:
        register(HashEmbedder())


def _order(pack: m.RetrievalPack) -> list[tuple[str, str, str]]:
    return [(i.memory.kind.value, i.memory.id, i.evidence_ids[0]) for i in pack.items]


@pytest.fixture
def both(
    tmp_path: Path, pg: str, registered_plugin: Callable[..., str]
) -> tuple[MemoryDb, Replica, dict[str, str]]:
    registered_plugin(_HashPlugin(), name="hash-words")
    db = MemoryDb(tmp_path / "polyglot.db")
    texts = {}
    for text, at in MEMORIES:
        done = db.remember(
            m.RememberRequest(
                **SCOPE, kind="conversation", text=text, captured_at=at, recorded_at=at
            )
        )
        texts[done.source_id] = text
    db.rebuild(m.RebuildRequest(**SCOPE, **LANE))
    with connect(pg) as conn:
        sync_database(conn, db, "up")
        rebuild(conn, HashEmbedder.model, HashEmbedder.version, embedder=HashEmbedder())
    return db, Replica(pg), texts


@pytest.mark.parametrize("hybrid", [False, True], ids=["lexical", "hybrid"])
def test_the_replica_orders_every_language_as_sqlite_recall(
    both: tuple[MemoryDb, Replica, dict[str, str]], hybrid: bool
) -> None:
    db, replica, _ = both
    embedding = m.QueryEmbedding(**LANE) if hybrid else None
    with replica:
        for question in QUESTIONS:
            request = m.SearchRequest(**SCOPE, query=question, limit=10, query_embedding=embedding)
            expected = _order(db.search(request.model_copy(update={"ranking": "recall"})))
            assert expected, question  # every question finds something in SQLite
            assert _order(replica.search(request)) == expected, question


def test_a_chinese_question_finds_its_memory_first_in_the_replica(
    both: tuple[MemoryDb, Replica, dict[str, str]],
) -> None:
    _, replica, texts = both
    with replica:
        pack = replica.search(m.SearchRequest(**SCOPE, query="黑豹队的防守丢了多少分", limit=3))
    assert pack.items, "the replica found no Chinese memory"
    assert texts[pack.items[0].memory.id].startswith("黑豹队")
