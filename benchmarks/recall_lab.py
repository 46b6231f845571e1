"""An offline lab for the recall ranking's fusion: dump LoCoMo features once, tune in numpy.

Usage (from the repository root, the workspace installed, ``zkr-embed-e5`` for the e5 lane)::

    python benchmarks/recall_lab.py dump  --db /tmp/locomo.db --out /tmp/lab.pkl [--lane e5]
    python benchmarks/recall_lab.py sweep --features /tmp/lab.pkl
    python benchmarks/recall_lab.py windows --db /tmp/locomo.db --features /tmp/lab.pkl 2,1,0.35

``dump`` stores every LoCoMo conversation in ``--db`` (kept and reused: replays are free), fills
the lane with ``rebuild`` (skipped when it is already complete), and writes, per question, the
features of every capture of its conversation: recall-index bm25 (with and without the context
column), dense cosine, the capture's place on its session timeline. The pickle holds numbers and
question ids only, no text of the data set; keep it outside the repository anyway.

``sweep`` evaluates fusions on those arrays in seconds: any@10, any@50 and MRR of categories 1-4,
on the development conversations (0-4: the ones to tune on) and the held-out ones (5-9: report,
never tune). A fusion scores only what zkr can see: the lexical list's first ``depth`` rows and
the dense scores of the scope.

``windows`` scores the recall index's neighbour window (``before,after,context weight``): it
rebuilds ``recall_fts`` with that window in a copy of the dumped store, recomputes the lexical
features and scores the lexical ranking (with and without the date term) and hybrid fusions.
"""

from __future__ import annotations

import argparse
import pickle
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent))

import locomo

Floats = NDArray[np.float64]
CATEGORIES_1_4 = frozenset({1, 2, 3, 4})


@dataclass
class Scope:
    """One conversation's captures in timeline order."""

    index: int
    turns: list[str]  # dia_id per position
    session: NDArray[np.intp]  # session number per position (a gap of > 3 h starts a new one)


@dataclass
class Item:
    """One question's features over its scope's positions."""

    qid: str
    conv: int
    category: int
    gold: NDArray[np.bool_]  # cited turn per position (original gold)
    lexical: Floats  # -bm25 with the context column (0: no match)
    own: Floats  # -bm25 without the context column's weight (0: no match)
    dense: Floats  # cosine
    dated: NDArray[np.bool_] | None = None  # captured within a date the question names (sweep)


# ----------------------------------------------------------------------------------------------
# dump
# ----------------------------------------------------------------------------------------------

_SCOPE_ROWS = """
SELECT s.id, s.rowid, s.captured_at, s.origin_evidence_id, v.vector
FROM sources AS s JOIN embeddings AS v
  ON v.target_kind = 'source' AND v.target_id = s.id AND v.model = ? AND v.version = ?
WHERE s.tenant_id = ? AND s.person_id = ? AND s.deleted_at IS NULL
ORDER BY s.captured_at, s.rowid
"""

_BM25 = """
SELECT s.rowid, -bm25(recall_fts, 1.0, 1.0, :w) FROM recall_fts
CROSS JOIN sources AS s ON s.rowid = recall_fts.rowid
WHERE recall_fts MATCH :match AND s.tenant_id = :tenant AND s.person_id = :person
"""


def bm25_values(
    conn: Any, query: str, context_weight: float, person: str, position: dict[int, int]
) -> Floats:
    """-bm25 of every capture of *person*'s scope for the recall query of *query* (0: no match),
    at the capture's place in *position* (rowid -> place)."""
    from zkr.retrieval._recall import recall_match

    values = np.zeros(len(position))
    match = recall_match(query)
    if match is not None:
        params = {"w": context_weight, "match": match, "tenant": locomo.TENANT, "person": person}
        for rowid, score in conn.execute(_BM25, params):
            values[position[rowid]] = score
    return values


