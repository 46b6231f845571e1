"""Would a recall index without a stored copy of its text make ``remember`` cheaper? (issue 27.2)

A lab, not a product path: it measures the schema change the remember cost seemed to ask for and
changes nothing in zkr. ``recall_fts`` stores each row's text in ``recall_fts_content`` (the
capture's analysed text, its statement and its neighbours' texts: about four captures' text per
row). The alternative built here, in a copy of a store:

* ``recall_rows(rowid, analysed, statement, before2, before1, after1)``: per live capture its
  analysed text only where it differs from ``sources.content`` (never for English), its
  statement, and the rowids of its neighbours (the window of :mod:`zkr.store.recall_index`);
* ``recall_source``: a view giving ``(rowid, content, statement, context)`` from those rows and
  ``sources`` in SQL (no Python function), the context joined in time order;
* ``recall_x``: the same FTS5 table as ``recall_fts`` with ``content='recall_source'``
  (external content): a rewrite deletes the old row with the ``'delete'`` command and the values
  the view gives *before* anything changes, then inserts the new values.

It reports the tables' sizes, checks that ``recall_x`` answers 200 one-word queries exactly as
``recall_fts`` does (rowids and bm25 with the recall weights), runs FTS5's ``integrity-check``,
then times *N* appends to a timeline written both ways, interleaved in blocks of 50, one
transaction each (a new ``sources`` row, the capture's own row, the predecessor's context
rewrite): CPU per append and WAL frames per append.

Usage::

    python benchmarks/recall_content_lab.py .bench/corpus-100000-....db [--appends 1000]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from zkr.store.analysis import RECALL_TOKENIZER, index_text
from zkr.store.recall_index import SESSION_GAP_SECONDS

_GAP = SESSION_GAP_SECONDS

# The window of zkr.store.recall_index (two before, one after, within the session gap) by rowid.
_WINDOWS = f"""
WITH live AS (SELECT rowid AS rid, tenant_id, person_id, kind, captured_at, content
              FROM sources WHERE deleted_at IS NULL),
o AS (SELECT rid, captured_at, content,
  lag(rid, 2) OVER w AS b2, lag(captured_at, 2) OVER w AS tb2,
  lag(rid, 1) OVER w AS b1, lag(captured_at, 1) OVER w AS tb1,
  lead(rid, 1) OVER w AS a1, lead(captured_at, 1) OVER w AS ta1
  FROM live WINDOW w AS (PARTITION BY tenant_id, person_id, kind ORDER BY captured_at, rid))
SELECT rid, content,
  CASE WHEN tb2 BETWEEN captured_at - {_GAP} AND captured_at + {_GAP} THEN b2 END,
  CASE WHEN tb1 BETWEEN captured_at - {_GAP} AND captured_at + {_GAP} THEN b1 END,
  CASE WHEN ta1 BETWEEN captured_at - {_GAP} AND captured_at + {_GAP} THEN a1 END
FROM o
"""

_TEXT = "coalesce({r}.analysed, {s}.content)"
_VIEW = f"""
CREATE VIEW recall_source(rowid, content, statement, context) AS
SELECT r.rowid, {_TEXT.format(r="r", s="s")}, r.statement,
  coalesce({_TEXT.format(r="x2", s="y2")} || char(10), '')
  || coalesce({_TEXT.format(r="x1", s="y1")} || char(10), '')
  || coalesce({_TEXT.format(r="z1", s="w1")}, '')
