"""The recall index kept write by write equals one built from scratch, on any timeline.

``index_capture`` reads one stretch of the timeline and derives every neighbour's window from it
(issue 13: ``remember``'s upkeep). These sequences put captures anywhere on the timeline — back
in time, at the same second as others (ties go by insertion), just inside and just outside the
session gap, in two kinds and two scopes — and delete some, so a wrong stretch or a wrong window
would leave a context that differs from :func:`build_recall_index`'s.
"""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from zkr import models as m
from zkr.db import MemoryDb
from zkr.store.recall_index import AFTER, BEFORE, SESSION_GAP_SECONDS, build_recall_index

GAP = SESSION_GAP_SECONDS
# Offsets that sit on, just inside and just outside the session gap, and on each other.
OFFSETS = [0, 0, 1, 60, GAP - 1, GAP, GAP + 1, 2 * GAP, 2 * GAP + 1, 5 * GAP]

operation = st.one_of(
    st.tuples(
        st.just("remember"),
        st.sampled_from(OFFSETS),
        st.booleans(),  # back in time from the latest capture, or forward
        st.sampled_from(["conversation", "conversation", "screen"]),
        st.sampled_from(["sam", "sam", "kim"]),
        st.booleans(),  # with a claim
    ),
    st.tuples(st.just("delete"), st.integers(0, 40)),
)


def index_rows(db: MemoryDb) -> list[tuple[Any, ...]]:
    return db.conn.execute("SELECT rowid, * FROM recall_fts ORDER BY rowid").fetchall()


def remember(offset: int, back: bool) -> tuple[Any, ...]:
    return ("remember", offset, back, "conversation", "sam", False)


@settings(max_examples=150, deadline=None)
@given(st.lists(operation, min_size=1, max_size=24))
# The edges, every run: a capture back in time just outside and just inside the gap of the one
# after it, and captures at the same second (their order is their insertion order).
@example([remember(0, False), remember(GAP + 1, True)])
@example([remember(0, False), remember(2 * GAP, True), remember(GAP, False)])
# A neighbour's own neighbour lies further than one gap from the new capture.
@example([remember(0, False), remember(GAP, False), remember(GAP + 1, True)])
@example([remember(0, False), remember(GAP, True), remember(GAP + 1, False)])
@example([remember(0, False), remember(0, False), remember(0, True), remember(1, True)])
@example([remember(0, False), *[remember(1, False) for _ in range(5)], ("delete", 2)])
def test_the_kept_index_equals_a_rebuild_on_any_timeline(operations: list[tuple[Any, ...]]) -> None:
    with MemoryDb(":memory:") as db:
        latest = 10 * GAP
        live: list[tuple[str, str, int]] = []  # (person, source id, captured_at)
        for index, op in enumerate(operations):
            if op[0] == "remember":
                _, offset, back, kind, person, with_claim = op
                at = latest - offset if back else latest + offset
                latest = max(latest, at)
                payload: dict[str, Any] = {
                    "tenant_id": "t",
                    "person_id": person,
                    "kind": kind,
                    "text": f"turn w{index:02d}x",
                    "captured_at": at,
                    "recorded_at": 20 * GAP + index,
                }
                if with_claim:
                    payload["claim"] = {
                        "subject": person,
                        "predicate": "said_thing",
                        "value": f"value v{index:02d}x",
                        "kind": "fact",
                        "valid_from": at,
                    }
                stored = db.remember(m.RememberRequest.model_validate(payload))
                live.append((person, stored.source_id, at))
            elif live:
                person, source_id, at = live.pop(op[1] % len(live))
                db.delete(
                    m.DeleteRequest(
                        tenant_id="t",
                        person_id=person,
                        source_id=source_id,
                        deleted_at=20 * GAP + index,
                    )
                )
        kept = index_rows(db)
        with db.atomic() as conn:
            build_recall_index(conn)
        assert index_rows(db) == kept


def test_a_capture_back_in_time_lands_in_the_windows_that_hold_it() -> None:
    """Two before and one after: "beta", stored last between the others, is the one after
    "alpha" and one of the two before "gamma"."""
    with MemoryDb(":memory:") as db:
        scope = {"tenant_id": "t", "person_id": "sam", "kind": "conversation"}
        for at, text in ((100, "alpha"), (300, "gamma"), (200, "beta")):
            db.remember(
                m.RememberRequest.model_validate(
                    {**scope, "text": text, "captured_at": at, "recorded_at": 1000 + at}
                )
            )
        contexts = dict(db.conn.execute("SELECT content, context FROM recall_fts").fetchall())
    assert (BEFORE, AFTER) == (2, 1)
    assert contexts == {"alpha": "beta", "beta": "alpha\ngamma", "gamma": "alpha\nbeta"}


def test_a_remember_reads_its_timeline_once_and_rewrites_one_neighbour() -> None:
    """The recall index's upkeep per ``remember`` at the end of a conversation (issue 27.2): both
    sides of the timeline in one statement, the capture's own row and the row of the one capture
    whose window gained it (the one before it: one after)."""
    with MemoryDb(":memory:") as db:
        scope = {"tenant_id": "t", "person_id": "sam", "kind": "conversation"}
        for at in (100, 200, 300):
            db.remember(
                m.RememberRequest.model_validate(
                    {**scope, "text": f"turn {at}", "captured_at": at, "recorded_at": at}
                )
            )
        statements: list[str] = []
        # zkr's own statements: FTS5's internal ones come as comments ("-- ...").
        db.conn.set_trace_callback(
            lambda sql: None if sql.startswith("--") else statements.append(sql)
        )
        db.remember(
            m.RememberRequest.model_validate(
                {**scope, "text": "turn last", "captured_at": 400, "recorded_at": 400}
            )
        )
        db.conn.set_trace_callback(None)
        contexts = dict(db.conn.execute("SELECT content, context FROM recall_fts").fetchall())
    timeline = [sql for sql in statements if "captured_at BETWEEN" in sql]
    writes = [sql.split("(")[0].split(" SET")[0] for sql in statements if "recall_fts" in sql]
    assert len(timeline) == 1
    assert writes == ["INSERT INTO recall_fts", "UPDATE recall_fts"]
    assert contexts["turn last"] == "turn 200\nturn 300"
    assert contexts["turn 300"] == "turn 100\nturn 200\nturn last"