def dump(db_path: Path, out: Path, lane: str, query_cache: Path | None, indexes: list[int]) -> None:
    from zkr.db import MemoryDb
    from zkr.retrieval._recall import CONTEXT_WEIGHT
    from zkr.store.recall_index import SESSION_GAP_SECONDS

    model, version, _ = locomo.LANES[lane]
    convs = locomo.load(locomo.DEFAULT_DATA, list(range(10)))
    asked = [conv for conv in convs if conv.index in indexes]
    scopes: list[Scope] = []
    items: list[Item] = []
    with MemoryDb(db_path) as db:
        maps = {conv.index: locomo.ingest(db, conv) for conv in convs}
        for conv in convs:
            locomo.rebuild(db, conv, lane)
        questions = [q.query for conv in asked for q in conv.questions]
        vectors: dict[str, list[float]] = {}
        if query_cache is not None and query_cache.exists():
            vectors = pickle.loads(query_cache.read_bytes())
        missing = [query for query in questions if query not in vectors]
        if missing:
            vectors.update(locomo.query_vectors(lane, missing)[0])
            if query_cache is not None:
                query_cache.write_bytes(pickle.dumps(vectors))
        conn = db.conn
        for conv in asked:
            rows = conn.execute(
                _SCOPE_ROWS, (model, version, locomo.TENANT, conv.sample_id)
            ).fetchall()
            position = {rowid: i for i, (_, rowid, _, _, _) in enumerate(rows)}
            times = np.array([r[2] for r in rows])
            session = np.cumsum(np.r_[0, np.diff(times) > SESSION_GAP_SECONDS])
            matrix = np.stack([np.frombuffer(r[4], dtype=np.float32) for r in rows]).astype(
                np.float64
            )
            matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
            turns = [maps[conv.index][r[3]] for r in rows]
            scopes.append(Scope(conv.index, turns, session))
            for q in conv.questions:
                gold = np.array([t in q.gold["original"] for t in turns])
                lexical, own = (
                    bm25_values(conn, q.query, weight, conv.sample_id, position)
                    for weight in (CONTEXT_WEIGHT, 0.0)
                )
                cosine = matrix @ np.asarray(vectors[q.query], dtype=np.float64)
                cosine /= np.linalg.norm(vectors[q.query])
                items.append(Item(q.qid, conv.index, q.category, gold, lexical, own, cosine))
            locomo.log(f"dumped {conv.sample_id}: {len(rows)} captures")
    out.write_bytes(pickle.dumps({"lane": lane, "scopes": scopes, "items": items}))


# ----------------------------------------------------------------------------------------------
# sweep
# ----------------------------------------------------------------------------------------------

Fusion = Callable[[Item, Scope], Floats]


def neighbour_max(values: Floats, session: NDArray[np.intp], window: int) -> Floats:
    """Each position's best value among its up to *window* neighbours each side, same session."""
    best = np.full(len(values), -np.inf)
    for shift in range(1, window + 1):
        for step in (shift, -shift):
            moved = np.roll(values, step)
            same = np.roll(session, step) == session
            if step > 0:
                same[:step] = False
            else:
                same[step:] = False
            best = np.where(same, np.maximum(best, moved), best)
    return np.where(np.isfinite(best), best, 0.0)


def neighbour_mean(values: Floats, session: NDArray[np.intp], window: int) -> Floats:
    total = np.zeros(len(values))
    count = np.zeros(len(values))
    for shift in range(1, window + 1):
        for step in (shift, -shift):
            moved = np.roll(values, step)
            same = np.roll(session, step) == session
            if step > 0:
                same[:step] = False
            else:
                same[step:] = False
            total += np.where(same, moved, 0.0)
            count += same
    return np.where(count > 0, total / np.maximum(count, 1), 0.0)


def lexical_head(values: Floats, depth: int) -> Floats:
    """The lexical scores zkr sees: the first *depth* matches (0 elsewhere)."""
    if depth >= len(values):
        return values
    order = np.argsort(-values, kind="stable")
    kept = np.zeros(len(values))
    kept[order[:depth]] = values[order[:depth]]
    return kept


def evaluate(
    items: Iterable[Item], scopes: dict[int, Scope], fusion: Fusion
) -> dict[str, dict[str, float]]:
    """any@10 / any@50 / MRR (categories 1-4) per split, in %."""
    sums: dict[str, list[float]] = {}
    for item in items:
        if item.category not in CATEGORIES_1_4:
            continue
        scores = fusion(item, scopes[item.conv])
        order = np.argsort(-scores, kind="stable")
        hits = np.flatnonzero(item.gold[order])
        first = int(hits[0]) if len(hits) else 10**9
        split = "dev" if item.conv in locomo.DEV else "held"
        row = sums.setdefault(split, [0.0, 0.0, 0.0, 0.0])
        row[0] += first < 10
        row[1] += first < 50
        row[2] += 1.0 / (first + 1) if first < 10 else 0.0
        row[3] += 1
    return {
        split: {"any10": 100 * a / n, "any50": 100 * b / n, "mrr": c / n}
        for split, (a, b, c, n) in sums.items()
    }


