"""The recall index in every language (issue 29, schema 14): words stemmed per language, scripts
without spaces as bigrams, English stored as it was, the migration from 13, and the fusion's
trust in keywords by language."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from zkr import models as m
from zkr.db import MemoryDb
from zkr.retrieval.keyword_trust import FOREIGN_SHARE, lexical_share, text_language
from zkr.store import schema
from zkr.store.analysis import index_text, query_terms
from zkr.store.languages import latin_language

SCOPE = {"tenant_id": "a", "person_id": "sam"}


def remember(db: MemoryDb, text: str, at: int) -> m.RememberResult:
    payload = {**SCOPE, "kind": "document", "text": text, "captured_at": at, "recorded_at": at}
    return db.remember(m.RememberRequest.model_validate(payload))


def search(db: MemoryDb, query: str, ranking: str = "recall") -> list[str]:
    request = {**SCOPE, "query": query, "ranking": ranking}
    return [item.excerpt for item in db.search(m.SearchRequest.model_validate(request)).items]


# Memories a day apart: no neighbour window joins them.
MEMORIES = [
    "黑豹队的防守在比赛中只丢了三百零八分。",  # zh: the Panthers' defence gave up 308 points
    "東京の桜は四月に満開になりました。",  # ja: Tokyo's cherry blossoms bloomed in April
    "ข้าวผัดกุ้งเป็นอาหารจานโปรดของฉัน",  # th: shrimp fried rice is my favourite dish
    "Мы читали эти книги всю зиму.",  # ru: we read these books all winter
    "Das alte Haus am Hafen wurde abgerissen.",  # de
    "Caroline works as a nurse at the city hospital.",
]


@pytest.fixture
def stored(tmp_path: Path) -> MemoryDb:
    db = MemoryDb(tmp_path / "languages.db")
    for index, text in enumerate(MEMORIES):
        remember(db, text, at=index * 86_400)
    return db


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("黑豹队的防守丢了多少分", 0),  # Chinese, no spaces: found by its bigrams
        ("桜はいつ満開", 1),  # Japanese
        ("อาหารจานโปรด", 2),  # Thai
        ("Какую книгу читает она?", 3),  # Russian: книгу / книги, читает / читали
        ("Was geschah mit den Häusern?", 4),  # German: Häusern / Haus share the stem
        ("nurses", 5),  # English: Porter, as before
    ],
)
def test_recall_finds_each_language_by_its_own_words(
    stored: MemoryDb, query: str, expected: int
) -> None:
    assert search(stored, query)[0] == MEMORIES[expected]


def test_the_contract_ranking_still_matches_whole_runs_only(stored: MemoryDb) -> None:
    # zkr 0.2.3's index keeps a Chinese clause as one token: the question finds nothing there.
    assert search(stored, "黑豹队的防守丢了多少分", ranking="contract") == []


def test_english_text_is_stored_as_written() -> None:
    for text in ("Caroline works as a nurse", "naïve café — 5 € ❤️", "alice lives in Lisbon"):
        assert index_text(text) == text


def test_other_languages_are_stemmed_and_segmented() -> None:
    assert index_text("Die Häuser wurden gebaut.") == "die haus wurd gebaut."
    assert index_text("黑豹队") == "黑豹 豹队"
    assert index_text("книгами") == "книг"
    # Mixed: each word by its own script, Latin words by the text's language.
    assert index_text("Москва 2019年 iPhone手机") == "москв 2019 年 iPhone 手机"


def test_query_terms_drop_their_language_function_words() -> None:
    assert query_terms("Wie viele Häuser gibt es?", []) == ["haus", "gibt"]
    assert query_terms("Что они читали зимой?", []) == ["чита", "зим"]
    # An English query keeps the terms it was given (the schema-13 path).
    assert query_terms("where does Priya work", ["Priya", "work"]) == ["Priya", "work"]


def test_latin_language_is_decided_by_function_words() -> None:
    assert latin_language("Wie viele Punkte hat die Mannschaft?") == "de"
    assert latin_language("¿Cuántos puntos tiene el equipo?") == "es"
    assert latin_language("How many points did the team score?") == "en"
    assert latin_language("Panthers Broncos") == "en"
    assert latin_language("Panthers Broncos", default="") == ""


def test_text_language_by_script() -> None:
    assert text_language("黑豹队的防守") == "zh"
    assert text_language("東京の桜は四月に満開") == "ja"
    assert text_language("Мы читали книги") == "ru"
    assert text_language("12345 !!") == ""


def test_keywords_weigh_less_over_memories_in_another_language() -> None:
    german = ["Die Verteidigung der Panthers hat nur 308 Punkte abgegeben."] * 3
    assert lexical_share(0.55, "How many points did the Panthers give up?", german) == FOREIGN_SHARE
    english = ["The Panthers defense gave up just 308 points."] * 3
    assert lexical_share(0.55, "How many points did the Panthers give up?", english) == 0.55
    # A question whose language cannot be told keeps the share.
    assert lexical_share(0.55, "Panthers 308", german) == 0.55


def _as_version_13(path: Path) -> None:
    """Rewrite the file as schema 13 wrote it: the recall index tokenized by Porter over plain
    unicode61, holding the capture's text as written."""
    conn = sqlite3.connect(path)
    rows = conn.execute(
        "SELECT r.rowid, s.content, r.statement, r.context FROM recall_fts r"
        " JOIN sources s ON s.rowid = r.rowid"
    ).fetchall()
    conn.execute("DROP TABLE recall_fts")
    conn.execute(
        "CREATE VIRTUAL TABLE recall_fts USING fts5(content, statement, context,"
        " tokenize='porter unicode61')"
    )
    conn.executemany(
        "INSERT INTO recall_fts(rowid, content, statement, context) VALUES (?, ?, ?, ?)", rows
    )
    conn.execute("PRAGMA user_version = 13")
    conn.commit()
    conn.close()


