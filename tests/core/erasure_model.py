"""The erasure interleaving model (issue 26, point 2), shared by the SQLite and PostgreSQL tests.

Three SQLite databases of one person each take ``remember``, ``correct`` and ``forget``; any of
them is exported at any time (a frozen list of pages: a page in flight, or a backup of the feed),
and any exported page is applied to any database later - late, duplicated, reordered (a page
that does not continue what the target holds is refused, as the protocol says), under the
exporter's name or under another one (a backup restored as another upstream). Optionally a
PostgreSQL replica syncs any of the databases or a backup *file* taken earlier. At the end every
database syncs every other (the feed carries everything) and the checks run.

Every capture carries one marker word of its own in its text and in its claim's value, so a
forgotten capture's text is found by that word wherever a byte of it is left.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from zkr import models as m
from zkr.db import MemoryDb
from zkr.errors import ExportError, ZkrError
from zkr.feed.apply import sync

#: ``ZKR_FUZZ_PROFILE=long`` (``nox -s erasure_long``) runs many more and longer interleavings.
LONG = os.environ.get("ZKR_FUZZ_PROFILE", "ci") == "long"
SCOPE = {"tenant_id": "t", "person_id": "sam"}
DATABASES = 3
NAMES = ("laptop", "phone", "tablet")

Step = tuple[Any, ...]


def steps(*, postgres: bool) -> st.SearchStrategy[list[Step]]:
    """A random interleaving of writes, exports, deliveries (and PostgreSQL syncs)."""
    db = st.integers(0, DATABASES - 1)
    pick = st.integers(0, 10**6)
    kinds = [
        st.tuples(st.just("remember"), db),
        st.tuples(st.just("remember"), db),
        st.tuples(st.just("correct"), db, pick),
        st.tuples(st.just("forget"), db, pick),
        st.tuples(st.just("forget"), db, pick),
        st.tuples(st.just("export"), db, st.sampled_from([1, 2, 5, 100])),
        st.tuples(st.just("export"), db, st.sampled_from([3, 100])),
        # deliver: target, which export, which page (None: all of them, in order), renamed
        st.tuples(st.just("deliver"), db, pick, st.none() | st.integers(0, 30), st.booleans()),
        st.tuples(st.just("deliver"), db, pick, st.none(), st.booleans()),
    ]
    if postgres:
        kinds += [
            st.tuples(st.just("backup"), db),
            # pg: a live database (None) or a backup file taken earlier
            st.tuples(st.just("pg"), db, st.none() | pick),
        ]
    size = 60 if LONG else 20
    # A few captures first, often exported at once (an old copy that outlives a later forget).
    start = st.lists(st.tuples(st.just("remember"), db), min_size=1, max_size=4)
    early = st.lists(
        st.tuples(st.just("export"), db, st.sampled_from([2, 100])), min_size=0, max_size=2
    )
    rest = st.lists(st.one_of(kinds), min_size=3, max_size=size)
    return st.tuples(start, early, rest).map(lambda parts: [*parts[0], *parts[1], *parts[2]])


@dataclass
class Capture:
    marker: str
    source_id: str
    claim_id: str


@dataclass
class World:
    """The databases, what was exported, and what the test knows was forgotten."""

    folder: Path
    dbs: list[MemoryDb]
    captures: list[Capture] = field(default_factory=list)
    forgotten: set[str] = field(default_factory=set)
    exports: list[tuple[int, list[tuple[tuple[int, int], m.ExportPage]]]] = field(
        default_factory=list
    )
    backups: list[tuple[int, Path]] = field(default_factory=list)
    clock: int = 1_000
    #: Events whose text apply dropped as copies of erased content (reported as statistics).
    dropped: int = 0
    corrected: int = 0
    pg_sync: Callable[[MemoryDb, str], None] | None = None

    @classmethod
    def open(cls, folder: Path) -> World:
        return cls(folder, [MemoryDb(folder / f"{name}.db") for name in NAMES])

    def close(self) -> None:
        for db in self.dbs:
            db.close()

    def paths(self) -> list[Path]:
        return [self.folder / f"{name}.db" for name in NAMES]

    def tick(self) -> int:
        self.clock += 10
        return self.clock

    # ------------------------------------------------------------------------------------------

    def run(self, step: Step) -> None:
        getattr(self, f"_{step[0]}")(*step[1:])
        self.absorbed()

    def absorbed(self) -> None:
        """After every step: a database that holds an erasure holds no byte of its text, whatever
        arrived since (a later copy of the erasure must not be what hides it at the end)."""
        for name, path, db in zip(NAMES, self.paths(), self.dbs, strict=True):
            erased = {
                row[0]
                for row in db.conn.execute(
                    "SELECT target_id FROM erasures WHERE target_kind = 'source'"
                )
            }
            markers = [c.marker for c in self.captures if c.source_id in erased]
            if markers:
                data = file_bytes(path)
                assert [x for x in markers if x.encode() in data] == [], name

    def _marker(self) -> str:
        # Fixed width, letters around: no marker is a substring of another, none is stemmed away.
        return f"qx{len(self.captures):04d}zq"

    def _remember(self, i: int) -> None:
        marker, at = self._marker(), self.tick()
        result = self.dbs[i].remember(
            m.RememberRequest.model_validate(
                {
                    **SCOPE,
                    "kind": "conversation",
                    "text": f"Sam said {marker} today",
                    "captured_at": at,
                    "recorded_at": at,
                    "claim": {
                        "subject": "Sam",
                        "predicate": "likes",
                        "value": marker,
                        "kind": "preference",
                        "valid_from": at,
                    },
                }
            )
        )
        assert result.claim_id is not None
        self.captures.append(Capture(marker, result.source_id, result.claim_id))

    def _correct(self, i: int, pick: int) -> None:
        if not self.captures:
            return
        old = self.captures[pick % len(self.captures)]
        marker, at = self._marker(), self.tick()
        request = m.CorrectRequest(
            **SCOPE,
            claim_id=old.claim_id,
            text=f"no, Sam now likes {marker}",
            value=marker,
            valid_at=at,
            recorded_at=at,
        )
        # Database i corrects it, or the next one where the claim is live.
        for db in self.dbs[i:] + self.dbs[:i]:
            try:
                result = db.correct(request)
            except ZkrError:
                continue  # not live here (unknown, superseded, retracted): refused, no change
            self.captures.append(Capture(marker, result.source_id, result.claim_id))
            self.corrected += 1
            return

    def _forget(self, i: int, pick: int) -> None:
        if not self.captures:
            return
        capture = self.captures[pick % len(self.captures)]
        at = self.tick()
        # Database i forgets it, or the next one that holds it.
        for db in self.dbs[i:] + self.dbs[:i]:
            try:
                db.forget(m.ForgetRequest(**SCOPE, source_id=capture.source_id, erased_at=at))
            except ZkrError:
                continue  # this database never held it
            self.forgotten.add(capture.marker)
            return

    def _export(self, i: int, limit: int) -> None:
        pages: list[tuple[tuple[int, int], m.ExportPage]] = []
        after, mark = (0, -1), None
        while True:
            page = self.dbs[i].export(
                m.ExportRequest(
                    **SCOPE,
                    export_format=1,
                    after_commit=after[0],
                    after_event_index=after[1],
                    high_water_mark=mark,
                    limit=limit,
                )
            )
            pages.append((after, page))
            after, mark = (
                (page.next_after_commit, page.next_after_event_index),
                page.high_water_mark,
            )
            if page.complete:
                break
        self.exports.append((i, pages))

    def _deliver(self, target: int, pick: int, page: int | None, renamed: bool) -> None:
        if not self.exports:
            return
        number = pick % len(self.exports)
        origin, pages = self.exports[number]
        if origin == target and not renamed:
            return  # a database is not its own upstream under its own name
        upstream = f"{NAMES[origin]}~{number}" if renamed else NAMES[origin]
        chosen = pages if page is None else [pages[page % len(pages)]]
        for (after_commit, after_index), body in chosen:
            try:
                result = self.dbs[target].apply(
                    m.ApplyRequest(
                        **SCOPE,
                        upstream=upstream,
                        after_commit=after_commit,
                        after_event_index=after_index,
                        page=body,
                    )
                )
                self.dropped += getattr(result, "dropped_events", 0)
            except ExportError:
                return  # does not continue what the target holds: refused, nothing applied

    def _backup(self, i: int) -> None:
        path = self.folder / f"backup-{len(self.backups)}-{NAMES[i]}.db"
        target = sqlite3.connect(path)
        self.dbs[i].conn.backup(target)
        target.close()
        self.backups.append((i, path))

    def _pg(self, i: int, pick: int | None) -> None:
        assert self.pg_sync is not None
        if pick is None or not self.backups:
            self.pg_sync(self.dbs[i], NAMES[i])
            return
        number = pick % len(self.backups)
        origin, path = self.backups[number]
        with MemoryDb(path) as old:
            # A backup restored somewhere is another upstream to PostgreSQL.
            self.pg_sync(old, f"{NAMES[origin]}-backup-{number}")

    # ------------------------------------------------------------------------------------------

    def settle(self) -> None:
        """Everything reaches everyone: each database syncs into the first, which then syncs into
        each of them (the feed carries what a database received, so two hops suffice)."""
        hub = self.dbs[0]
        for source in range(1, DATABASES):
            sync(self.dbs[source], hub, "t", "sam", upstream=NAMES[source])
        for target in range(1, DATABASES):
            sync(hub, self.dbs[target], "t", "sam", upstream=NAMES[0])
        for db in self.dbs:
            db.checkpoint()
        # Then every export ever made arrives once more, late, as a restored backup would.
        for number, (origin, pages) in enumerate(self.exports):
            for target in range(DATABASES):
                for (after_commit, after_index), body in pages:
                    result = self.dbs[target].apply(
                        m.ApplyRequest(
                            **SCOPE,
                            upstream=f"{NAMES[origin]}-late-{number}",
                            after_commit=after_commit,
                            after_event_index=after_index,
                            page=body,
                        )
                    )
                    self.dropped += getattr(result, "dropped_events", 0)
        self.absorbed()


def content(db: MemoryDb) -> dict[str, Any]:
    """The person's content as text: what must be equal everywhere (statuses and deletion times
    are not content: concurrent writes may order them differently)."""
    conn = db.conn
    scope = (SCOPE["tenant_id"], SCOPE["person_id"])
    where = " WHERE tenant_id = ? AND person_id = ?"
    return {
        "sources": sorted(
            conn.execute(
                "SELECT id, content, deleted_at IS NULL FROM sources" + where, scope
            ).fetchall()
        ),
        "evidence": sorted(conn.execute("SELECT id, quote FROM evidence" + where, scope)),
        "claims": sorted(
            conn.execute("SELECT id, subject, predicate, value FROM claims" + where, scope)
        ),
        "erased": sorted(
            conn.execute("SELECT target_kind, target_id FROM erasures" + where, scope)
        ),
    }


def file_bytes(path: Path) -> bytes:
    wal = Path(f"{path}-wal")
    return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def leaks(world: World) -> dict[str, list[str]]:
    """Where a forgotten marker is still found: any byte of a database file or its WAL, or a
    search answer (FTS keeps terms prefix-compressed, so bytes alone would not prove it)."""
    found: dict[str, list[str]] = {}
    for name, path, db in zip(NAMES, world.paths(), world.dbs, strict=True):
        data = file_bytes(path)
        for marker in sorted(world.forgotten):
            if marker.encode() in data:
                found.setdefault(marker, []).append(f"{name} file")
            for ranking in ("contract", "recall"):
                request: dict[str, Any] = {**SCOPE, "query": marker, "limit": 20}
                if "ranking" in m.SearchRequest.model_fields:
                    request["ranking"] = ranking
                pack = db.search(m.SearchRequest.model_validate(request))
                if marker in pack.model_dump_json(exclude={"query"}):
                    found.setdefault(marker, []).append(f"{name} search {ranking}")
    return found


def check(world: World) -> None:
    """At the end: no forgotten text anywhere, and the same content everywhere."""
    assert leaks(world) == {}
    first = content(world.dbs[0])
    for db in world.dbs[1:]:
        assert content(db) == first
    live = {row[1] for row in first["sources"] if row[2]}
    for marker in world.forgotten:
        assert not any(marker in text for text in live)