def fmt(result: dict[str, dict[str, float]]) -> str:
    return "  ".join(
        f"{split} {r['any10']:5.1f} {r['any50']:5.1f} {r['mrr']:.3f}"
        for split, r in sorted(result.items())
    )


def zscore(values: Floats) -> Floats:
    scaled: Floats = (values - values.mean()) / (values.std() + 1e-9)
    return scaled


def ranks_of(values: Floats) -> Floats:
    order = np.argsort(-values, kind="stable")
    places = np.empty(len(values))
    places[order] = np.arange(len(values))
    return places


def weighted_rrf(weight: float, k: int, depth: int = 50) -> Fusion:
    """The fusion shipped before: ``1 / (k + rank)`` lexical plus ``weight / (k + rank)`` dense
    over both lists' first *depth* entries."""

    def fusion(item: Item, scope: Scope) -> Floats:
        lexical = lexical_head(item.lexical, depth)
        lexical_rank, dense_rank = ranks_of(lexical), ranks_of(item.dense)
        scores: Floats = np.where(lexical > 0, 1 / (k + 1 + lexical_rank), 0.0) + np.where(
            dense_rank < depth, weight / (k + 1 + dense_rank), 0.0
        )
        return scores

    return fusion


def session_best(values: Floats, session: NDArray[np.intp]) -> Floats:
    """Each position's best value over its session (the captures within the session gap)."""
    best = np.full(int(session.max()) + 1, -np.inf)
    np.maximum.at(best, session, values)
    spread: Floats = best[session]
    return spread


def score_fusion(
    share: float,
    neighbour_weight: float,
    session_weight: float = 0.0,
    date_weight: float = 0.0,
    depth: int = 50,
) -> Fusion:
    """What zkr ships (:mod:`zkr.retrieval.fusion`): over the union of both lists' first
    *depth* entries, ``share * bm25 / best + (1 - share) * (z + neighbour_weight * n) / 4`` with
    ``z`` the dense z-score and ``n`` the mean z of the session neighbours (2 each side), plus
    ``session_weight`` times the best ``bm25 / best`` of the lexical head in the same session
    and ``date_weight`` when the capture lies within a date the question names."""

    def fusion(item: Item, scope: Scope) -> Floats:
        lexical = lexical_head(item.lexical, depth)
        candidate = lexical > 0
        candidate[np.argsort(-item.dense, kind="stable")[:depth]] = True
        dense = zscore(item.dense)
        spread = neighbour_mean(dense, scope.session, 2)
        part = lexical / (lexical.max() or 1.0)
        scores: Floats = (
            share * part + (1 - share) * (dense + neighbour_weight * np.maximum(spread, 0.0)) / 4
        )
        if session_weight:
            scores = scores + session_weight * session_best(part, scope.session)
        if date_weight and item.dated is not None:
            scores = scores + date_weight * item.dated
        return np.where(candidate, scores, -1e9)

    return fusion


def lexical_dated(date_weight: float, depth: int = 50) -> Fusion:
    """The recall lexical ranking as shipped: ``bm25 / best`` of the lexical head, plus
    ``date_weight`` when the capture lies within a date the question names."""

    def fusion(item: Item, scope: Scope) -> Floats:
        lexical = lexical_head(item.lexical, depth)
        part = lexical / (lexical.max() or 1.0)
        if item.dated is not None:
            part = part + date_weight * item.dated
        return np.where(lexical > 0, part, -1e9)

    return fusion


def date_hits(items: list[Item], scopes: dict[int, Scope]) -> None:
    """Mark, per question, the captures within a date it names (zkr's own reading of dates);
    capture times and questions come from the data set, which the pickle does not hold."""
    from zkr.retrieval._query_dates import query_date_spans

    convs = locomo.load(locomo.DEFAULT_DATA, sorted(scopes))
    asked = {q.qid: q.query for conv in convs for q in conv.questions}
    moments = {
        conv.index: dict((turn.dia_id, turn.captured_at) for turn in conv.turns) for conv in convs
    }
    for item in items:
        scope = scopes[item.conv]
        times = np.array([moments[item.conv][turn] for turn in scope.turns])
        dated = np.zeros(len(times), dtype=bool)
        for start, end in query_date_spans(asked[item.qid]):
            dated |= (times >= start) & (times < end)
        item.dated = dated


