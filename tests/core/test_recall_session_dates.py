"""The recall hybrid fusion's session and date terms (issue 13): a capture whose session holds the
query's best lexical match, or captured on a date the query names, ranks higher — and a deleted
capture stops lending its session's score."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from tests.core.test_recall import SCOPE, LetterPlugin, remember, search
from zkr import models as m
from zkr.db import MemoryDb
from zkr.retrieval._query_dates import SLACK_SECONDS, query_date_spans
from zkr.retrieval.fusion import fuse_scores
from zkr.store.recall_index import AFTER, BEFORE, SESSION_GAP_SECONDS

LANE = {"model": "test/letters", "version": "1"}
DAY = 86_400


def utc(year: int, month: int, day: int) -> int:
    return int(datetime(year, month, day, tzinfo=UTC).timestamp())


@pytest.mark.parametrize(
    ("query", "spans"),
    [
        ("what did she paint on October 13, 2023?", [(utc(2023, 10, 13), utc(2023, 10, 14))]),
        ("on 13 October 2023", [(utc(2023, 10, 13), utc(2023, 10, 14))]),
        ("on 1st September 2023", [(utc(2023, 9, 1), utc(2023, 9, 2))]),
        (
            "in December 2022 and may 2023",
            [
                (utc(2022, 12, 1), utc(2023, 1, 1)),
                (utc(2023, 5, 1), utc(2023, 6, 1)),
            ],
        ),
        ("trips in 2021", [(utc(2021, 1, 1), utc(2022, 1, 1))]),
        ("on February 30, 2023", []),  # no such day: names nothing
        ("on October 13", []),  # no year: zkr does not know which
        ("may I see the 3000 photos from last week", []),
    ],
)
def test_absolute_dates_in_a_query_become_capture_spans(
    query: str, spans: list[tuple[int, int]]
) -> None:
    widened = [(start - SLACK_SECONDS, end + SLACK_SECONDS) for start, end in spans]
    assert query_date_spans(query) == widened


def relevance(db: MemoryDb, query: str) -> dict[str, int]:
    pack = search(db, query, query_embedding=LANE, limit=50)
    return {item.evidence_ids[0]: item.relevance_basis_points for item in pack.items}


def test_a_capture_in_the_session_of_the_best_match_ranks_higher_until_it_is_deleted(
    db: MemoryDb, registered_plugin: Callable[..., str]
) -> None:
    """Two captures with one text and alike surroundings; the session of one of them also holds
    a capture matching the query better, beyond the context column's window."""
    registered_plugin(LetterPlugin(), name="letters")
    later = 10 * DAY
    near = remember(db, "alpha note", at=0)
    far = remember(db, "alpha note", at=later)
    for step in range(1, max(BEFORE, AFTER) + 2):
        remember(db, "zzzz", at=step)
        remember(db, "zzzz", at=later + step)
    best = remember(db, "alpha beta beta", at=SESSION_GAP_SECONDS - 1)
    db.rebuild(m.RebuildRequest.model_validate({**SCOPE, **LANE}))

    before = relevance(db, "alpha beta")
    assert before[near.evidence_id] > before[far.evidence_id]
    db.delete(m.DeleteRequest(**SCOPE, source_id=best.source_id, deleted_at=later + 100))
    after = relevance(db, "alpha beta")
    assert best.evidence_id not in after
    assert after[near.evidence_id] == after[far.evidence_id]


def test_a_capture_from_the_named_date_ranks_first(
    db: MemoryDb, registered_plugin: Callable[..., str]
) -> None:
    registered_plugin(LetterPlugin(), name="letters")
    named = utc(2023, 10, 13) + 15 * 3600
    other = remember(db, "painted a sunset", at=named - 40 * DAY)
    dated = remember(db, "painted a sunset", at=named)
    db.rebuild(m.RebuildRequest.model_validate({**SCOPE, **LANE}))

    undated = relevance(db, "painted sunset")
    assert undated[dated.evidence_id] == undated[other.evidence_id]
    ranked = search(db, "what was painted on October 13, 2023?", query_embedding=LANE)
    assert ranked.items[0].evidence_ids == [dated.evidence_id]
    assert ranked.items[1].evidence_ids == [other.evidence_id]
    assert ranked.items[0].relevance_basis_points > ranked.items[1].relevance_basis_points


def test_a_named_date_lifts_the_lexical_ranking_too(db: MemoryDb) -> None:
    """Without a query vector: the shorter capture matches "painted" better, the longer one was
    captured on the date the question names; asked with the date, even one item finds it."""
    named = utc(2023, 10, 13) + 15 * 3600
    better = remember(db, "painted", at=named - 40 * DAY)
    dated = remember(db, "painted a big red sunset over the bay", at=named)

    undated = search(db, "what was painted?")
    assert [item.evidence_ids for item in undated.items] == [
        [better.evidence_id],
        [dated.evidence_id],
    ]
    asked = "what was painted on October 13, 2023?"
    ranked = search(db, asked)
    assert [item.evidence_ids for item in ranked.items] == [
        [dated.evidence_id],
        [better.evidence_id],
    ]
    assert ranked.items[0].relevance_basis_points > ranked.items[1].relevance_basis_points
    assert search(db, asked, limit=1).items[0].evidence_ids == [dated.evidence_id]
    # The contract ranking knows nothing of dates.
    contract = search(db, "painted", ranking="contract")
    assert contract.items[0].evidence_ids == [better.evidence_id]


def test_session_and_date_terms_only_count_for_known_anchors() -> None:
    """An anchor without a known capture time (a claim found only by the dense lane, a source
    deleted meanwhile) gets neither term; weights of 0 give the plain fusion."""
    lexical = [(("source", "a"), 2.0, "a"), (("source", "b"), 1.0, "b")]
    dense = [("source", "c")]
    times = {"a": ("conversation", 100), "c": ("conversation", 200)}
    spans = [(150, 250)]
    plain = fuse_scores(lexical, dense, {}, {}, 10, session_weight=0.0, date_weight=0.0)
    assert [target for target, _ in plain] == [("source", "a"), ("source", "b"), ("source", "c")]
    lifted = fuse_scores(lexical, dense, {}, {}, 10, times=times, date_spans=spans)
    # c: in a's session (lexical term 1) and on the named date; b has no time: nothing added.
    assert [target for target, _ in lifted] == [("source", "c"), ("source", "a"), ("source", "b")]