FROM recall_rows r JOIN sources s ON s.rowid = r.rowid
LEFT JOIN recall_rows x2 ON x2.rowid = r.before2 LEFT JOIN sources y2 ON y2.rowid = r.before2
LEFT JOIN recall_rows x1 ON x1.rowid = r.before1 LEFT JOIN sources y1 ON y1.rowid = r.before1
LEFT JOIN recall_rows z1 ON z1.rowid = r.after1 LEFT JOIN sources w1 ON w1.rowid = r.after1
"""


def build(conn: sqlite3.Connection) -> None:
    statements = dict(conn.execute("SELECT rowid, statement FROM recall_fts"))
    rows = []
    for rid, content, b2, b1, a1 in conn.execute(_WINDOWS).fetchall():
        analysed = index_text(content)
        # The second capture before is a neighbour only when the first one is.
        rows.append((rid, None if analysed == content else analysed, statements.get(rid, ""),
                     b2 if b1 is not None else None, b1, a1))  # fmt: skip
    conn.execute("BEGIN")
    conn.execute(
        "CREATE TABLE recall_rows(rowid INTEGER PRIMARY KEY, analysed TEXT,"
        " statement TEXT NOT NULL, before2 INTEGER, before1 INTEGER, after1 INTEGER)"
    )
    conn.executemany("INSERT INTO recall_rows VALUES (?, ?, ?, ?, ?, ?)", rows)
    conn.execute(_VIEW)
    conn.execute(
        "CREATE VIRTUAL TABLE recall_x USING fts5(content, statement, context,"
        f" content='recall_source', content_rowid='rowid', tokenize=\"{RECALL_TOKENIZER}\")"
    )
    conn.execute("INSERT INTO recall_x(recall_x) VALUES('rebuild')")
    conn.execute("INSERT INTO recall_x(recall_x) VALUES('optimize')")
    conn.execute("COMMIT")


def same_answers(conn: sqlite3.Connection, count: int = 200) -> int:
    """How many of *count* one-word queries answer differently from ``recall_fts``."""
    rng = random.Random(1)
    texts = conn.execute("SELECT content FROM sources ORDER BY rowid LIMIT 2000").fetchall()
    words = [word for (text,) in texts for word in text.split() if word.isalpha()]
    query = (
        "SELECT rowid, bm25({t}, 1.0, 2.0, 0.35), bm25({t}, 1.0, 2.0, 0.0) FROM {t}"
        " WHERE {t} MATCH ? ORDER BY 2, 1 LIMIT 50"
    )
    different = 0
    for word in rng.sample(words, count):
        match = '"' + word.replace('"', '""') + '"'
        old = conn.execute(query.format(t="recall_fts"), (match,)).fetchall()
        new = conn.execute(query.format(t="recall_x"), (match,)).fetchall()
        different += old != new
    return different


class Appends:
    """New captures at the end of one timeline, written to ``recall_fts`` or to ``recall_x``."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.texts = [
            row[0] for row in conn.execute("SELECT content FROM sources ORDER BY rowid LIMIT 2000")
        ]
        self.first = conn.execute("SELECT max(rowid) FROM sources").fetchone()[0] + 1

    def _source(self, index: int, offset: int) -> tuple[int, str]:
        rid, text = self.first + offset + index, self.texts[index % len(self.texts)]
        self.conn.execute(
            "INSERT INTO sources(rowid, id, tenant_id, person_id, revision, kind, content,"
            " captured_at, recorded_at) VALUES (?, ?, 'lab', 'p', 1, 'x', ?, ?, 0)",
            (rid, f"lab-{offset + index}", text, 2_000_000_000 + index),
        )
        return rid, text

    def _analysed(self, *indexes: int) -> list[str]:
        return [index_text(self.texts[i % len(self.texts)]) for i in indexes if i >= 0]

    def stored(self, index: int, offset: int) -> None:
        """Today's table: insert the row, rewrite the predecessor's context in place."""
        rid, text = self._source(index, offset)
        own = index_text(text)
        self.conn.execute(
            "INSERT INTO recall_fts(rowid, content, statement, context) VALUES (?, ?, '', ?)",
            (rid, own, "\n".join(self._analysed(index - 2, index - 1))),
        )
        if index > 0:
            context = "\n".join([*self._analysed(index - 3, index - 2), own])
            self.conn.execute(
                "UPDATE recall_fts SET context = ? WHERE rowid = ?", (context, rid - 1)
            )

    def external(self, index: int, offset: int) -> None:
        """The external-content table: delete the predecessor with its old values (the view,
        before anything changes), store the rows, insert both rows' new values."""
        rid, text = self._source(index, offset)
        own = index_text(text)
        if index > 0:
            self.conn.execute(
                "INSERT INTO recall_x(recall_x, rowid, content, statement, context)"
                " SELECT 'delete', rowid, content, statement, context FROM recall_source"
                " WHERE rowid = ?",
                (rid - 1,),
            )
        before = [rid - 2, rid - 1][-index:] if index else []
        self.conn.execute(
            "INSERT INTO recall_rows VALUES (?, ?, '', ?, ?, NULL)",
            (rid, None if own == text else own, *([None] * (2 - len(before)) + before)),
        )
        self.conn.execute(
            "INSERT INTO recall_x(rowid, content, statement, context) VALUES (?, ?, '', ?)",
            (rid, own, "\n".join(self._analysed(index - 2, index - 1))),
        )
        if index > 0:
            self.conn.execute("UPDATE recall_rows SET after1 = ? WHERE rowid = ?", (rid, rid - 1))
            self.conn.execute(
                "INSERT INTO recall_x(rowid, content, statement, context)"
                " SELECT rowid, content, statement, context FROM recall_source WHERE rowid = ?",
                (rid - 1,),
            )