def sweep(path: Path) -> None:
    data: dict[str, Any] = pickle.loads(path.read_bytes())
    scopes = {scope.index: scope for scope in data["scopes"]}
    items: list[Item] = data["items"]

    def show(name: str, fusion: Fusion) -> None:
        print(f"{name:44s} {fmt(evaluate(items, scopes, fusion))}", flush=True)

    show("lexical (recall index)", lambda item, scope: lexical_head(item.lexical, 50))
    show("dense", lambda item, scope: item.dense)
    show("weighted rrf, dense 0.3, k 10", weighted_rrf(0.3, 10))
    for share in (0.65, 0.7, 0.75):
        for neighbour_weight in (0.0, 0.75, 1.0, 1.25, 1.5):
            show(
                f"scores share {share} neighbours {neighbour_weight}",
                score_fusion(share, neighbour_weight),
            )
    date_hits(items, scopes)
    show("shipped before: share 0.7 neighbours 1.25", score_fusion(0.7, 1.25))
    for share in (0.55, 0.6, 0.65, 0.7):
        for session_weight in (0.0, 0.4, 0.5, 0.6):
            for date_weight in (0.0, 0.6, 1.0, 2.0):
                show(
                    f"share {share} nb 1.25 session {session_weight} date {date_weight}",
                    score_fusion(share, 1.25, session_weight, date_weight),
                )


def windows(db_path: Path, features: Path, specs: list[str]) -> None:
    import shutil
    import sqlite3
    import tempfile

    from zkr.store import recall_index

    data: dict[str, Any] = pickle.loads(features.read_bytes())
    scopes = {scope.index: scope for scope in data["scopes"]}
    items: list[Item] = data["items"]
    date_hits(items, scopes)
    model, version, _ = locomo.LANES[data["lane"]]
    convs = {conv.index: conv for conv in locomo.load(locomo.DEFAULT_DATA, sorted(scopes))}
    asked = {q.qid: q.query for conv in convs.values() for q in conv.questions}

    def show(name: str, fusion: Fusion) -> None:
        print(f"  {name:42s} {fmt(evaluate(items, scopes, fusion))}", flush=True)

    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "windows.db"
        shutil.copyfile(db_path, copy)
        conn = sqlite3.connect(copy)
        positions = {
            index: {
                row[1]: i
                for i, row in enumerate(
                    conn.execute(
                        _SCOPE_ROWS, (model, version, locomo.TENANT, convs[index].sample_id)
                    )
                )
            }
            for index in scopes
        }
        for spec in specs:
            before, after, weight = spec.split(",")
            recall_index.BEFORE, recall_index.AFTER = int(before), int(after)
            recall_index.build_recall_index(conn)
            for item in items:
                item.lexical = bm25_values(
                    conn,
                    asked[item.qid],
                    float(weight),
                    convs[item.conv].sample_id,
                    positions[item.conv],
                )
            print(f"window {before} before / {after} after, context weight {weight}:")
            show("lexical", lambda item, scope: lexical_head(item.lexical, 50))
            show("lexical + date 1.0", lexical_dated(1.0))
            for share in (0.55, 0.6, 0.65):
                for neighbour_weight in (1.0, 1.25):
                    for session_weight in (0.5, 0.6):
                        show(
                            f"share {share} nb {neighbour_weight} session {session_weight} date 1",
                            score_fusion(share, neighbour_weight, session_weight, 1.0),
                        )
        conn.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--db", type=Path, required=True)
    d.add_argument("--out", type=Path, required=True)
    d.add_argument("--lane", default="e5", choices=sorted(locomo.LANES))
    d.add_argument("--query-cache", type=Path, help="pickle of question -> query vector")
    d.add_argument("--conversations", default="0-9", help="whose questions to dump, e.g. 0-4")
    s = sub.add_parser("sweep")
    s.add_argument("--features", type=Path, required=True)
    w = sub.add_parser("windows")
    w.add_argument("--db", type=Path, required=True, help="the store `dump` wrote (copied)")
    w.add_argument("--features", type=Path, required=True)
    w.add_argument("specs", nargs="+", help="before,after,context weight (e.g. 2,1,0.35)")
    args = parser.parse_args(argv)
    if args.command == "dump":
        indexes = locomo.parse_indexes(args.conversations)
        dump(args.db, args.out, args.lane, args.query_cache, indexes)
    elif args.command == "windows":
        windows(args.db, args.features, args.specs)
    else:
        sweep(args.features)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
