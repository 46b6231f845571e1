"""The work of one search is bounded (issue 18, defect 2).

Checked by what runs, never by timing: which match expressions reach FTS5 (SQLite's trace
callback), and that a spent budget aborts the search with a clear error. The resource figures
(time and peak RSS of the worst searches) are in ``benchmarks/hostile.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CONTRACT_RANKING
from zkr import models as m
from zkr.db import MemoryDb
from zkr.errors import LimitExceeded
from zkr.retrieval._bounds import MAX_PHRASE_TOKENS, phrase_tokens_at_least

# zkr 0.2.3's answers: searches that name no ranking use the contract's.
pytestmark = CONTRACT_RANKING

WORDS = ["the", "of", "and", "to", "a", "in", "is", "it", "you", "that"]


def words(count: int, offset: int = 0) -> str:
    return " ".join(WORDS[(offset + index) % len(WORDS)] for index in range(count))


@pytest.fixture
def db(tmp_path: Path) -> Iterator[MemoryDb]:
    with MemoryDb(tmp_path / "bounds.db") as memory:
        with memory.atomic():
            for index in range(300):  # another tenant's many short sources of common words
                memory.remember(
                    m.RememberRequest(
                        tenant_id="victim", person_id="v", kind="conversation",
                        text=words(12, index), captured_at=index, recorded_at=index,
                    )
                )  # fmt: skip
        yield memory


def phrase_statements(
    db: MemoryDb, query: str, tenant: str = "attacker", person: str = "p"
) -> tuple[Any, list[str]]:
    """The search's answer and the FTS5 MATCH arguments of the phrase query it ran."""
    seen: list[str] = []

    def trace(sql: str) -> None:
        if "MATCH" in sql and '"' + query[:20] in sql:
            seen.append(sql)

    db.conn.set_trace_callback(trace)
    try:
        pack = db.search(m.SearchRequest(tenant_id=tenant, person_id=person, query=query))
    finally:
        db.conn.set_trace_callback(None)
    return pack, seen


def test_a_long_phrase_that_cannot_match_in_scope_is_not_run(db: MemoryDb) -> None:
    # The scope holds a source (so FTS5 is asked at all), but none of 40 tokens.
    db.remember(
        m.RememberRequest(tenant_id="attacker", person_id="p", kind="document", text="the of and",
                          captured_at=1, recorded_at=1)
    )  # fmt: skip
    pack, phrases = phrase_statements(db, words(40))
    assert phrases == []
    assert [item.excerpt for item in pack.items] == ["the of and"]  # by the token query


def test_a_phrase_over_the_cap_is_never_given_to_fts5(db: MemoryDb) -> None:
    long_text = words(MAX_PHRASE_TOKENS + 50)
    db.remember(
        m.RememberRequest(tenant_id="attacker", person_id="p", kind="document", text=long_text,
                          captured_at=1, recorded_at=1)
    )  # fmt: skip
    pack, phrases = phrase_statements(db, long_text)
    assert phrases == []
    # Its words still recall through the token query.
    assert [item.memory.kind for item in pack.items] == ["source"]


def test_a_long_phrase_that_can_match_in_scope_still_answers_exactly(db: MemoryDb) -> None:
    text = words(60)
    stored = db.remember(
        m.RememberRequest(tenant_id="attacker", person_id="p", kind="document",
                          text=f"prefix {text} suffix", captured_at=1, recorded_at=1)
    )  # fmt: skip
    pack, phrases = phrase_statements(db, text)
    assert phrases  # the scope holds a row long enough: the phrase ran, as in the contract
    assert [item.memory.id for item in pack.items] == [stored.source_id]


def test_short_phrases_run_as_always(db: MemoryDb) -> None:
    _, phrases = phrase_statements(db, words(5), tenant="victim", person="v")
    assert phrases


@pytest.mark.parametrize("ranking", list(m.Ranking))
def test_a_spent_budget_aborts_the_search_with_a_clear_error(
    db: MemoryDb, ranking: m.Ranking
) -> None:
    db.search_budget_seconds = 0.0
    request = m.SearchRequest(
        tenant_id="victim", person_id="v", query=words(2), limit=100, ranking=ranking
    )
    with pytest.raises(LimitExceeded, match="search exceeded its time budget of 0 seconds"):
        db.search(request)
    assert not db.conn.in_transaction
    db.search_budget_seconds = 5.0
    assert len(db.search(request).items) == 100  # the handle is fine afterwards


@pytest.mark.parametrize("ranking", list(m.Ranking))
def test_a_scope_without_a_live_source_gives_fts5_no_query(
    db: MemoryDb, ranking: m.Ranking
) -> None:
    # Nothing can match there: a 1 MiB query of common words must not make the scope pay for the
    # other tenants' rows (bm25 over every match of the whole index).
    gone = db.remember(
        m.RememberRequest(tenant_id="attacker", person_id="p", kind="document", text=words(30),
                          captured_at=1, recorded_at=1)
    )  # fmt: skip
    db.delete(m.DeleteRequest(tenant_id="attacker", person_id="p", source_id=gone.source_id,
                              deleted_at=2))  # fmt: skip
    statements: list[str] = []
    db.conn.set_trace_callback(lambda sql: statements.append(sql) if "MATCH" in sql else None)
    try:
        for tenant in ("attacker", "nobody"):
            request = m.SearchRequest(
                tenant_id=tenant, person_id="p", query=words(20_000), ranking=ranking
            )
            assert db.search(request).items == []
    finally:
        db.conn.set_trace_callback(None)
    assert statements == []
    # A scope with a live source still asks FTS5, and finds it.
    request = m.SearchRequest(tenant_id="victim", person_id="v", query=words(3), ranking=ranking)
    assert db.search(request).items


@pytest.mark.parametrize(
    ("query", "at_least"),
    [
        ("", 0),
        ("the cat", 2),
        ("the,cat;;dog", 3),
        ("é è", 0),  # no ASCII letter: not counted (never overcount)
        ("caféteria x", 2),
        ("a\u3000b", 1),  # U+3000 may separate: counted as one run, FTS5 sees two
    ],
)
def test_the_token_count_never_exceeds_fts5s(db: MemoryDb, query: str, at_least: int) -> None:
    assert phrase_tokens_at_least(query, stop_after=1000) == at_least
    db.conn.execute("CREATE VIRTUAL TABLE temp.probe USING fts5(content, tokenize='unicode61')")
    db.conn.execute("INSERT INTO temp.probe(content) VALUES (?)", (query,))
    db.conn.execute(
        "CREATE VIRTUAL TABLE temp.probe_terms USING fts5vocab(temp, probe, 'instance')"
    )
    (fts5_count,) = db.conn.execute("SELECT count(*) FROM temp.probe_terms").fetchone()
    assert at_least <= fts5_count