def _recall_fts_sql(db: MemoryDb) -> Any:
    return db.conn.execute("SELECT sql FROM sqlite_master WHERE name = 'recall_fts'").fetchone()[0]


def test_a_version_13_file_is_rebuilt_language_aware_on_open(tmp_path: Path) -> None:
    path = tmp_path / "v13.db"
    with MemoryDb(path) as db:
        for index, text in enumerate(MEMORIES):
            remember(db, text, at=index * 86_400)
        db.apply_recall_backlog()  # remember defers its rows (zkr.store.recall_backlog)
        expected = db.conn.execute("SELECT rowid, * FROM recall_fts ORDER BY rowid").fetchall()
        fresh_sql = _recall_fts_sql(db)
    _as_version_13(path)
    with MemoryDb(path) as db:
        assert db.conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
        assert _recall_fts_sql(db) == fresh_sql
        assert (
            db.conn.execute("SELECT rowid, * FROM recall_fts ORDER BY rowid").fetchall() == expected
        )
        assert search(db, "黑豹队的防守丢了多少分")[0] == MEMORIES[0]


def test_the_rebuild_reports_its_progress(stored: MemoryDb) -> None:
    from zkr.store.recall_index import recreate_recall_index

    seen: list[tuple[int, int]] = []
    with stored.atomic() as conn:
        written = recreate_recall_index(
            conn, progress=lambda done, total: seen.append((done, total))
        )
    assert written == len(MEMORIES)
    assert seen[0] == (0, len(MEMORIES))
    assert seen[-1] == (len(MEMORIES), len(MEMORIES))


def test_progress_is_silent_off_a_terminal() -> None:
    import io

    from zkr.store._progress import terminal_progress

    stream = io.StringIO()
    terminal_progress("rebuilding", stream)(5, 10)
    assert stream.getvalue() == ""