def time_appends(conn: sqlite3.Connection, wal: Path, count: int) -> dict[str, tuple[float, float]]:
    """CPU ms and WAL frames per append, each way (the same texts; blocks of 50, alternating)."""
    appends = Appends(conn)
    ways: dict[str, Callable[[int, int], None]] = {
        "stored": appends.stored,
        "external": appends.external,
    }
    offsets = {"stored": 0, "external": count}  # two timelines, the same texts
    totals = {name: [0.0, 0.0] for name in ways}
    for block in range(0, count, 50):
        order = list(ways) if block % 100 == 0 else list(reversed(ways))
        for name in order:
            for index in range(block, min(block + 50, count)):
                frames = wal.stat().st_size if wal.exists() else 0
                started = time.process_time()
                conn.execute("BEGIN IMMEDIATE")
                ways[name](index, offsets[name])
                conn.execute("COMMIT")
                totals[name][0] += time.process_time() - started
                totals[name][1] += (wal.stat().st_size - frames) / (24 + 4096)
    return {name: (1000 * cpu / count, frames / count) for name, (cpu, frames) in totals.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", type=Path, help="a zkr store (copied; never modified)")
    parser.add_argument("--appends", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="zkr-recall-lab-") as folder:
        path = Path(folder) / "lab.db"
        shutil.copyfile(args.store, path)
        conn = sqlite3.connect(path, isolation_level=None)
        # As zkr opens a store.
        conn.execute("PRAGMA secure_delete = ON")
        conn.execute("PRAGMA cache_size = -65536")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA wal_autocheckpoint = 0")  # the WAL's growth counts the frames
        build(conn)
        for name, size in conn.execute(
            "SELECT name, sum(pgsize) FROM dbstat WHERE name LIKE 'recall%'"
            " GROUP BY name ORDER BY 2 DESC"
        ):
            print(f"{size / 1_048_576:9.1f} MB  {name}")
        print("one-word queries answered differently:", same_answers(conn), "of 200")
        conn.execute("INSERT INTO recall_x(recall_x) VALUES('integrity-check')")
        print("integrity-check: ok")
        for name, (cpu, frames) in time_appends(conn, Path(f"{path}-wal"), args.appends).items():
            print(f"{name}: {cpu:.3f} ms CPU, {frames:.1f} WAL frames per append")
        conn.execute("INSERT INTO recall_x(recall_x) VALUES('integrity-check')")
        print("integrity-check after the appends: ok")
        conn.close()
    print(f"load average {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
