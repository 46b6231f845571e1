"""``zkr import`` writes new lines in bulk (issue 27): the database it leaves is byte for byte the
one ``remember`` leaves when called line by line.

The reference is the one-by-one import as it was before the bulk path (each line parsed, keyed,
checked for erasure, then ``remember`` in its own savepoint), written out here on purpose. Both
run on real SQLite files with the same id source (a counter in place of the random ids) and the
same clocks (every time comes from the lines). Then every table, FTS5's shadow tables included, is
compared as ``iterdump()`` text. FTS5's segment layout depends on when it flushed (the bulk path
flushes fewer, larger segments; no answer reads the layout), so each FTS5 index is first checked
against its table's contents (``integrity-check``) and then rebuilt from them (``rebuild``, whose
bytes depend on the contents alone): equal dumps mean equal rows, equal FTS contents, and indexes
that held exactly those contents.

Hypothesis draws the lines: scopes, kinds, texts, times with ties and session gaps, keys reused
(replays and conflicts, inside one batch and across batches), claims and locators, and lines that
``remember`` refuses before and inside its transaction; some captures are stored (and one
deleted, one forgotten) before the import, so batches land beside, between and after stored
timelines.
"""

from __future__ import annotations

import io
import itertools
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zkr.writes.capture
from zkr import models as m
from zkr.db import MemoryDb
from zkr.errors import ZkrError
from zkr_cli import importing

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "lisbon",
    "coffee",
    "dog",
    "é",
    "日本",
    '"q"',
    "a\\b",
    "t\tu",
    "\u2028",
]
BASE = 1_700_000_000

texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
# Times: ties, neighbours within a session and gaps longer than one (3 h).
times = st.integers(0, 12).map(lambda step: BASE + step * 2_700)


@st.composite
def lines(draw: st.DrawFn) -> dict[str, Any]:
    line: dict[str, Any] = {
        "tenant_id": draw(st.sampled_from(["t1", "t2"])),
        "person_id": draw(st.sampled_from(["p1", "p2"])),
        "kind": draw(st.sampled_from(["conversation", "conversation", "document", "audio"])),
        "text": draw(st.one_of(texts, texts, texts, st.just("  "))),
        "captured_at": draw(times),
        "recorded_at": draw(times),
    }
    key = draw(st.one_of(st.none(), st.sampled_from(["k1", "k2", "k3", "k4"])))
    if key is not None:
        line["ingestion_key"] = key
    if draw(st.booleans()):
        line["claim"] = {
            "subject": draw(st.sampled_from(["me", "Sam", " "])),
            "predicate": draw(st.sampled_from(["lives_in", "likes"])),
            "value": draw(texts),
            "kind": draw(st.sampled_from(["fact", "preference"])),
            "valid_from": draw(times),
        }
    if draw(st.integers(0, 3)) == 0:
        start = draw(st.integers(0, 10))
        line["locator"] = {
            "device_id": "phone",
            "provider": "whisper",
            "stream_id": draw(st.sampled_from(["s1", "s2"])),
            "segment_id": draw(st.sampled_from(["g1", "g2"])),
            "start_ms": start,
            "end_ms": start + draw(st.integers(-1, 5)),
        }
    return line


def one_by_one(db: MemoryDb, data: bytes) -> dict[str, Any]:
    """The import as it was: each line on its own, through ``remember`` in a savepoint."""
    from zkr.operations import OPERATIONS, parse

    remember = OPERATIONS["remember"]
    summary = importing.ImportSummary()
    with db.atomic() as conn:
        for number, raw in enumerate(data.split(b"\n"), 1):
            summary.lines = number
            if not raw.strip():
                continue
            try:
                request = parse(remember, raw)
                assert isinstance(request, m.RememberRequest)
                if request.ingestion_key is None:
                    key = importing.derived_key(request)
                    request = request.model_copy(update={"ingestion_key": key})
                scope_key = (request.tenant_id, request.person_id, str(request.ingestion_key))
                if zkr.writes.capture.is_erased(conn, *scope_key):
                    summary.dropped += 1
                    continue
                known = zkr.writes.capture.is_stored(conn, *scope_key)
                remember.call(db, request)
            except ZkrError as exc:
                summary.refuse(number, exc.message)
                continue
            if known:
                summary.replayed += 1
            else:
                summary.stored += 1
    return summary.to_json()


def dump(path: Path) -> list[str]:
    """Every table as SQL text, FTS5's index rebuilt from its content once checked against it."""
    conn = sqlite3.connect(path)
    with conn:
        for table in ("source_fts", "recall_fts"):
            # Fails when the index the writes left does not hold exactly the table's contents.
            conn.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")
            conn.execute(f"INSERT INTO {table}({table}) VALUES ('rebuild')")
    text = list(conn.iterdump())
    conn.close()
    return text


def build(
    path: Path,
    existing: list[dict[str, Any]],
    data: bytes,
    bulk: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[dict[str, Any], list[str]]:
    counter = itertools.count(1)
    monkeypatch.setattr(zkr.writes.capture, "new_id", lambda: f"{next(counter):032x}")
    with MemoryDb(path) as db:
        stored: list[dict[str, Any]] = []
        for payload in existing:
            try:
                result = db.remember(m.RememberRequest.model_validate(payload))
            except (ZkrError, ValueError):  # a refused line (pydantic's errors are ValueErrors)
                continue
            scope = {"tenant_id": payload["tenant_id"], "person_id": payload["person_id"]}
            stored.append({**scope, "source_id": result.source_id})
        if len(stored) > 2:
            # A tombstone leaves a gap in a timeline; an erasure makes its key drop copies.
            db.run("delete", {**stored[0], "deleted_at": BASE + 50_000})
            db.run("forget", {**stored[1], "erased_at": BASE + 50_000})
        if bulk:
            summary = importing.import_lines(db, io.BytesIO(data)).to_json()
        else:
            summary = one_by_one(db, data)
        # remember defers its recall rows: the databases are compared with them written.
        db.apply_recall_backlog()
    return summary, dump(path)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    existing=st.lists(lines(), max_size=8),
    imported=st.lists(lines(), min_size=1, max_size=40),
    batch=st.integers(1, 9),
)
def test_bulk_import_leaves_the_database_one_by_one_remember_leaves(
    existing: list[dict[str, Any]],
    imported: list[dict[str, Any]],
    batch: int,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(importing, "BATCH_LINES", batch)
    data = "\n".join(json.dumps(line) for line in imported).encode()
    folder = tmp_path_factory.mktemp("bulk")
    expected_summary, expected = build(folder / "one.db", existing, data, False, monkeypatch)
    summary, got = build(folder / "bulk.db", existing, data, True, monkeypatch)
    assert summary == expected_summary
    assert got == expected
